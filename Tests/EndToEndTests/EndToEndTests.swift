import Foundation
import Testing

/// The real agent and studio processes on loopback, with the real clock (margins as the issue sets them).
/// Serialized: each test runs agents and studios that want the CPU for themselves.
@Suite("End to end: camo-agent and camo-studio over loopback", .serialized, .timeLimit(.minutes(3)))
struct EndToEndTests {
    private struct VideoIndex: Decodable {
        struct Frame: Decodable {
            var sequence: Int
            var slotTime: UInt64
            var captureTime: UInt64
            var frameNumber: Int?
            var `repeat`: Bool
        }
        var width: Int
        var height: Int
        var frames: [Frame]
    }

    @Test("10 s of test pattern and tone arrive whole", arguments: ["bgra", "jpeg"])
    func tenSecondsArriveWhole(codec: String) throws {
        let scratch = try Scratch("record-\(codec)")
        let agent = try AgentProcess(scratch: scratch)
        defer { agent.stop() }
        let studio = try StudioProcess(
            scratch: scratch, name: "studio", port: agent.port,
            arguments: ["--seconds", "10", "--samples", "1024", "--size", "640x360", "--codec", codec])
        let summary = try studio.summary()
        let out = studio.out

        // Video: 300 ± 3 frames whose decoded frame numbers advance by one, at most 3 repeats.
        let frames = try #require(summary["frames"] as? Int)
        #expect((297...303).contains(frames), "frames: \(frames); summary \(summary)")
        #expect(summary["codec"] as? String == codec)
        let index = try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/video.json")))
        #expect(index.width == 640 && index.height == 360)
        let numbers = index.frames.compactMap(\.frameNumber)
        #expect(numbers.count == index.frames.count, "every frame's number must read back")
        let steps = zip(numbers, numbers.dropFirst()).map { $1 - $0 }
        let repeats = steps.filter { $0 == 0 }.count
        // A late wake-up of the source on a loaded machine puts two frames into one slot: the slot before repeats
        // and the older frame is skipped. So a skip of one frame is allowed where a repeat paid for it, no more.
        let skipped = steps.filter { $0 > 1 }.reduce(0) { $0 + Int($1) - 1 }
        #expect(steps.allSatisfy { $0 <= 2 }, "frame numbers jump: \(Set(steps))")
        #expect(skipped <= repeats, "\(skipped) frames skipped but only \(repeats) repeats: frames were lost")
        #expect(repeats <= 3, "\(repeats) repeated frames")
        // Slot times step evenly by 1/30 s.
        let slotSteps = zip(index.frames, index.frames.dropFirst()).map { Int64($1.slotTime) - Int64($0.slotTime) }
        #expect(slotSteps.allSatisfy { step in
            let slots = (Double(step) / (1e9 / 30)).rounded()
            return slots >= 1 && abs(Double(step) - slots * 1e9 / 30) <= 1.5
        }, "uneven slot times")
        if codec == "bgra" {
            let size = try FileManager.default.attributesOfItem(atPath: out + "/video.bgra")[.size] as? Int
            #expect(size == frames * 640 * 360 * 4)
        }

        // Audio: only 1024-frame packets adding up to 10 s ± two packets. The window is 10 s of video slot time;
        // audio runs about half a slot (the pacer's capture-time allowance) plus a JPEG encode ahead of video, so
        // one more packet can land inside it. Lost or doubled samples are caught exactly by the sine fit below.
        #expect(summary["smallestPacket"] as? Int == 1024)
        #expect(summary["largestPacket"] as? Int == 1024)
        let sampleFrames = try #require(summary["sampleFrames"] as? Int)
        #expect(abs(sampleFrames - 480_000) <= 2048, "sample frames: \(sampleFrames)")
        #expect(sampleFrames % 1024 == 0)

        // Audio: a continuous-phase 1 kHz / 2 kHz sine away from the clicks (no sample lost or doubled).
        let tone = try ToneCheck(wavPath: out + "/audio.wav")
        #expect(tone.sampleFrames == sampleFrames)
        let left = tone.fit(channel: 0, frequency: 1_000)
        let right = tone.fit(channel: 1, frequency: 2_000)
        let expectedAmplitude = pow(10, -12.0 / 20)
        #expect(abs(left.amplitude - expectedAmplitude) < 0.001, "left amplitude \(left.amplitude)")
        #expect(abs(right.amplitude - expectedAmplitude) < 0.001, "right amplitude \(right.amplitude)")
        #expect(left.worstBlockResidualDB < -60, "left residual \(left.worstBlockResidualDB) dBFS")
        #expect(right.worstBlockResidualDB < -60, "right residual \(right.worstBlockResidualDB) dBFS")
        let clicks = tone.clicks()
        #expect((9...11).contains(clicks.count), "clicks: \(clicks.count)")

        // A/V: the flash and the click line up within one frame.
        let offset = try #require(summary["avOffsetMs"] as? Double, "no A/V offset in \(summary)")
        #expect(abs(offset) <= 1000.0 / 30, "A/V offset \(offset) ms")

        // The snapshot decodes, by an independent decoder.
        if let ffprobe = tool("ffprobe") {
            let probe = try run(ffprobe, ["-v", "error", "-show_entries", "stream=width,height,codec_name", "-of", "csv=p=0", out + "/snapshot.jpg"])
            #expect(probe.status == 0, "ffprobe: \(probe.stderr)")
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,640,360")
        }
        if let soxi = tool("soxi") {
            let info = try run(soxi, ["-r", out + "/audio.wav"])
            #expect(info.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "48000", "soxi: \(info.stderr)")
        }
    }

    @Test("A studio killed with SIGKILL is cleaned up and the next one is served")
    func killedStudioIsCleanedUp() throws {
        let scratch = try Scratch("sigkill")
        let agent = try AgentProcess(scratch: scratch)
        defer { agent.stop() }
        let doomed = try StudioProcess(
            scratch: scratch, name: "doomed", port: agent.port,
            arguments: ["--seconds", "60", "--samples", "480", "--size", "640x360", "--no-video-file"])
        try waitFor("the first studio to connect") { try connectionCount(agent) == 1 }
        Thread.sleep(forTimeInterval: 1)
        doomed.signal(SIGKILL)
        try waitFor("the agent to notice the killed studio") { try connectionCount(agent) == 0 }
        #expect(agent.process.isRunning)
        let next = try StudioProcess(
            scratch: scratch, name: "next", port: agent.port,
            arguments: ["--seconds", "3", "--samples", "480", "--size", "640x360", "--no-video-file"])
        let summary = try next.summary()
        let frames = try #require(summary["frames"] as? Int)
        #expect((87...93).contains(frames), "next studio got \(frames) frames")
        #expect(summary["smallestPacket"] as? Int == 480 && summary["largestPacket"] as? Int == 480)
    }

    @Test("A studio that stops reading for 10 s: memory stays bounded, another studio keeps 30 fps")
    func stalledStudioDoesNotHurtOthers() throws {
        let scratch = try Scratch("stall")
        let agent = try AgentProcess(scratch: scratch)
        defer { agent.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        let baseline = agent.residentKiB
        let stalled = try StudioProcess(
            scratch: scratch, name: "stalled", port: agent.port,
            arguments: ["--seconds", "60", "--samples", "1024", "--size", "1280x720", "--codec", "bgra", "--no-video-file"])
        try waitFor("the stalled studio to connect") { try connectionCount(agent) == 1 }
        Thread.sleep(forTimeInterval: 1)
        stalled.signal(SIGSTOP)
        defer { stalled.signal(SIGCONT) }
        let healthy = try StudioProcess(
            scratch: scratch, name: "healthy", port: agent.port,
            arguments: ["--seconds", "10", "--samples", "1024", "--size", "640x360", "--codec", "bgra", "--no-video-file"])
        var peak = baseline
        while healthy.process.isRunning {
            peak = max(peak, agent.residentKiB)
            Thread.sleep(forTimeInterval: 0.1)
        }
        let summary = try healthy.summary()
        let frames = try #require(summary["frames"] as? Int)
        #expect((297...303).contains(frames), "healthy studio got \(frames) frames: \(summary)")
        #expect((summary["dropped"] as? Int ?? 99) <= 3, "healthy studio: \(summary)")
        #expect(peak - baseline < 64 * 1024, "agent memory grew \((peak - baseline) / 1024) MB (from \(baseline / 1024) MB)")
        // The stalled studio was ended with an error after the stall deadline; the agent said why in its log.
        #expect(agent.log.contains("stopped reading"), "agent log: \(agent.log.suffix(2000))")
        #expect(agent.process.isRunning)
    }

    // MARK: Helpers

    private func connectionCount(_ agent: AgentProcess) throws -> Int {
        (try agent.status()["connections"] as? [Any])?.count ?? -1
    }

}
