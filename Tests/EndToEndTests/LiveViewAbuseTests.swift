import CamoMedia
import Foundation
import Testing

/// The HTTPS API under bad input and the RTSP server for NVRs, while a studio records: it must keep 30 fps.
@Suite("Live view: bad input and RTSP while a studio records", .serialized)
struct LiveViewAbuseTests {
    /// `curl -sk` with `arguments`; returns (HTTP status, body). `-w` appends the status on its own line.
    static func curl(_ arguments: [String]) throws -> (status: Int, body: String) {
        let output = try run("/usr/bin/curl", ["-sk", "--max-time", "20", "-w", "\n%{http_code}"] + arguments)
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
    }

    static func mint(_ agent: AgentProcess, name: String) throws -> (id: String, token: String) {
        let output = try run(try Binaries.path("camo-agent"), ["web", "token", "--name", name, "--state-dir", agent.stateDir])
        var id = "", token = ""
        for line in output.stdout.split(separator: "\n") {
            if line.hasPrefix("token ") { token = String(line.dropFirst(6)) }
            if line.hasPrefix("id ") { id = String(line.dropFirst(3).split(separator: " ").first ?? "") }
        }
        guard !token.isEmpty, !id.isEmpty else { throw CheckError("camo-agent web token printed: \(output.stdout) \(output.stderr)") }
        return (id, token)
    }

