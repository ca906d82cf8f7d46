import CamoMedia
import Foundation
import Testing

/// Live view against things nobody here wrote: headless Chromium playing the page (WHEP, WebRTC through
/// GStreamer's webrtcbin), its fake microphone talking back, curl abusing the HTTPS API, ffprobe and ffmpeg
/// pulling RTSP, while a studio records and must keep 30 fps. The release agent (scripts/test sets CAMO_BIN_DIR).
@Suite("Live view: a browser, talkback, RTSP and bad input against the real agent", .serialized)
struct LiveViewEndToEndTests {
    /// A free TCP port on loopback (bound to port 0, read back and released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CheckError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CheckError("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The agent's CPU time (user + system, in clock ticks) from /proc, sampled with CLOCK_MONOTONIC times, so a
    /// phase's share of a core is (ticks / 100) / seconds.
    final class CPUSampler: @unchecked Sendable {
        private let lock = NSLock()
        private var samples: [(time: Double, ticks: Double)] = []
        private var running = true
        let pid: Int32

        init(pid: Int32) {
            self.pid = pid
            Thread.detachNewThread { [self] in
                while lock.withLock({ running }) {
                    if let ticks = Self.ticks(pid) { lock.withLock { samples.append((Self.now(), ticks)) } }
                    Thread.sleep(forTimeInterval: 0.25)
                }
            }
        }

        static func now() -> Double {
            var spec = timespec()
            clock_gettime(CLOCK_MONOTONIC, &spec)
            return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
        }

        static func ticks(_ pid: Int32) -> Double? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return user + system
        }

        /// The share of one core between two CLOCK_MONOTONIC times, or nil without samples there.
        func share(from start: Double, to end: Double) -> Double? {
            let inside = lock.withLock { samples.filter { $0.time >= start && $0.time <= end } }
            guard let first = inside.first, let last = inside.last, last.time - first.time > 1 else { return nil }
            return (last.ticks - first.ticks) / 100 / (last.time - first.time)
        }

