import Foundation
import Testing

/// Events leaving the agent to a studio (protocol 1.3) and a webhook (a Python receiver checks the HMAC with
/// Python's own hmac module), and a webhook that fails: retried and counted while a studio keeps 30 fps. The test
/// pattern moves everywhere, so its motion events start at once.
@Suite("End to end: events to a studio and a webhook", .serialized, .timeLimit(.minutes(3)))
struct EventDeliveryTests {
    /// A webhook receiver: `ok` checks each POST's signature with the secret file and appends one line
    /// `<event id header> <valid|invalid> <body>` to the log; `fail` answers 500 and counts.
    static let receiver = """
        import hashlib, hmac, http.server, sys
        mode, port, secret_path, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                signature = self.headers.get('X-Camo-Signature', '')
                fields = dict(part.split('=', 1) for part in signature.split(',') if '=' in part)
                try:
                    secret = open(secret_path).read().strip().encode()
                    expected = hmac.new(secret, fields.get('t', '').encode() + b'.' + body, hashlib.sha256).hexdigest()
                    valid = hmac.compare_digest(expected, fields.get('v1', ''))
                except OSError:
                    valid = False
                with open(log_path, 'a') as log:
                    log.write('%s %s %s\\n' % (self.headers.get('X-Camo-Event-Id'), 'valid' if valid else 'invalid', body.decode()))
                self.send_response(200 if mode == 'ok' else 500)
                self.end_headers()
            def log_message(self, *args):
                pass
        http.server.HTTPServer(('127.0.0.1', port), Handler).serve_forever()
        """

    static func freePort() -> Int { Int.random(in: 20_000...29_000) }

    /// Ends a receiver: SIGKILL, as the test process may ignore SIGTERM, and children inherit that.
    static func end(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    static func startReceiver(_ scratch: Scratch, mode: String, port: Int, secretPath: String) throws -> (Process, String) {
        let script = scratch.path + "/receiver.py"
        try Self.receiver.write(toFile: script, atomically: true, encoding: .utf8)
        let log = scratch.path + "/webhook-\(mode).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, mode, "\(port)", secretPath, log]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, log)
    }

    @Test("a studio (camo-studio events) and a webhook get the same notices in order; every webhook body verifies with the secret")
    func studioAndWebhook() throws {
        let scratch = try Scratch("event-delivery")
        let port = Self.freePort()
        let stateDir = scratch.path + "/state"
        let (receiver, log) = try Self.startReceiver(scratch, mode: "ok", port: port, secretPath: stateDir + "/webhook-secret")
        defer { Self.end(receiver) }
        let agent = try AgentProcess(scratch: scratch, extra: ["--webhook-url", "http://127.0.0.1:\(port)/hook"])
        defer { agent.stop() }

        let studio = try run(
            try Binaries.path("camo-studio"), ["events", "--connect", "127.0.0.1:\(agent.port)", "--replay", "--count", "2", "--json"])
        #expect(studio.status == 0, "\(studio)")
        let notices = studio.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(notices.count == 2, "\(studio.stdout)")
        #expect(notices.first?["kind"] as? String == "started" && notices.first?["trigger"] as? String == "motion", "\(notices)")
        #expect(notices.map { $0["sequence"] as? Int } == [1, 2], "\(notices)")

        try waitFor("the webhook to receive two notices") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
        }
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.allSatisfy { $0.split(separator: " ")[1] == "valid" }, "\(lines)")
        #expect(lines.first?.hasPrefix("1-1 valid ") == true, "the first post is event 1, notice 1: \(lines)")
        #expect(lines.first?.contains(#""kind":"started""#) == true, "\(lines)")

        let secret = try run(try Binaries.path("camo-agent"), ["events", "secret", "--state-dir", stateDir])
        let saved = try String(contentsOfFile: stateDir + "/webhook-secret", encoding: .utf8)
        #expect(secret.status == 0 && secret.stdout == saved && saved.count >= 33, "\(secret)")
    }

    @Test("a webhook answering 500: retries are counted in the status, and a studio still gets 30 fps meanwhile")
    func failingWebhook() throws {
        let scratch = try Scratch("event-webhook-500")
        let port = Self.freePort()
        let (receiver, log) = try Self.startReceiver(scratch, mode: "fail", port: port, secretPath: "/nonexistent")
        defer { Self.end(receiver) }
        let agent = try AgentProcess(scratch: scratch, extra: ["--webhook-url", "http://127.0.0.1:\(port)/hook"])
        defer { agent.stop() }
        let studio = try StudioProcess(
            scratch: scratch, name: "watcher", port: agent.port,
            arguments: ["--seconds", "6", "--samples", "1024", "--size", "640x360", "--codec", "jpeg", "--no-video-file"])
        let summary = try studio.summary()
        let frames = try #require(summary["frames"] as? Int)
        #expect((177...183).contains(frames), "the studio got \(frames) frames in 6 s while the webhook failed: \(summary)")
        let status = try agent.status()
        let events = try #require(status["events"] as? [String: Any], "\(status)")
        let webhook = try #require(events["webhook"] as? [String: Any], "\(events)")
        #expect((webhook["retried"] as? Int ?? 0) >= 2, "\(webhook)")
        #expect(webhook["delivered"] as? Int == 0, "\(webhook)")
        #expect((webhook["lastError"] as? String ?? "").contains("500"), "\(webhook)")
        let posts = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(posts.split(separator: "\n").count >= 3, "the receiver saw the first try and two retries: \(posts)")
        let human = try run(try Binaries.path("camo-agent"), ["status", "--state-dir", agent.stateDir])
        #expect(human.stdout.contains("webhook: delivered 0, retried"), "\(human.stdout)")
    }
}
