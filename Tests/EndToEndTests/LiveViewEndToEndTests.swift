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
        // 10 ms blocks louder than -30 dBFS; within them, upward crossings with hysteresis (a codec's ripple
        // around zero is not a period), and the time from the first to the last counted crossing.
        let block = rate / 100
        var loudBlocks = 0
        var periods: [Double] = []
        for start in stride(from: 0, to: samples.count - block, by: block) {
            let slice = samples[start..<start + block]
            let rms = (slice.reduce(0) { $0 + $1 * $1 } / Double(block)).squareRoot()
            guard rms > 0.03 else { continue }
            loudBlocks += 1
        }
        var below = false
        var lastUp: Int?
        let threshold = 0.02
        for i in samples.indices {
            if samples[i] < -threshold { below = true }
            if below && samples[i] > threshold {
                below = false
                if let last = lastUp, i - last < rate / 100 { periods.append(Double(i - last)) }
                lastUp = i
            }
        }
        // The mean period over the middle 80 % (the edges of the talk are not whole periods).
        periods.sort()
        let middle = periods.count >= 10 ? Array(periods[periods.count / 10..<periods.count * 9 / 10]) : periods
        let mean = middle.isEmpty ? 0 : middle.reduce(0, +) / Double(middle.count)
        return (mean > 0 ? Double(rate) / mean : 0, Double(loudBlocks) / 100)
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
                                      "--seconds", "10", "--viewers", "4", "--hold-seconds", "6", "--tone", tone, "--talk-seconds", "5", "--leases"])
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
        // 5. The page's settings table, and a change made with its own control, read back through the API.
        let settings = result["settings"] as? [String: Any] ?? [:]
        #expect((settings["rows"] as? Int ?? 0) >= 15, "the page's settings table: \(settings)")
        #expect(settings["before"] as? Bool == false && settings["after"] as? Bool == true && settings["restored"] as? Bool == false,
                "the mirror switch on the page: \(settings)")
        #expect((settings["status"] as? Int ?? 0) > 20, "the page shows the status: \(settings)")

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
