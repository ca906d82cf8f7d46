import CamoCodec
import CamoMedia
import Foundation
import Logging

/// Writes one recording into a directory: `video.bgra` (or per-frame hashes), `video.json`,
/// `audio.wav`, `audio.json` (each packet's offset and timestamp), `snapshot.jpg`, and for H.264 `video.mp4` (the
/// stream as received, no re-encode, with the audio in AAC); and keeps the statistics, the transport figures and
/// the A/V analysis as frames and packets pass.
/// Not thread-safe: one owner (the ``Recorder``'s task).
public final class RecordingOutput {
    /// The output directory.
    public let directory: String
    /// Counts so far.
    public private(set) var statistics = RecordingStatistics()
    /// Flash/click analysis so far.
    public private(set) var avSync = AVSyncAnalyzer()
    /// Latency, bitrate, skips and keyframes so far.
    public private(set) var transport = TransportStatistics()
    /// H.264: the MP4 (opened at the first keyframe's size).
    private var mp4: MP4Writer?
    private var mp4Failed = false
    private let writeVideoFile: Bool
    private let codec: String
    private var video: FileHandle?
    private let audio: WAVWriter
    private var frames: [VideoIndex.Frame] = []
    private var packets: [AudioIndex.Packet] = []
    private var audioFrames = 0
    private var size: (width: Int, height: Int)?
    private var lastFrame: VideoFrame?
    private let logger: Logger

    /// Creates `directory` if needed and opens the files. `codec` is what the agent sends.
    public init(directory: String, writeVideoFile: Bool, codec: StudioVideoCodec,
                logger: Logger = Logger(label: "camo.studio.output")) throws {
        self.directory = directory
        self.writeVideoFile = writeVideoFile
        self.codec = codec.rawValue
        self.logger = logger
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if writeVideoFile {
            let path = Self.path(directory, "video.bgra")
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let handle = FileHandle(forWritingAtPath: path)
            else { throw RecorderError.output("cannot create \(path)") }
            video = handle
        } else {
            try? FileManager.default.removeItem(atPath: Self.path(directory, "video.bgra"))
        }
        audio = try WAVWriter(path: Self.path(directory, "audio.wav"))
    }

    deinit {
        try? video?.close()
    }

    /// Records one frame: pixels (tightly packed rows) or their hash, its index entry, the counts, flashes.
    public func add(_ received: ReceivedVideoFrame) throws {
        let frame = received.frame
        if let size, size != (frame.width, frame.height) {
            logger.warning("frame \(received.sequence) is \(frame.width)x\(frame.height), not \(size.width)x\(size.height)")
        }
        if size == nil { size = (frame.width, frame.height) }
        let rowBytes = frame.width * 4
        var hash: String?
        let hasPixels = !frame.data.isEmpty
        if !hasPixels {
            // Not decoded (--no-pixels): only the index entry and the counts.
        } else if let video {
            if frame.bytesPerRow == rowBytes && frame.data.count == rowBytes * frame.height {
                try video.write(contentsOf: frame.data)
            } else {
                var packed: [UInt8] = []
                packed.reserveCapacity(rowBytes * frame.height)
                for row in 0..<frame.height {
                    let start = row * frame.bytesPerRow
                    packed.append(contentsOf: frame.data[start..<start + rowBytes])
                }
                try video.write(contentsOf: packed)
            }
        } else {
            hash = FrameHash.sha256(frame.data, rowBytes: rowBytes, rows: frame.height, stride: frame.bytesPerRow)
        }
        let frameNumber = hasPixels ? TestPattern.readFrameNumber(frame) : nil
        let isNew = !received.isRepeat && !received.isSkipped
        var psnr: Double?
        if received.codec != .bgra, isNew, let frameNumber {
            // The pattern is a pure function of its number: draw it again and compare (lossy codecs only).
            let reference = TestPattern.frame(number: frameNumber, size: frame.size, captureTime: 0)
            psnr = PictureQuality.psnr(frame, reference)
            transport.patternPSNR(psnr!)
        }
        if received.codec == .h264, !received.accessUnit.isEmpty { try writeMP4(received) }
        transport.frame(
            slotTime: received.slotTime, captureTime: received.captureTime, receivedAt: received.receivedAt,
            decodedAt: received.decodedAt, bytes: received.encodedByteCount, isNew: isNew && !received.noSignal,
            isKeyframe: received.isKeyframe, isSkipped: received.isSkipped)
        let flash = hasPixels && TestPattern.isFlash(frame)
        if flash && !received.isRepeat { avSync.addFlash(captureTime: received.captureTime) }
        var record = VideoIndex.Frame(
            sequence: received.sequence, slotTime: received.slotTime, captureTime: received.captureTime,
            repeat: received.isRepeat, frameNumber: frameNumber, flash: flash,
            hash: hash)
        if received.receivedAt > 0 { record.receivedAt = received.receivedAt }
        if received.decodedAt > 0 { record.decodedAt = received.decodedAt }
        record.bytes = received.encodedByteCount
        record.keyframe = received.isKeyframe
        record.skipped = received.isSkipped
        record.patternPSNR = psnr
        let sourceSequence = UInt32(truncatingIfNeeded: frame.sourceSequence)
        record.sourceSequence = sourceSequence
        record.noSignal = received.noSignal
        frames.append(record)
        statistics.recordFrame(
            sequence: received.sequence, slotTime: received.slotTime, isRepeat: received.isRepeat,
            noSignal: received.noSignal, sourceSequence: sourceSequence)
        if hasPixels { lastFrame = frame }
    }

