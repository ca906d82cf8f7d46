import CamoStudioKit
import Foundation
import Testing

@Suite("WAV writer")
struct WAVWriterTests {
    @Test("header bytes match the float32 layout with a fact chunk")
    func headerBytes() {
        let header = WAVHeader(channels: 2, sampleRate: 48_000, sampleFrames: 1000).encoded()
        #expect(header.count == WAVHeader.byteCount)
        let expected: [UInt8] =
            Array("RIFF".utf8) + le32(50 + 8000) + Array("WAVE".utf8)
            + Array("fmt ".utf8) + le32(18) + le16(3) + le16(2) + le32(48_000) + le32(384_000) + le16(8) + le16(32) + le16(0)
            + Array("fact".utf8) + le32(4) + le32(1000)
            + Array("data".utf8) + le32(8000)
        #expect(header == expected)
    }

    @Test("written file rereads with patched sizes and exact samples")
    func writeAndReread() throws {
        let path = temporaryPath("reread.wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let samples = testSamples(frames: 4800)
        let writer = try WAVWriter(path: path)
        try writer.append(samples: Array(samples[0..<4000]))
        try writer.append(float32LittleEndian: littleEndianBytes(Array(samples[4000...])))
        #expect(writer.sampleFrames == 4800)
        try writer.finish()
        #expect(throws: WAVError.finished) { try writer.append(samples: [0, 0]) }

        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.count == WAVHeader.byteCount + 4800 * 8)
        #expect(Array(bytes[0..<WAVHeader.byteCount]) == WAVHeader(sampleFrames: 4800).encoded())
        let wav = try WAVReader(bytes: bytes)
        #expect(wav.header == WAVHeader(channels: 2, sampleRate: 48_000, sampleFrames: 4800))
        #expect(wav.factSampleFrames == 4800)
        #expect(wav.samples == samples)
    }

    @Test("partial sample frames are refused")
    func partialFrame() throws {
        let path = temporaryPath("partial.wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try WAVWriter(path: path)
        #expect(throws: WAVError.partialSampleFrame(byteCount: 12, blockAlign: 8)) {
            try writer.append(float32LittleEndian: [UInt8](repeating: 0, count: 12))
        }
        try writer.finish()
    }

    @Test("an unfinished file still parses as empty")
    func unfinishedIsEmpty() throws {
        let bytes = WAVHeader().encoded() + littleEndianBytes([0.5, -0.5])
        let wav = try WAVReader(bytes: bytes)
        #expect(wav.header.sampleFrames == 0)
        #expect(wav.samples.isEmpty)
    }

    @Test("soxi reads the file as 2 ch, 48 kHz, 32-bit float")
    func soxiReadsIt() throws {
        guard let soxi = ExternalTool.find("soxi", package: "sox") else { return }
        let path = try writeToneFile("soxi.wav", frames: 48_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try ExternalTool.run(soxi, ["-r", path]) == "48000")
        #expect(try ExternalTool.run(soxi, ["-c", path]) == "2")
        #expect(try ExternalTool.run(soxi, ["-b", path]) == "32")
        #expect(try ExternalTool.run(soxi, ["-s", path]) == "48000")
        #expect(try ExternalTool.run(soxi, ["-e", path]) == "Floating Point PCM")
    }

    @Test("ffprobe reads the file as pcm_f32le, 2 ch, 48 kHz")
    func ffprobeReadsIt() throws {
        guard let ffprobe = ExternalTool.find("ffprobe", package: "ffmpeg") else { return }
        let path = try writeToneFile("ffprobe.wav", frames: 24_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try ExternalTool.run(ffprobe, [
            "-v", "error", "-select_streams", "a:0",
            "-show_entries", "stream=codec_name,sample_rate,channels,duration_ts",
            "-of", "default=noprint_wrappers=1", path,
        ])
        let fields = Set(output.split(separator: "\n").map(String.init))
        #expect(fields == ["codec_name=pcm_f32le", "sample_rate=48000", "channels=2", "duration_ts=24000"])
    }

    private func writeToneFile(_ name: String, frames: Int) throws -> String {
        let path = temporaryPath(name)
        let writer = try WAVWriter(path: path)
        try writer.append(samples: testSamples(frames: frames))
        try writer.finish()
        return path
    }
}

/// Samples that are exact in float32 and differ per channel and frame.
func testSamples(frames: Int) -> [Float] {
    (0..<frames).flatMap { i -> [Float] in
        let v = Float(i % 200) / 400
        return [v, -v]
    }
}

func littleEndianBytes(_ samples: [Float]) -> [UInt8] {
    samples.flatMap { le32($0.bitPattern) }
}

func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)] }
func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }

func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("camo-studio-\(UUID().uuidString)-\(name)").path
}