    /// Glass-to-NVR latency: ffmpeg pulls RTSP for `seconds` and writes raw BGRA frames to a pipe; each frame's
    /// number (the synthetic pattern's code row) and the moment it came out of the pipe (CLOCK_MONOTONIC, the
    /// agent's clock too) against the frame's capture time, from the agent's reference frame in its status.
    static func rtspLatencies(ffmpeg: String, url: String, agent: AgentProcess, seconds: Int) throws -> [Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-v", "error", "-rtsp_transport", "tcp", "-fflags", "nobuffer", "-flags", "low_delay", "-max_delay", "0", "-reorder_queue_size", "0", "-i", url,
                             "-t", "\(seconds)", "-an", "-f", "rawvideo", "-pix_fmt", "bgra", "-s", "640x360", "-flush_packets", "1", "pipe:1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let frameBytes = 640 * 360 * 4
        var buffer = Data()
        var arrivals: [(number: UInt64, at: Double)] = []
        let handle = pipe.fileHandleForReading
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while buffer.count >= frameBytes {
                let at = LiveViewEndToEndTests.CPUSampler.now() * 1e9
                let frame = VideoFrame(width: 640, height: 360, bytesPerRow: 640 * 4, data: [UInt8](buffer.prefix(frameBytes)), captureTime: 0)
                buffer.removeFirst(frameBytes)
                if let number = TestPattern.readFrameNumber(frame) { arrivals.append((number, at)) }
            }
        }
        process.waitUntilExit()
        let live = try agent.status()["live"] as? [String: Any] ?? [:]
        guard let sequence = (live["lastFrameSequence"] as? NSNumber)?.doubleValue,
            let capture = (live["lastFrameCaptureTime"] as? NSNumber)?.doubleValue else { return [] }
        return arrivals.map { ($0.at - (capture + (Double($0.number) - sequence) * 1e9 / 30)) / 1e6 }.sorted()
    }

    @Test("No, wrong or revoked tokens, malformed and video-less offers, an unknown lease, 1,000 POSTs in a burst: each a clear HTTP error; RTSP: ffprobe sees H.264 and audio, ffmpeg pulls 300 ± 3 frames in 10 s, a wrong password is refused; the studio keeps 30 fps")
    func badInputAndRTSP() throws {
        guard tool("curl") != nil, let ffprobe = tool("ffprobe"), let ffmpeg = tool("ffmpeg") else { return }
        let scratch = try Scratch("live-abuse")
        let webPort = try LiveViewEndToEndTests.freePort(), rtspPort = try LiveViewEndToEndTests.freePort()
        let agent = try AgentProcess(scratch: scratch, extra: [
            "--web", "--web-host", "127.0.0.1", "--web-port", "\(webPort)", "--rtsp", "--rtsp-host", "127.0.0.1",
            "--rtsp-port", "\(rtspPort)", "--speaker", "none", "--live-size", "640x360",
        ])
        defer { agent.stop() }
        let live = try LiveViewEndToEndTests.liveStatus(agent)
        #expect(live["pageURL"] != nil && live["rtspURL"] != nil, "\(live)")
        let base = "https://127.0.0.1:\(webPort)"
        let studio = try StudioProcess(
            scratch: scratch, name: "studio", port: agent.port,
            arguments: ["--seconds", "50", "--samples", "1024", "--size", "640x360", "--codec", "jpeg", "--no-video-file"])
        Thread.sleep(forTimeInterval: 1)

        // An offer Chromium 156 made (recvonly video and audio), kept as it was.
        let offer = try String(contentsOfFile: Repository.root + "/Tests/EndToEndTests/chrome-offer.sdp", encoding: .utf8)
        let offerPath = scratch.path + "/offer.sdp"
        try offer.write(toFile: offerPath, atomically: true, encoding: .utf8)
        // No token, a wrong token, a revoked token: 401 with a sentence.
        let none = try Self.curl(["-X", "POST", "-H", "Content-Type: application/sdp", "--data-binary", "@" + offerPath, base + "/whep"])
        #expect(none.status == 401, "no token: \(none)")
        #expect(none.body.contains("token"), "no token: \(none)")
        let wrong = try Self.curl(["-H", "Authorization: Bearer not-a-token", base + "/api/status"])
        #expect(wrong.status == 401, "wrong token: \(wrong)")
        let (revokedId, revoked) = try Self.mint(agent, name: "revoked")
        #expect(try Self.curl(["-H", "Authorization: Bearer " + revoked, base + "/api/status"]).status == 200, "a fresh token works")
        _ = try run(try Binaries.path("camo-agent"), ["web", "revoke", revokedId, "--state-dir", agent.stateDir])
        #expect(try Self.curl(["-H", "Authorization: Bearer " + revoked, base + "/api/status"]).status == 401, "a revoked token stops working")
        let (_, token) = try Self.mint(agent, name: "test")
        let auth = ["-H", "Authorization: Bearer " + token]

        // Malformed SDP, an offer with no video, a lease id that does not exist.
        let garbage = try Self.curl(auth + ["-X", "POST", "-H", "Content-Type: application/sdp", "--data-binary", "this is not SDP", base + "/whep"])
        #expect(garbage.status == 400, "malformed SDP: \(garbage)")
        var audioOnly = ""
        var inVideo = false
        for line in offer.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("m=") { inVideo = line.hasPrefix("m=video") }
            if line.hasPrefix("a=group:BUNDLE") { audioOnly += "a=group:BUNDLE 1\n"; continue }
            if !inVideo { audioOnly += line + "\n" }
        }
        let audioOnlyPath = scratch.path + "/audio-only.sdp"
        try audioOnly.write(toFile: audioOnlyPath, atomically: true, encoding: .utf8)
        let noVideo = try Self.curl(auth + ["-X", "POST", "-H", "Content-Type: application/sdp", "--data-binary", "@" + audioOnlyPath, base + "/whep"])
        #expect(noVideo.status == 400 && noVideo.body.lowercased().contains("video"), "no video: \(noVideo)")
        let unknown = try Self.curl(auth + ["-X", "POST", base + "/whep/sessions/does-not-exist/extend"])
        #expect(unknown.status == 404, "unknown lease: \(unknown)")
        let wrongType = try Self.curl(auth + ["-X", "POST", "-H", "Content-Type: text/plain", "--data-binary", "@" + offerPath, base + "/whep"])
        #expect(wrongType.status == 415, "wrong content type: \(wrongType)")

        // 1,000 POSTs in a burst, 100 at once (more connections than one address may hold: those are told so):
        // every one answered, 201 up to the viewer limit, then 503.
        let burstConfig = scratch.path + "/burst.curl"
        try String(repeating: "url = \"\(base)/whep\"\noutput = \"/dev/null\"\n", count: 1_000).write(toFile: burstConfig, atomically: true, encoding: .utf8)
        let burst = auth + ["-Z", "--parallel-max", "100", "-X", "POST", "-H", "Content-Type: application/sdp", "--data-binary", "@" + offerPath, "-K", burstConfig]
        let burstOutput = try run("/usr/bin/curl", ["-sk", "--max-time", "60", "-w", "%{http_code}\n"] + burst)
        let codes = burstOutput.stdout.split(separator: "\n").map { Int($0) ?? -1 }
        let counts = Dictionary(grouping: codes, by: { $0 }).mapValues(\.count)
        print("burst of 1,000 POST /whep: \(counts.sorted { $0.key < $1.key })")
        #expect(codes.count == 1_000 && !codes.contains(0) && !codes.contains(-1), "every POST answered: \(counts)")
        #expect((counts[201] ?? 0) + (counts[503] ?? 0) == 1_000, "201 or 503 only: \(counts)")
        #expect((counts[201] ?? 0) <= 4, "at most 4 viewers: \(counts)")
        let after = try Self.curl(auth + [base + "/api/status"])
        #expect(after.status == 200, "the API answers after the burst: \(after.status)")

        // /metrics in Prometheus' text format.
        let metrics = try Self.curl(auth + [base + "/metrics"])
        #expect(metrics.status == 200 && metrics.body.contains("# TYPE camo_studio_sessions gauge") && metrics.body.contains("camo_live_viewers"), "\(metrics.body.prefix(600))")

        // RTSP.
        let password = try String(contentsOfFile: agent.stateDir + "/rtsp-password", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let rtsp = "rtsp://camo:\(password)@127.0.0.1:\(rtspPort)/camo"
        let probe = try run(ffprobe, ["-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=codec_type,codec_name", "-of", "csv=p=0", rtsp])
        #expect(probe.stdout.contains("h264,video") && probe.stdout.contains("audio"), "ffprobe: \(probe.stdout) \(probe.stderr)")
        let saved = scratch.path + "/rtsp.mkv"
        let pull = try run(ffmpeg, ["-v", "error", "-rtsp_transport", "tcp", "-i", rtsp, "-t", "10", "-c", "copy", "-y", saved])
        #expect(pull.status == 0, "ffmpeg: \(pull.stderr)")
        let count = try run(ffprobe, ["-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", saved])
        let packets = Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        print("rtsp: ffmpeg pulled \(packets) video frames in 10 s")
        #expect((297...303).contains(packets), "RTSP frames in 10 s: \(packets)")
        let latencies = try Self.rtspLatencies(ffmpeg: ffmpeg, url: rtsp, agent: agent, seconds: 5)
        if latencies.count > 10 {
            print("glass-to-NVR latency (RTSP over TCP to ffmpeg, decoded, 640x360): p50 \(String(format: "%.0f", latencies[latencies.count / 2])) ms, p95 \(String(format: "%.0f", latencies[latencies.count * 95 / 100])) ms over \(latencies.count) frames")
        }
        #expect(latencies.count >= 100, "frames read back from ffmpeg's RTSP pull: \(latencies.count)")
        let refused = try run(ffprobe, ["-v", "error", "-rtsp_transport", "tcp", "rtsp://camo:wrong-password@127.0.0.1:\(rtspPort)/camo"])
        #expect(refused.status != 0 && refused.stderr.contains("401"), "wrong password: \(refused.stderr)")

        // The studio kept 30 fps throughout.
        let summary = try studio.summary()
        let frames = summary["frames"] as? Int ?? 0
        print("studio beside it all: \(summary)")
        #expect(frames >= 1_490, "the studio's 50 s: \(frames) frames")
        #expect((summary["dropped"] as? Int ?? 99) <= 3 && (summary["repeated"] as? Int ?? 99) <= 10, "the studio kept 30 fps: \(summary)")
    }
}
