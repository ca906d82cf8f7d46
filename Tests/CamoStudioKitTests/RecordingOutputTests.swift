import CamoStudioKit
import Foundation
import Testing

@Suite("Recording output")
struct RecordingOutputTests {
    private func frame(_ sequence: UInt32, width: Int = 4, height: Int = 2, stride: Int = 20, fill: UInt8) -> ReceivedVideoFrame {
        var bgra = [UInt8](repeating: 0xEE, count: stride * height)   // 0xEE = row padding
        for row in 0..<height { for i in 0..<width * 4 { bgra[row * stride + i] = fill } }
        return ReceivedVideoFrame(sequence: sequence, slotTime: UInt64(sequence) * 33_333_333, captureTime: 7 + UInt64(sequence),
                                  isRepeat: sequence == 3, width: width, height: height, bytesPerRow: stride, bgra: bgra)
    }

    @Test("frames without pixels (--no-pixels) are counted and indexed with their source sequence; nothing is hashed")
    func withoutPixels() throws {
        let directory = temporaryPath("rec-nopix")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try RecordingOutput(directory: directory, writeVideoFile: false, codec: .jpeg)
        for sequence in UInt32(0)..<3 {
            try output.add(ReceivedVideoFrame(
                sequence: sequence, slotTime: UInt64(sequence) * 33_333_333, captureTime: 1, isRepeat: false, noSignal: sequence == 2,
                codec: .jpeg, encodedByteCount: 100,
                frame: .init(width: 640, height: 360, bytesPerRow: 0, data: [], captureTime: 1, sourceSequence: 40 + UInt64(sequence))))
        }
        try output.finish(fallbackSize: (1280, 720))
        let index = try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/video.json")))
        #expect(index.frames.map(\.sourceSequence) == [40, 41, 42])
        #expect(index.frames.map(\.noSignal) == [false, false, true])
        #expect(index.frames.allSatisfy { $0.hash == nil && $0.frameNumber == nil })
        #expect(output.statistics.sourceFrames == 2 && output.statistics.noSignal == 1)
        #expect(!FileManager.default.fileExists(atPath: directory + "/snapshot.jpg"))
    }

    @Test("files: tightly packed video, index with nulls, WAV, snapshot")
    func files() throws {
        let directory = temporaryPath("rec")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try RecordingOutput(directory: directory, writeVideoFile: true, codec: .bgra)
        try output.add(frame(1, fill: 0x11))
        try output.add(frame(3, fill: 0x33))
        try output.add(ReceivedAudioPacket(sequence: 0, firstSampleTime: 0, sampleFrames: 2, data: littleEndianBytes([0.1, 0.2, 0.3, 0.4])))
        try output.finish(fallbackSize: (1280, 720))

        let video = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/video.bgra")))
        #expect(video == [UInt8](repeating: 0x11, count: 32) + [UInt8](repeating: 0x33, count: 32))

        let index = try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/video.json")))
        #expect(index.width == 4 && index.height == 2 && index.codec == "bgra" && index.frameCount == 2)
        #expect(index.frames.map(\.sequence) == [1, 3])
        #expect(index.frames.map(\.repeat) == [false, true])
        #expect(index.frames.allSatisfy { $0.hash == nil && !$0.flash })
        let json = try String(contentsOfFile: directory + "/video.json", encoding: .utf8)
        #expect(json.contains("\"frameNumber\" : null"))

        #expect(output.statistics.frames == 2 && output.statistics.dropped == 1 && output.statistics.repeated == 1)
        #expect(output.statistics.sampleFrames == 2)
        let wav = try WAVReader(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/audio.wav"))))
        #expect(wav.samples == [0.1, 0.2, 0.3, 0.4])
        let snapshot = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/snapshot.jpg")))
        #expect(snapshot.starts(with: [0xFF, 0xD8]))
    }

    @Test("without a video file, frames carry a hash of their pixels")
    func hashes() throws {
        let directory = temporaryPath("rec-hash")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try RecordingOutput(directory: directory, writeVideoFile: false, codec: .jpeg)
        try output.add(frame(1, fill: 0x11))
        try output.add(frame(2, stride: 16, fill: 0x11))
        try output.finish(fallbackSize: (1280, 720))
        #expect(!FileManager.default.fileExists(atPath: directory + "/video.bgra"))
        let index = try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/video.json")))
        let hashes = index.frames.compactMap(\.hash)
        #expect(hashes.count == 2)
        #expect(hashes[0] == hashes[1])   // same pixels, different stride
        #expect(hashes[0] == FrameHash.sha256([UInt8](repeating: 0x11, count: 32), rowBytes: 32, rows: 1, stride: 32))
    }

    @Test("no frames: the index names the fallback size and there is no snapshot")
    func empty() throws {
        let directory = temporaryPath("rec-empty")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try RecordingOutput(directory: directory, writeVideoFile: true, codec: .jpeg)
        try output.finish(fallbackSize: (640, 360))
        let index = try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/video.json")))
        #expect(index.width == 640 && index.height == 360 && index.frameCount == 0)
        #expect(!FileManager.default.fileExists(atPath: directory + "/snapshot.jpg"))
    }
}