    /// The frame that ends the recording arrived (see ``RecordingStatistics/recordSpanEnd(sequence:slotTime:spanEnd:fps:)``);
    /// it is counted, not written.
    public func noteSpanEnd(_ received: ReceivedVideoFrame, spanEnd: UInt64) {
        statistics.recordSpanEnd(sequence: received.sequence, slotTime: received.slotTime, spanEnd: spanEnd)
    }

    /// Writes an H.264 access unit into `video.mp4` as received (the first one written is a keyframe).
    private func writeMP4(_ received: ReceivedVideoFrame) throws {
        guard !mp4Failed else { return }
        if mp4 == nil {
            guard received.isKeyframe else { return }
            do {
                mp4 = try MP4Writer(path: Self.path(directory, "video.mp4"), width: received.frame.width, height: received.frame.height)
            } catch {
                mp4Failed = true
                logger.error("cannot write video.mp4 (\(error)); the rest of the recording goes on")
                return
            }
        }
        try mp4?.writeVideo(received.accessUnit, isKeyframe: received.isKeyframe, timeNanos: received.captureTime)
    }

    /// A clock sample from a round trip (for the latencies).
    public func addClockSample(offsetNanos: Int64, roundTripNanos: UInt64) {
        transport.clockSample(offsetNanos: offsetNanos, roundTripNanos: roundTripNanos)
    }

    /// A keyframe request went out.
    public func noteKeyframeRequest() { transport.keyframeRequested() }

    /// A new session began (a reconnection).
    public func beginSession() { transport.beginSession() }

    /// The agent's stats arrived at `now` (the studio's clock).
    public func addAgentStats(_ stats: AgentStats, now: UInt64) {
        if let rate = stats.rate, rate.targetBitrate > 0 { transport.agentTarget(bitsPerSecond: rate.targetBitrate, at: now) }
    }

    /// Records one audio packet into the WAV file, the counts and the click detector.
    public func add(_ packet: ReceivedAudioPacket) throws {
        if let mp4 { try mp4.writeAudio(packet.samples, timeNanos: packet.firstSampleTime) }
        try audio.append(float32LittleEndian: packet.data)
        packets.append(AudioIndex.Packet(
            sequence: packet.sequence, frames: packet.sampleFrames, offset: audioFrames, firstSampleTime: packet.firstSampleTime))
        audioFrames += packet.sampleFrames
        avSync.addAudio(firstSampleTime: packet.firstSampleTime, float32LittleEndian: packet.data)
        statistics.recordAudio(sampleFrames: packet.sampleFrames)
    }

    /// Records a keepalive round trip.
    public func addRoundTrip(nanoseconds: UInt64) {
        statistics.recordRoundTrip(nanoseconds: nanoseconds)
    }

    /// Closes the files, writes `video.json`, `audio.json` and `snapshot.jpg` (the last frame, JPEG quality 90).
    /// `fallbackSize` names the size in `video.json` when no frame arrived.
    public func finish(fallbackSize: (width: Int, height: Int)) throws {
        try video?.synchronize()
        try video?.close()
        video = nil
        try audio.finish()
        if let mp4 {
            self.mp4 = nil
            try mp4.finish()
        }
        let size = self.size ?? fallbackSize
        let index = VideoIndex(width: size.width, height: size.height, codec: codec, frames: frames)
        try index.encoded().write(to: URL(fileURLWithPath: Self.path(directory, "video.json")), options: .atomic)
        try AudioIndex(packets: packets).encoded().write(to: URL(fileURLWithPath: Self.path(directory, "audio.json")), options: .atomic)
        if let lastFrame {
            let jpeg = try JPEGEncoder().encode(lastFrame, quality: 90)
            try Data(jpeg).write(to: URL(fileURLWithPath: Self.path(directory, "snapshot.jpg")), options: .atomic)
        } else {
            logger.warning("no video frame arrived; no snapshot.jpg")
        }
    }

    static func path(_ directory: String, _ name: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }
}
