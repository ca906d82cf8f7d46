import CamoCodec
import CamoMedia
import CamoWire
import Foundation
import FuzzSupport
import Logging

@testable import CamoStudioKit

// The studio's H.264 receive path on what an agent sends: video messages with access units (Annex B), keyframe and
// repeat flags and sequence numbers, through the studio's receiver (libavcodec's decoder, then our conversion of its
// picture to BGRA, the last picture kept for repeats, the keyframe requests) and its receiver report, in the order
// the studio's handler calls them. libavcodec parses the NAL units (C, not instrumented); ours is everything around it.
//
// Input: video messages, each [flags: u8 (VideoFlags)][sequence step: u8][length: u16 big-endian][access unit].

let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

struct Unit {
    var flags: UInt8
    var step: UInt8
    var data: [UInt8]

    var encoded: [UInt8] { [flags, step, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data }
}

func units(_ bytes: UnsafeBufferPointer<UInt8>) -> [Unit] {
    var result: [Unit] = []
    var at = 0
    while at + 4 <= bytes.count, result.count < 64 {
        let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        let end = min(at + 4 + length, bytes.count)
        result.append(Unit(flags: bytes[at], step: bytes[at + 1], data: Array(bytes[(at + 4)..<end])))
        at = end
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH264Receive(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let receiver = H264Receiver(logger: logger)
    var reports = ReceiverReportBuilder(now: 0)
    var sequence: UInt32 = 0
    var last: UInt32?
    var now: UInt64 = 0
    for unit in units(UnsafeBufferPointer(start: start, count: count)) {
        sequence &+= UInt32(unit.step)
        now += 33_333_333
        let video = VideoMessage(
            sequence: sequence, codec: .h264, flags: VideoFlags(rawValue: unit.flags), width: 0, height: 0, bytesPerRow: 0,
            slotTime: now, captureTime: now, sourceSequence: sequence, data: unit.data)
        var gap = false
        if let last, sequence &- last > 1, sequence &- last < 1 << 31 { gap = true }
        last = sequence
        reports.video(sequence: sequence, captureTime: now, bytes: video.encodedLength, now: now)
        if case .picture(let picture, _) = receiver.receive(video, gap: gap) {
            precondition(picture.data.count >= picture.bytesPerRow * picture.height, "a picture shorter than its rows")
        }
        _ = receiver.shouldRequestKeyframe(now: now)
    }
    _ = reports.take(now: now)
    return 0
}

/// Seeds: access units from the agent's own encoders (x264 through libavcodec, and openh264) of a moving gradient, at a
/// size that is a multiple of 16 and one that needs cropping, with repeats, a skip and a gap between them.
func writeSeeds() throws {
    for (kind, name) in [(H264EncoderKind.x264, "x264"), (.openh264, "openh264")] {
        for (width, height) in [(64, 48), (98, 54)] {
            let encoder = try H264Encoder(
                settings: H264EncoderSettings(width: width, height: height, bitrate: 200_000, gopFrames: 4, kind: kind), logger: logger)
            var seed: [UInt8] = []
            for index in 0..<6 {
                let stride = width * 4
                let pixels = (0..<(stride * height)).map { UInt8(truncatingIfNeeded: $0 / 4 + index * 9 + ($0 % 4) * 50) }
                let frame = VideoFrame(width: width, height: height, bytesPerRow: stride, data: pixels, captureTime: UInt64(index))
                guard let packet = try encoder.encode(frame, forceKeyframe: index == 0) else { continue }
                seed += Unit(flags: packet.isKeyframe ? VideoFlags.keyframe.rawValue : 0, step: index == 4 ? 2 : 1, data: packet.data).encoded
                if index == 1 { seed += Unit(flags: VideoFlags.repeat.rawValue, step: 1, data: []).encoded }
                if index == 2 { seed += Unit(flags: VideoFlags.skipped.rawValue, step: 1, data: []).encoded }
            }
            FuzzSeeds.write(seed, name: "\(name)-\(width)x\(height)")
        }
    }
}

if FuzzSeeds.directory != nil {
    do { try writeSeeds() } catch { fatalError("seeds: \(error)") }
    exit(0)
}

runFuzzDriver { fuzzH264Receive($0, $1) }
