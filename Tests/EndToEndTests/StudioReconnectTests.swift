import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `camo-studio record` across the loss of its agent: the real binaries on loopback, no avahi (`--no-mdns`,
/// `--connect`). The agent is SIGKILLed mid-recording and started again on the same port; the studio reconnects
/// and keeps recording into the same files. A refusal that will not change ends the recording without retries.
/// Serialized: each test runs agents and studios that want the CPU for themselves.
@Suite("Studio reconnects to its agent", .serialized, .timeLimit(.minutes(3)))
struct StudioReconnectTests {
    /// A loopback TCP port nothing listens on now (bound, then closed).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
            }
        }
        guard bound else { throw CheckError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `camo-agent run` with the test pattern and tone on `port`, without mDNS; returns once it printed port=N.
    static func startAgent(scratch: Scratch, port: Int, stateDir: String, label: String, extra: [String] = []) throws -> Background {
        let agent = try Background(
            try Binaries.path("camo-agent"),
            ["run", "--camera", "test", "--microphone", "test", "--port", "\(port)", "--state-dir", stateDir, "--no-mdns", "--no-web", "--no-rtsp"] + extra,
            scratch: scratch, label: label)
        guard eventually(10, { agent.stdout.hasPrefix("port=\(port)\n") || !agent.process.isRunning }), agent.process.isRunning else {
            Issue.record("\(label) did not start on port \(port): \(agent.stderr.suffix(2000))")
            throw HarnessError.agentDidNotStart(agent.stderr)
        }
        return agent
    }

    /// `camo-studio record` in the background.
    static func startStudio(scratch: Scratch, label: String, arguments: [String]) throws -> Background {
        try Background(
            try Binaries.path("camo-studio"),
            ["record", "--out", scratch.path + "/" + label, "--seconds", "8", "--no-pixels", "--codec", "bgra", "--size", "320x180",
             "--log-level", "info"] + arguments,
            scratch: scratch, label: label)
    }

    static func kill9(_ process: Background) {
        kill(process.process.processIdentifier, SIGKILL)
        process.process.waitUntilExit()
    }

    static func occurrences(of text: String, in log: String) -> Int {
        log.components(separatedBy: text).count - 1
    }

    private struct VideoIndex: Decodable {
        struct Frame: Decodable {
            var sequence: Int
            var slotTime: UInt64
        }
        var frames: [Frame]
    }

    @Test("the agent is SIGKILLed and restarted on its port: one reconnection, the recording goes on in the same files")
    func agentKilledAndRestarted() throws {
        let scratch = try Scratch("reconnect")
        let port = try Self.freePort()
        let stateDir = scratch.path + "/agent-state"
        let first = try Self.startAgent(scratch: scratch, port: port, stateDir: stateDir, label: "agent-1", extra: ["--allow-unpaired"])
        let studio = try Self.startStudio(scratch: scratch, label: "studio", arguments: ["--connect", "127.0.0.1:\(port)"])
        #expect(eventually(10) { first.stderr.contains("Studio connected") }, "the studio connects: \(studio.stderr)")
        Thread.sleep(forTimeInterval: 2)
        Self.kill9(first)
        let killedAt = Date()
        Thread.sleep(forTimeInterval: 1)
        let second = try Self.startAgent(scratch: scratch, port: port, stateDir: stateDir, label: "agent-2", extra: ["--allow-unpaired"])
        let restartDelay = Date().timeIntervalSince(killedAt)
        let status = studio.wait(seconds: 40)
        #expect(status == 0, "camo-studio: \(studio.stderr.suffix(3000))")
        let line = studio.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "summary: \(studio.stdout)")
        let gaps = summary["reconnectGapsMs"] as? [Double] ?? []
        let frames = summary["frames"] as? Int ?? 0
        print("reconnect: restart delay \(String(format: "%.0f", restartDelay * 1000)) ms, gaps \(gaps) ms, frames \(frames), "
              + "dropped \(summary["dropped"] ?? "?"), addresses \(summary["addresses"] ?? "?")")
        #expect(summary["reconnects"] as? Int == 1, "\(summary)")
        #expect(gaps.count == 1 && gaps[0] > 0 && gaps[0] < (3 + restartDelay) * 1000, "gap \(gaps) ms, restart delay \(restartDelay) s")
        #expect(summary["addresses"] as? [String] == ["127.0.0.1:\(port)", "127.0.0.1:\(port)"], "\(summary)")
        #expect(summary["dropped"] as? Int ?? 99 <= 3, "the step between the sessions is no drop: \(summary)")
        #expect(second.stderr.contains("Studio connected"), "the studio came back to the restarted agent")
        #expect(studio.stderr.contains("reconnected to 127.0.0.1:\(port)"), "\(studio.stderr.suffix(2000))")

        // Frames from both sessions in one video.json: a run before the kill, one gap in slot time, a run after it.
        let index = try JSONDecoder().decode(
            VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: scratch.path + "/studio/video.json")))
        #expect(index.frames.count == frames)
        let steps = zip(index.frames, index.frames.dropFirst()).map { Double($1.slotTime) - Double($0.slotTime) }
        let gapAt = try #require(steps.indices.max { steps[$0] < steps[$1] })
        let before = gapAt + 1
        let after = index.frames.count - before
        let slotGapMs = steps[gapAt] / 1e6
        let spanS = Double(index.frames.last!.slotTime - index.frames.first!.slotTime) / 1e9
        print("reconnect: \(before) frames before the loss, \(after) after, slot-time gap \(String(format: "%.0f", slotGapMs)) ms, span \(String(format: "%.2f", spanS)) s")
        #expect(before >= 45, "about 2 s before the kill: \(before)")
        #expect(after >= 90, "the rest of the 8 s after the restart: \(after)")
        #expect(slotGapMs > 900 && slotGapMs < (3 + restartDelay) * 1000 + 100, "slot-time gap \(slotGapMs) ms")
        #expect(spanS > 7.5 && spanS < 8.01, "the span counts from the very first frame: \(spanS) s")
        #expect(index.frames[before].sequence <= index.frames[before - 1].sequence, "the new session numbers its frames anew")
        #expect(steps.filter { $0 > 500_000_000 }.count == 1, "one gap only: \(steps.filter { $0 > 100_000_000 })")
        // Audio from both sessions went into the one WAV file.
        let audioPackets = summary["audioPackets"] as? Int ?? 0
        #expect(Double(audioPackets) * 1024 / 48_000 > 5, "audio packets \(audioPackets)")
        second.process.terminate()
        second.process.waitUntilExit()
    }

    @Test("unpaired while recording (notPaired): the studio ends at once with the reason and does not try again")
    func unpairedIsNotRetried() throws {
        let scratch = try Scratch("reconnect-unpaired")
        let port = try Self.freePort()
        let pairingPort = try Self.freePort()
        let stateDir = scratch.path + "/agent-state"
        let studioState = scratch.path + "/studio-state"
        let agentName = "reconnect-\(UUID().uuidString.prefix(6))"
        let agent = try Self.startAgent(
            scratch: scratch, port: port, stateDir: stateDir, label: "agent",
            extra: ["--name", agentName, "--pairing-port", "\(pairingPort)"])

        // Pair by code over --connect (no mDNS).
        let payloadFile = scratch.path + "/payload"
        let pairing = try Background(
            try Binaries.path("camo-studio"),
            ["pair", "--state-dir", studioState, "--name", "Studio-R", "--payload-file", payloadFile, "--no-qr",
             "--connect", "127.0.0.1:\(pairingPort)"],
            scratch: scratch, label: "pair")
        #expect(eventually(10) { (try? String(contentsOfFile: payloadFile, encoding: .utf8))?.hasSuffix("\n") ?? false },
                "camo-studio pair wrote its code: \(pairing.stderr)")
        let paired = try run(try Binaries.path("camo-agent"), ["pair", "--file", payloadFile, "--state-dir", stateDir])
        #expect(paired.status == 0, "camo-agent pair: \(paired.stdout) \(paired.stderr)")
        #expect(pairing.wait(seconds: 15) == 0, "camo-studio pair: \(pairing.stdout) \(pairing.stderr)")
        let list = try run(try Binaries.path("camo-agent"), ["paired", "--json", "--state-dir", stateDir])
        let studios = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8))) as? [[String: Any]] ?? []
        let studioId = try #require(studios.first?["id"] as? String, "paired: \(list.stdout)")

        // Record with KK; unpair the studio mid-recording.
        let studio = try Self.startStudio(
            scratch: scratch, label: "studio",
            arguments: ["--agent", agentName, "--connect", "127.0.0.1:\(port)", "--state-dir", studioState])
        #expect(eventually(10) { agent.stderr.contains("Studio connected") }, "the studio connects: \(studio.stderr)")
        Thread.sleep(forTimeInterval: 1)
        let unpairedAt = Date()
        let unpair = try run(try Binaries.path("camo-agent"), ["unpair", studioId, "--state-dir", stateDir])
        #expect(unpair.status == 0, "camo-agent unpair: \(unpair.stderr)")
        let status = studio.wait(seconds: 10)
        let ended = Date().timeIntervalSince(unpairedAt)
        Thread.sleep(forTimeInterval: 1)   // time for any (wrong) retry to reach the agent
        print("unpaired: the studio ended \(String(format: "%.2f", ended)) s after the unpair, status \(status.map { "\($0)" } ?? "running"); "
              + "stderr: \(studio.stderr.split(separator: "\n").last ?? "")")
        #expect(status != nil && status != 0, "the recording fails: \(studio.stdout) \(studio.stderr)")
        #expect(ended < 3, "at once, not after retries: \(ended) s")
        #expect(studio.stderr.contains("code 4") && studio.stderr.contains("unpaired"), "the reason: \(studio.stderr.suffix(2000))")
        #expect(!studio.stderr.contains("reconnecting"), "no reconnection was attempted: \(studio.stderr.suffix(2000))")
        #expect(studio.stdout.isEmpty, "no summary: \(studio.stdout)")
        #expect(Self.occurrences(of: "Studio connected", in: agent.stderr) == 1, "one session only")
        #expect(!agent.stderr.contains("Refused a studio"), "no further attempt reached the agent: \(agent.stderr.suffix(2000))")
        agent.process.terminate()
        agent.process.waitUntilExit()
    }

    @Test("a restarted agent that refuses unpaired studios (unpairedNotAllowed): one attempt, no retries, the reason")
    func refusalOnReconnectIsNotRetried() throws {
        let scratch = try Scratch("reconnect-refused")
        let port = try Self.freePort()
        let stateDir = scratch.path + "/agent-state"
        let first = try Self.startAgent(scratch: scratch, port: port, stateDir: stateDir, label: "agent-1", extra: ["--allow-unpaired"])
        let studio = try Self.startStudio(scratch: scratch, label: "studio", arguments: ["--connect", "127.0.0.1:\(port)"])
        #expect(eventually(10) { first.stderr.contains("Studio connected") }, "the studio connects: \(studio.stderr)")
        Thread.sleep(forTimeInterval: 1)
        Self.kill9(first)
        // The same agent again, but without --allow-unpaired: the studio's XX is refused for good.
        let second = try Self.startAgent(scratch: scratch, port: port, stateDir: stateDir, label: "agent-2")
        let restartedAt = Date()
        let status = studio.wait(seconds: 15)
        let ended = Date().timeIntervalSince(restartedAt)
        Thread.sleep(forTimeInterval: 1)
        let refusals = Self.occurrences(of: "Refused a studio", in: second.stderr)
        print("refused on reconnect: the studio ended \(String(format: "%.2f", ended)) s after the restart, status \(status.map { "\($0)" } ?? "running"), "
              + "refusals logged \(refusals); stderr: \(studio.stderr.split(separator: "\n").last ?? "")")
        #expect(status != nil && status != 0, "the recording fails: \(studio.stdout) \(studio.stderr)")
        #expect(studio.stderr.contains("reconnecting"), "it did try to reconnect: \(studio.stderr.suffix(2000))")
        #expect(studio.stderr.contains("agent refused") && studio.stderr.contains("code 13"), "the reason: \(studio.stderr.suffix(2000))")
        #expect(refusals == 1, "one attempt, not retried: \(second.stderr.suffix(2000))")
        #expect(ended < 4, "ended at the refusal, not at the end of the recording: \(ended) s")
        second.process.terminate()
        second.process.waitUntilExit()
    }
}
