import Foundation
import Testing

/// H.264 between the real agent and studio on loopback: the frames arrive whole and look like the pattern, the MP4
/// plays in ffprobe and ffmpeg, a damaged stream heals within a second, and a 1.0-style studio (bgra/jpeg) is
/// served as before (EndToEndTests).
@Suite("End to end: H.264 over loopback", .serialized, .timeLimit(.minutes(3)))
struct H264EndToEndTests {
    private struct VideoIndex: Decodable {
        struct Frame: Decodable {
            var sequence: Int
            var slotTime: UInt64
            var captureTime: UInt64
            var frameNumber: Int?
            var `repeat`: Bool
            var skipped: Bool?
            var keyframe: Bool?
            var receivedAt: UInt64?
            var decodedAt: UInt64?
            var patternPSNR: Double?
        }
        var width: Int
        var height: Int
        var codec: String
        var frames: [Frame]
    }

    private func index(_ out: String) throws -> VideoIndex {
        try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/video.json")))
    }

    @Test("10 s of 1280x720 H.264 at 4 Mb/s: 300 ± 3 frames in order, PSNR ≥ 38 dB, an MP4 that ffprobe and ffmpeg read")
    func tenSecondsOf720p() throws {
        let scratch = try Scratch("h264")
        // The rate control may only choose 4 Mb/s here (floor just below the ceiling): the quality is judged at 4 Mb/s.
        let agent = try AgentProcess(scratch: scratch, extra: ["--min-bitrate-kbps", "3999", "--max-bitrate-kbps", "4000"])
        defer { agent.stop() }
        let studio = try StudioProcess(
            scratch: scratch, name: "studio", port: agent.port,
            arguments: ["--seconds", "10", "--samples", "1024", "--size", "1280x720", "--codec", "h264", "--no-video-file"])
        let summary = try studio.summary()
        #expect(summary["codec"] as? String == "h264", "\(summary)")
        let frames = try #require(summary["frames"] as? Int)
        #expect((297...303).contains(frames), "frames: \(frames); summary \(summary)")
        let index = try index(studio.out)
        #expect(index.width == 1280 && index.height == 720 && index.codec == "h264")

        // Every picture shown reads back its number; numbers advance by one, except where the agent repeated (no
        // new frame: the same number again) or skipped before its encoder (counted), as in the bgra/jpeg test.
        #expect(index.frames.allSatisfy { $0.frameNumber != nil }, "a picture did not read back: it was damaged")
        let numbers = index.frames.compactMap(\.frameNumber)
        let steps = zip(numbers, numbers.dropFirst()).map { $1 - $0 }
        let repeats = steps.filter { $0 == 0 }.count
        let skippedSlots = index.frames.filter { $0.skipped == true }.count
        let jumped = steps.filter { $0 > 1 }.reduce(0) { $0 + $1 - 1 }
        #expect(steps.allSatisfy { $0 >= 0 && $0 <= 2 }, "frame numbers jump: \(Set(steps))")
        #expect(jumped <= repeats, "\(jumped) frames missing but only \(repeats) repeats or skips paid for them")
        #expect(repeats - skippedSlots <= 3, "\(repeats) repeated pictures, \(skippedSlots) of them skips")
        let transport = try #require(summary["transport"] as? [String: Any], "\(summary)")
        #expect(transport["skipped"] as? Int == skippedSlots, "the summary counts the skips: \(transport)")

        // Quality: PSNR against the pattern drawn again from each frame's number. The first keyframe starts the rate
        // control cold, so the figure is the mean, and 95 % of frames must reach it on their own.
        let psnrs = index.frames.compactMap(\.patternPSNR)
        let mean = psnrs.reduce(0, +) / Double(max(1, psnrs.count))
        let good = psnrs.filter { $0 >= 38 }.count
        print("H.264 720p at 4 Mb/s: mean PSNR \(String(format: "%.1f", mean)) dB over \(psnrs.count) frames, \(good) at ≥ 38 dB; transport \(transport)")
        #expect(psnrs.count >= 290, "PSNR measured on \(psnrs.count) frames")
        #expect(mean >= 38, "mean PSNR \(mean) dB")
        #expect(Double(good) >= 0.95 * Double(psnrs.count), "\(good) of \(psnrs.count) frames at ≥ 38 dB")
        let mbps = (transport["meanBitrateKbps"] as? Double ?? 0) / 1000
        #expect(mbps <= 4.4, "the stream used \(mbps) Mb/s at a 4 Mb/s target")

        // Latency figures exist and are sane on loopback (same clock: the offset is within the round trip).
        let receive = try #require(transport["captureToReceiveMs"] as? [String: Any])
        let decoded = try #require(transport["captureToDecodedMs"] as? [String: Any])
        #expect((receive["p50"] as? Double ?? -1) >= 0 && (receive["p99"] as? Double ?? 1e9) < 1000, "\(receive)")
        #expect((decoded["p50"] as? Double ?? -1) >= (receive["p50"] as? Double ?? 0), "decoding comes after receipt: \(transport)")
        #expect(abs(transport["clockOffsetMs"] as? Double ?? 99) < 5, "one machine, one clock: \(transport)")
        #expect(index.frames.allSatisfy { ($0.receivedAt ?? 0) > 0 && ($0.decodedAt ?? 0) >= ($0.receivedAt ?? 0) })

        // The MP4 holds the stream as received, with the audio, and independent tools read it.
        let mp4 = studio.out + "/video.mp4"
        if let ffprobe = tool("ffprobe") {
            let probe = try run(ffprobe, [
                "-v", "error", "-show_entries", "stream=codec_type,codec_name,width,height,r_frame_rate,sample_rate,channels",
                "-show_entries", "format=duration", "-of", "json", mp4,
            ])
            #expect(probe.status == 0, "ffprobe: \(probe.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any] ?? [:]
            let streams = json["streams"] as? [[String: Any]] ?? []
            let video = streams.first { $0["codec_type"] as? String == "video" }
            let audio = streams.first { $0["codec_type"] as? String == "audio" }
            #expect(video?["codec_name"] as? String == "h264" && video?["width"] as? Int == 1280 && video?["height"] as? Int == 720,
                    "\(probe.stdout)")
            #expect(video?["r_frame_rate"] as? String == "30/1", "\(probe.stdout)")
            #expect(audio?["sample_rate"] as? String == "48000" && audio?["channels"] as? Int == 2, "\(probe.stdout)")
            let duration = Double((json["format"] as? [String: Any])?["duration"] as? String ?? "") ?? 0
            #expect(abs(duration - 10) < 0.7, "MP4 duration \(duration) s")
        }
        if let ffmpeg = tool("ffmpeg") {
            let decode = try run(ffmpeg, ["-v", "error", "-i", mp4, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg decoding the MP4: \(decode.stderr)")
        }
    }

    @Test("Damaged H.264: the studio asks for a keyframe and shows a clean picture again within 1 s, every time")
    func damagedStreamHeals() throws {
        let scratch = try Scratch("h264-damage")
        let agent = try AgentProcess(scratch: scratch)
        defer { agent.stop() }
        // Every 40th non-keyframe access unit is damaged on arrival (bytes flipped, the end cut off).
        let studio = try StudioProcess(
            scratch: scratch, name: "studio", port: agent.port,
            arguments: ["--seconds", "8", "--size", "640x360", "--codec", "h264", "--no-video-file", "--damage-h264-every", "40"])
        let summary = try studio.summary()
        let transport = try #require(summary["transport"] as? [String: Any], "\(summary)")
        let index = try index(studio.out)
        let requests = transport["keyframeRequests"] as? Int ?? 0
        #expect(requests >= 4, "the studio asked for \(requests) keyframes: \(transport)")
        // No damaged picture was shown: every frame reads its number back.
        let unreadable = index.frames.filter { $0.frameNumber == nil }.map(\.sequence)
        #expect(unreadable.isEmpty, "pictures shown damaged at slots \(unreadable)")
        // Each hole (the damaged frame and what depended on it) closes within 1 s of slot time, at a keyframe.
        var holes: [Double] = []
        for (before, after) in zip(index.frames, index.frames.dropFirst()) where after.sequence - before.sequence > 1 {
            holes.append(Double(after.slotTime - before.slotTime) / 1e6)
            #expect(after.keyframe == true, "the picture after a hole at slot \(after.sequence) is not a keyframe")
        }
        print("H.264 damage: \(requests) keyframe requests, holes (ms): \(holes.map { Int($0) })")
        #expect(holes.count >= 4, "\(holes.count) holes for \(requests) requests")
        #expect(holes.allSatisfy { $0 <= 1_000 }, "a hole lasted longer than 1 s: \(holes)")
        #expect(agent.process.isRunning, "the agent survived")
        #expect((summary["frames"] as? Int ?? 0) >= 200, "\(summary)")
    }
}
