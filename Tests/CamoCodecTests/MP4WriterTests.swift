import CamoCodec
import CamoMedia
import Foundation
import Testing

@Suite("MP4 recording")
struct MP4WriterTests {
    /// The absolute path of `name` on PATH, or nil.
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `tool` with `arguments`; its exit status, standard output and standard error.
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: Data, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, outputData, String(decoding: errorData, as: UTF8.self))
    }

    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("camo-codec-\(UUID().uuidString)-\(name)").path
    }

    @Test("3 s of 720p H.264 and a 440 Hz tone: ffprobe sees h264 1280x720 at 30/1 and AAC 48 kHz stereo, about 3 s; ffmpeg decodes it cleanly")
    func recordsVideoAndAudio() throws {
        let ffprobe = try #require(Self.executable("ffprobe"), "ffprobe is not on PATH; install Debian's ffmpeg package")
        let ffmpeg = try #require(Self.executable("ffmpeg"), "ffmpeg is not on PATH; install Debian's ffmpeg package")
        let path = Self.temporaryPath("av.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }

        let encoder = try H264Encoder(
            settings: H264EncoderSettings(width: 1280, height: 720, bitrate: 2_000_000, kind: .x264), logger: CodecFixture.logger)
        let writer = try MP4Writer(path: path, width: 1280, height: 720)
        // Both streams on one clock that does not start at zero; 20 ms audio chunks (960 samples), as a
        // capture loop delivers them, interleaved with the frames in time order.
        let start: UInt64 = 5_000_000_000
        var audioChunk = 0
        for number in 0..<90 {
            let time = start + UInt64(number) * 1_000_000_000 / 30
            let packet = try #require(try encoder.encode(CodecFixture.pattern(number), forceKeyframe: false))
            try writer.writeVideo(packet.data, isKeyframe: packet.isKeyframe, timeNanos: time)
            while start + UInt64(audioChunk) * 20_000_000 < time + 1_000_000_000 / 30, audioChunk < 150 {
                var samples = [Float](repeating: 0, count: 960 * 2)
                for index in 0..<960 {
                    let t = Double(audioChunk * 960 + index) / 48_000
                    let value = Float(0.5 * sin(2 * Double.pi * 440 * t))
                    samples[2 * index] = value
                    samples[2 * index + 1] = value
                }
                try writer.writeAudio(samples, timeNanos: start + UInt64(audioChunk) * 20_000_000)
                audioChunk += 1
            }
        }
        #expect(audioChunk == 150)
        try writer.finish()
        #expect(writer.skippedBeforeKeyframe == 0)
        #expect(throws: H264Error.self) { try writer.writeVideo([0, 0, 1, 0x65], isKeyframe: true, timeNanos: start) }

        let probe = try Self.run(ffprobe, ["-v", "error", "-show_streams", "-show_format", "-of", "json", path])
        #expect(probe.status == 0, "ffprobe: \(probe.error)")
        let json = try #require(try JSONSerialization.jsonObject(with: probe.output) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        let video = streams.filter { $0["codec_type"] as? String == "video" }
        let audio = streams.filter { $0["codec_type"] as? String == "audio" }
        #expect(video.count == 1 && audio.count == 1 && streams.count == 2)
        let v = try #require(video.first), a = try #require(audio.first)
        #expect(v["codec_name"] as? String == "h264")
        #expect(v["width"] as? Int == 1280 && v["height"] as? Int == 720)
        #expect(v["avg_frame_rate"] as? String == "30/1")
        #expect(v["nb_frames"] as? String == "90")
        #expect(a["codec_name"] as? String == "aac")
        #expect(a["sample_rate"] as? String == "48000")
        #expect(a["channels"] as? Int == 2)
        let videoDuration = try #require(Double(v["duration"] as? String ?? ""))
        let audioDuration = try #require(Double(a["duration"] as? String ?? ""))
        let format = try #require(json["format"] as? [String: Any])
        let duration = try #require(Double(format["duration"] as? String ?? ""))
        print("MP4: video \(videoDuration) s, audio \(audioDuration) s, file \(duration) s")
        #expect(abs(videoDuration - 3) < 0.05)
        #expect(abs(audioDuration - 3) < 0.1)
        #expect(abs(duration - 3) < 0.1)

        let decode = try Self.run(ffmpeg, ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decode.status == 0, "ffmpeg: \(decode.error)")
        #expect(decode.error.isEmpty, "ffmpeg: \(decode.error)")
    }

    @Test("video before the first keyframe is skipped and counted; audio that starts later stays at its time")
    func skipsUntilKeyframe() throws {
        let ffprobe = try #require(Self.executable("ffprobe"), "ffprobe is not on PATH; install Debian's ffmpeg package")
        let path = Self.temporaryPath("late.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = VideoSize(width: 320, height: 180)
        let encoder = try H264Encoder(
            settings: H264EncoderSettings(width: 320, height: 180, bitrate: 500_000, kind: .x264), logger: CodecFixture.logger)
        let writer = try MP4Writer(path: path, width: 320, height: 180)
        _ = try encoder.encode(CodecFixture.pattern(0, size: size), forceKeyframe: false)
        for number in 1..<31 {
            let time = UInt64(number) * 1_000_000_000 / 30
            let packet = try #require(try encoder.encode(CodecFixture.pattern(number, size: size), forceKeyframe: number == 10))
            try writer.writeVideo(packet.data, isKeyframe: packet.isKeyframe, timeNanos: time)
            if number >= 20 {
                try writer.writeAudio([Float](repeating: 0.1, count: 1600 * 2), timeNanos: time)
            }
        }
        #expect(writer.skippedBeforeKeyframe == 9)
        #expect(throws: H264Error.self) { try writer.writeAudio([0.1, 0.2, 0.3], timeNanos: 2_000_000_000) }
        try writer.finish()
        #expect(throws: H264Error.self) { try writer.finish() }

        let probe = try Self.run(ffprobe, ["-v", "error", "-show_streams", "-of", "json", path])
        #expect(probe.status == 0, "ffprobe: \(probe.error)")
        let json = try #require(try JSONSerialization.jsonObject(with: probe.output) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        let video = try #require(streams.first { $0["codec_type"] as? String == "video" })
        let audio = try #require(streams.first { $0["codec_type"] as? String == "audio" })
        #expect(video["nb_frames"] as? String == "21")
        // The audio began 10 frames (1/3 s) after the first video frame written. ffprobe's start time counts
        // the AAC encoder's 1024 samples of priming, which the file's edit list skips on playback.
        let audioStart = try #require(Double(audio["start_time"] as? String ?? ""))
        let videoStart = try #require(Double(video["start_time"] as? String ?? ""))
        print("late audio: video starts at \(videoStart) s, audio at \(audioStart) s (with 1024 samples of priming)")
        #expect(abs((audioStart + 1024.0 / 48_000 - videoStart) - 1.0 / 3) < 0.002)
    }

    /// Writes 4 s of 320x180 H.264 (a keyframe every second) and, with `audio`, a tone beside it.
    static func writeFourSeconds(to path: String, audio: Bool, fragmented: Bool) throws {
        let size = VideoSize(width: 320, height: 180)
        let encoder = try H264Encoder(
            settings: H264EncoderSettings(width: 320, height: 180, bitrate: 400_000, gopFrames: 30, kind: .x264), logger: CodecFixture.logger)
        let writer = try MP4Writer(path: path, width: 320, height: 180, audio: audio, fragmented: fragmented)
        for number in 0..<120 {
            let time = 1_000_000_000 + UInt64(number) * 1_000_000_000 / 30
            let packet = try #require(try encoder.encode(CodecFixture.pattern(number, size: size), forceKeyframe: false))
            try writer.writeVideo(packet.data, isKeyframe: packet.isKeyframe, timeNanos: time)
            try writer.writeAudio([Float](repeating: 0.2, count: 1600 * 2), timeNanos: time)
        }
        try writer.finish()
    }

    /// ffprobe's streams of `path` with their frames counted (fragmented files carry no frame count in the header).
    static func countedStreams(_ path: String) throws -> (status: Int32, error: String, streams: [[String: Any]]) {
        let ffprobe = try #require(Self.executable("ffprobe"), "ffprobe is not on PATH; install Debian's ffmpeg package")
        let probe = try Self.run(ffprobe, ["-v", "error", "-count_frames", "-show_streams", "-of", "json", path])
        let json = (try? JSONSerialization.jsonObject(with: probe.output) as? [String: Any]) ?? [:]
        return (probe.status, probe.error, json["streams"] as? [[String: Any]] ?? [])
    }

    @Test("fragmented (CMAF): ffprobe reads h264 and aac, every frame, the cmfc brand; without audio there is no audio track")
    func fragmentedWithAndWithoutAudio() throws {
        let path = Self.temporaryPath("cmaf.mp4"), silent = Self.temporaryPath("silent.mp4")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: silent)
        }
        try Self.writeFourSeconds(to: path, audio: true, fragmented: true)
        try Self.writeFourSeconds(to: silent, audio: false, fragmented: true)

        let withAudio = try Self.countedStreams(path)
        #expect(withAudio.status == 0, "ffprobe: \(withAudio.error)")
        #expect(withAudio.streams.map { $0["codec_name"] as? String } == ["h264", "aac"])
        #expect(withAudio.streams.first?["nb_read_frames"] as? String == "120")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // ftyp first, with CMAF's brand, an empty moov, then moof/mdat pairs (one fragment per keyframe: 4).
        #expect(bytes.count > 16 && String(decoding: bytes[4..<8], as: UTF8.self) == "ftyp")
        #expect(bytes.range(of: Data("cmfc".utf8)) != nil)
        var fragments = 0
        var search = bytes.startIndex
        while let found = bytes.range(of: Data("moof".utf8), in: search..<bytes.endIndex) {
            fragments += 1
            search = found.upperBound
        }
        #expect(fragments >= 4, "\(fragments) fragments")

        let withoutAudio = try Self.countedStreams(silent)
        #expect(withoutAudio.status == 0, "ffprobe: \(withoutAudio.error)")
        #expect(withoutAudio.streams.map { $0["codec_type"] as? String } == ["video"])
        #expect(withoutAudio.streams.first?["nb_read_frames"] as? String == "120")
    }

    @Test("a fragmented file cut off mid-write (a crash) still plays up to its last whole fragment")
    func truncatedFragmentedPlays() throws {
        let path = Self.temporaryPath("cut.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.writeFourSeconds(to: path, audio: true, fragmented: true)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // Cut in the middle of the third fragment.
        var starts: [Int] = []
        var search = bytes.startIndex
        while let found = bytes.range(of: Data("moof".utf8), in: search..<bytes.endIndex) {
            starts.append(found.lowerBound - 4)
            search = found.upperBound
        }
        try #require(starts.count >= 4)
        let cut = starts[2] + (starts[3] - starts[2]) / 2
        try bytes.prefix(cut).write(to: URL(fileURLWithPath: path))
        let probe = try Self.countedStreams(path)
        #expect(probe.status == 0, "ffprobe: \(probe.error)")
        let video = try #require(probe.streams.first { $0["codec_type"] as? String == "video" })
        let frames = Int(video["nb_read_frames"] as? String ?? "") ?? 0
        print("cut fragmented file: \(frames) of 120 frames readable")
        #expect(frames >= 60 && frames < 120)
    }

    @Test("a full disk (/dev/full): a write fails with the reason, every later write is refused, and the writer goes away cleanly")
    func fullDisk() throws {
        let encoder = try H264Encoder(
            settings: H264EncoderSettings(width: 1280, height: 720, bitrate: 2_000_000, gopFrames: 30, kind: .x264), logger: CodecFixture.logger)
        var failure: H264Error?
        do {
            let writer = try MP4Writer(path: "/dev/full", width: 1280, height: 720, fragmented: true)
            for number in 0..<90 where failure == nil {
                let time = UInt64(number) * 1_000_000_000 / 30
                let packet = try #require(try encoder.encode(CodecFixture.noisyPattern(number), forceKeyframe: false))
                do {
                    try writer.writeVideo(packet.data, isKeyframe: packet.isKeyframe, timeNanos: time)
                    try writer.writeAudio([Float](repeating: 0.2, count: 1600 * 2), timeNanos: time)
                } catch {
                    failure = error
                }
            }
            let later = #expect(throws: H264Error.self) { try writer.writeAudio([Float](repeating: 0, count: 2048), timeNanos: 6_000_000_000) }
            #expect("\(later.map { "\($0)" } ?? "")".contains("earlier write failed"))
            #expect(throws: H264Error.self) { try writer.finish() }
        }
        print("/dev/full: \(failure.map { "\($0)" } ?? "no failure")")
        #expect("\(failure.map { "\($0)" } ?? "")".contains("No space left"), "\(String(describing: failure))")
    }

    @Test("a path that cannot be created is an open error")
    func unwritablePath() {
        let error = #expect(throws: H264Error.self) {
            try MP4Writer(path: "/nonexistent-directory/camo.mp4", width: 320, height: 180)
        }
        guard case .open = error else {
            Issue.record("\(String(describing: error))")
            return
        }
    }
}