        func stop() { lock.withLock { running = false } }
    }

    /// The live section of `camo-agent status --json`, once the page (and RTSP) are up.
    static func liveStatus(_ agent: AgentProcess) throws -> [String: Any] {
        for _ in 0..<100 {
            if let live = try agent.status()["live"] as? [String: Any], live["pageURL"] != nil || live["pageProblem"] != nil {
                return live
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw CheckError("the agent's status never showed live view; its log:\n\(agent.log)")
    }

    /// A 16-bit stereo 48 kHz WAV of a sine (Chromium's fake microphone reads WAV files).
    static func writeTone(_ path: String, frequency: Double, seconds: Double) throws {
        let rate = 48_000, frames = Int(seconds * Double(rate))
        var data = Data()
        func le32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); le32(UInt32(36 + frames * 4)); data.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(2); le32(UInt32(rate)); le32(UInt32(rate * 4)); le16(4); le16(16)
        data.append(contentsOf: Array("data".utf8)); le32(UInt32(frames * 4))
        for n in 0..<frames {
            let sample = Int16(12_000 * sin(2 * Double.pi * frequency * Double(n) / Double(rate)))
            le16(UInt16(bitPattern: sample)); le16(UInt16(bitPattern: sample))
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The main frequency of a WAV file's first channel where it is loud (zero crossings over the loud part), and
    /// how many seconds are loud.
    static func toneFrequency(wav path: String) throws -> (frequency: Double, loudSeconds: Double) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count > 44, String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" else { throw CheckError("\(path) is not a WAV file") }
        // Walk the chunks for fmt and data.
        var offset = 12, channels = 2, rate = 48_000, bits = 16
        var samples: [Double] = []
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            let body = offset + 8
            if id == "fmt " {
                channels = Int(bytes[body + 2]) | Int(bytes[body + 3]) << 8
                rate = Int(bytes[body + 4]) | Int(bytes[body + 5]) << 8 | Int(bytes[body + 6]) << 16 | Int(bytes[body + 7]) << 24
                bits = Int(bytes[body + 14]) | Int(bytes[body + 15]) << 8
            } else if id == "data" {
                let end = min(bytes.count, body + (size == 0 || size == -1 ? bytes.count : size))
                let step = channels * bits / 8
                var index = body
                while index + step <= end {
                    if bits == 16 {
                        samples.append(Double(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8)) / 32_768)
                    } else if bits == 32 {
                        let raw = UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
                        samples.append(Double(Float(bitPattern: raw)))
                    }
                    index += step
                }
                break
            }
            offset = body + size + (size & 1)
        }
        // 10 ms blocks louder than -30 dBFS.
        let block = rate / 100
        var crossings = 0, loudBlocks = 0
        for start in stride(from: 0, to: samples.count - block, by: block) {
            let slice = samples[start..<start + block]
            let rms = (slice.reduce(0) { $0 + $1 * $1 } / Double(block)).squareRoot()
            guard rms > 0.03 else { continue }
            loudBlocks += 1
            for i in start + 1..<start + block where (samples[i - 1] < 0) != (samples[i] < 0) { crossings += 1 }
        }
        let loudSeconds = Double(loudBlocks) / 100
        return (loudSeconds > 0 ? Double(crossings) / 2 / loudSeconds : 0, loudSeconds)
    }

    @Test("Chromium plays the page 10 s at ≥ 25 fps with advancing frame numbers; 4 viewers and a 5th is busy; a 10 s lease ends on time, extended lives 30 s, DELETE ends it; the fake microphone's tone reaches the speaker")
    func browser() throws {
        // Debian's python3 with python3-selenium (scripts/install-deps --test), not a python of pyenv's.
        let python = "/usr/bin/python3"
        guard tool("chromium") != nil, tool("chromedriver") != nil else { return }
        let scratch = try Scratch("live-browser")
        let talk = scratch.path + "/talkback.wav"
        let tone = scratch.path + "/tone.wav"
        try Self.writeTone(tone, frequency: 660, seconds: 30)
        let agent = try AgentProcess(scratch: scratch, extra: [
            "--web", "--web-host", "127.0.0.1", "--web-port", "0", "--web-loopback-without-token", "--no-rtsp",
            "--lease-seconds", "10", "--speaker", "file:" + talk, "--live-size", "640x360",
        ])
        defer { agent.stop() }
        let live = try Self.liveStatus(agent)
        let url = try #require(live["pageURL"] as? String, "the page is off: \(live)")
        // A studio on H.264 at live view's size beside the browsers: one encoder serves both.
        let studio = try StudioProcess(
            scratch: scratch, name: "studio", port: agent.port,
            arguments: ["--seconds", "80", "--samples", "1024", "--size", "640x360", "--codec", "h264", "--no-video-file"])
        let cpu = CPUSampler(pid: agent.pid)
        defer { cpu.stop() }
        Thread.sleep(forTimeInterval: 6)
        let script = Repository.root + "/scripts/browser-live-view.py"
        let output = try run(python, [script, "--url", url.replacingOccurrences(of: "://\(ProcessInfo.processInfo.hostName):", with: "://127.0.0.1:"),
                                      "--seconds", "10", "--viewers", "4", "--hold-seconds", "6", "--tone", tone, "--talk-seconds", "4", "--leases"])
        let result = try #require(
            try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any],
            "the browser script printed no JSON: \(output.stdout) \(output.stderr)")
        if let error = result["error"] { Issue.record("browser: \(error)\n\(agent.log.suffix(3_000))") }

        // 1. Live view: frame numbers read from the canvas.
        let frames = result["frames"] as? [[String: Any]] ?? []
        let numbers = frames.compactMap { $0["n"] as? Int }
        let distinct = Set(numbers)
        let span = (frames.last?["t"] as? Double ?? 0) - (frames.first?["t"] as? Double ?? 0)
        let fps = span > 0 ? Double(distinct.count) / (span / 1000) : 0
        print("browser: \(frames.count) frames presented, \(distinct.count) distinct numbers (\(numbers.first ?? -1)…\(numbers.last ?? -1)) in \(String(format: "%.2f", span / 1000)) s: \(String(format: "%.1f", fps)) fps; unreadable \(frames.count - numbers.count)")
        #expect(span >= 9_000, "the browser watched \(span) ms")
        #expect(fps >= 25, "\(fps) fps in the browser")
        let steps = zip(numbers, numbers.dropFirst()).map { $1 - $0 }
        #expect(steps.filter { $0 < 0 }.isEmpty, "frame numbers go back: \(steps.filter { $0 < 0 })")
        #expect(steps.filter { $0 == 1 }.count * 10 >= steps.count * 8, "frame numbers advance one by one: steps \(Dictionary(grouping: steps, by: { $0 }).mapValues(\.count))")
        // Glass to browser: the synthetic frame n was captured at the agent's reference plus n - k frames (same
        // machine, so CLOCK_MONOTONIC maps to the wall clock by the offset the script measured).
        if let sequence = result["referenceSequence"] as? Int, let capture = result["referenceCaptureTime"] as? Double,
            let offset = result["wallMinusMonotonicMs"] as? Double
        {
            var latencies: [Double] = []
            for frame in frames {
                guard let n = frame["n"] as? Int, let t = frame["t"] as? Double else { continue }
                let captured = (capture + Double(n - sequence) * 1e9 / 30) / 1e6 + offset
                latencies.append(t - captured)
            }
            latencies.sort()
            if !latencies.isEmpty {
                let p50 = latencies[latencies.count / 2], p95 = latencies[latencies.count * 95 / 100]
                print("glass-to-browser latency on loopback (640x360 H.264, WebRTC): p50 \(String(format: "%.0f", p50)) ms, p95 \(String(format: "%.0f", p95)) ms over \(latencies.count) frames")
                #expect(p50 > 0, "a frame is shown after it was captured (p50 \(p50) ms)")
            }
        } else {
            Issue.record("the script did not report the agent's reference frame: \(result.keys.sorted())")
        }

        // The cost of viewers beside the studio: CPU share of the agent with 0, 1 and 4 viewers (the script says when
        // each phase ran, CLOCK_MONOTONIC seconds).
        let phases = result["phases"] as? [String: [Double]] ?? [:]
        func phase(_ name: String) -> String {
            guard let window = phases[name], window.count == 2, let share = cpu.share(from: window[0], to: window[1]) else { return "-" }
            return String(format: "%.0f %%", share * 100)
        }
        print("agent CPU beside one H.264 studio (640x360): 0 viewers \(phase("zero")), 1 viewer \(phase("one")), 4 viewers \(phase("four")) of a core")
        let opened = agent.log.components(separatedBy: "H.264 rendition opened").count - 1
        #expect(opened == 1, "the studio and the viewers share one encoder: \(opened) renditions opened")

        // 2. Four viewers play; a fifth is told the agent is busy.
        let viewers = result["viewers"] as? [[String: Any]] ?? []
        #expect(viewers.count == 4 && viewers.allSatisfy { $0["playing"] as? Bool == true }, "viewers: \(viewers)")
        let extra = result["extraOffer"] as? [String: Any] ?? [:]
        #expect(extra["status"] as? Int == 503, "the 5th viewer: \(extra)")
        #expect((extra["body"] as? String ?? "").lowercased().contains("busy"), "the 5th viewer: \(extra)")

        // 3. Leases: 10 s not extended ends at 10 ± 1 s; extended every 5 s lives 30 s; DELETE ends it at once.
        let leases = result["leases"] as? [String: Any] ?? [:]
        let ended = leases["unextendedEndedAfterMs"] as? Double ?? -1
        print("lease: unextended ended after \(ended) ms; extended alive at 30 s: \(leases["extendedAliveAt30s"] ?? "?"); after DELETE: \(leases["afterDeleteStatus"] ?? "?")")
        #expect((9_000...11_000).contains(ended), "a 10 s lease ended after \(ended) ms: \(leases)")
        #expect(leases["extendedAliveAt30s"] as? Bool == true, "\(leases)")
        #expect(leases["afterDeleteStatus"] as? Int == 404, "\(leases)")

        // 4. Talkback: the fake microphone's 660 Hz reaches the speaker (a WAV file here).
        #expect((result["talkOn"] as? [String: Any])?["ok"] as? Bool == true, "talkback: \(result["talkOn"] ?? "-")")
        let summary = try studio.summary()
        if let transport = summary["transport"] as? [String: Any], let decoded = transport["captureToDecodedMs"] as? [String: Any] {
            print("studio beside the browsers: \(summary["frames"] ?? "?") frames; capture to decoded p50 \(decoded["p50"] ?? "?") ms, p95 \(decoded["p95"] ?? "?") ms")
        }
        #expect((summary["frames"] as? Int ?? 0) >= 2_370, "the studio kept 30 fps beside the browsers: \(summary)")
        agent.stop()
        let heard = try Self.toneFrequency(wav: talk)
        print("talkback: \(String(format: "%.1f", heard.loudSeconds)) s loud at \(String(format: "%.1f", heard.frequency)) Hz (sent 660 Hz)")
        #expect(heard.loudSeconds >= 2, "talkback played \(heard.loudSeconds) s")
        #expect(abs(heard.frequency - 660) <= 5, "talkback's frequency \(heard.frequency) Hz")
    }
}

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
        process.arguments = ["-v", "error", "-rtsp_transport", "tcp", "-fflags", "nobuffer", "-flags", "low_delay", "-i", url,
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

        // 1,000 POSTs in a burst (100 at once): every one answered (201 up to the viewer limit, then busy).
        var burst = auth + ["-Z", "--parallel-max", "100", "-o", "/dev/null", "-X", "POST", "-H", "Content-Type: application/sdp", "--data-binary", "@" + offerPath]
        burst += Array(repeating: base + "/whep", count: 1_000)
        let burstOutput = try run("/usr/bin/curl", ["-sk", "--max-time", "60", "-w", "%{http_code}\n"] + burst)
        let codes = burstOutput.stdout.split(separator: "\n").map { Int($0) ?? -1 }
        let counts = Dictionary(grouping: codes, by: { $0 }).mapValues(\.count)
        print("burst of 1,000 POST /whep: \(counts.sorted { $0.key < $1.key })")
        #expect(codes.count == 1_000 && !codes.contains(0) && !codes.contains(-1), "every POST answered: \(counts)")
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
