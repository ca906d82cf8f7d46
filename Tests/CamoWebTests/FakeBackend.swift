import Foundation
import Synchronization

@testable import CamoWeb

/// A backend for tests: answers every offer with a fixed SDP and records what the server asked.
final class FakeBackend: WebBackend {
    struct Calls {
        var started: [String] = []
        var ended: [(id: String, reason: String)] = []
        var candidates: [(id: String, fragment: String)] = []
        var talkback: [(id: String, on: Bool)] = []
        var settingsWritten: [Data] = []
    }

    static let answer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=camo\r\nt=0 0\r\n"

    let calls = Mutex(Calls())
    let talkbackSupported: Bool
    let failStart: WebError?

    init(talkbackSupported: Bool = true, failStart: WebError? = nil) {
        self.talkbackSupported = talkbackSupported
        self.failStart = failStart
    }

    func startViewer(offer: String, id: String) async throws(WebError) -> String {
        if let failStart { throw failStart }
        calls.withLock { $0.started.append(id) }
        return Self.answer
    }

    func addCandidates(id: String, fragment: String) throws(WebError) {
        calls.withLock { $0.candidates.append((id, fragment)) }
    }

    func endViewer(id: String, reason: String) {
        calls.withLock { $0.ended.append((id, reason)) }
    }

    func setTalkback(id: String, on: Bool) throws(WebError) {
        calls.withLock { $0.talkback.append((id, on)) }
    }

    func status() async -> [String: JSONValue] {
        ["camera": "fake", "frames": 42]
    }

    func settings() async -> Data {
        Data(#"[{"name":"fps","value":30,"writable":true,"description":"frames per second"}]"#.utf8)
    }

    func writeSettings(_ body: Data) async -> (status: Int, body: Data) {
        calls.withLock { $0.settingsWritten.append(body) }
        if String(decoding: body, as: UTF8.self).contains("bad") {
            return (400, Data(#"{"error":"fps must be a number from 1 to 60"}"#.utf8))
        }
        return (200, Data(#"{"ok":true}"#.utf8))
    }

    func pairedStudios() async -> Data {
        Data(#"[{"name":"studio-1","fingerprint":"ab:cd"}]"#.utf8)
    }

    func metrics() -> [WebMetric] {
        [
            WebMetric(name: "camo_frames_sent_total", help: "Frames sent.", kind: .counter, value: 1234),
            WebMetric(name: "camo_temperature_celsius", help: "SoC temperature.", kind: .gauge, value: 51.5,
                labels: ["zone": "cpu"]),
            // Inconsistent: the renderer must leave it out rather than crash.
            WebMetric(name: "camo_frames_sent_total", help: "Frames sent.", kind: .gauge, value: 1),
            WebMetric(name: "bad name", help: "Invalid.", kind: .gauge, value: 1),
        ]
    }
}

/// A fresh directory under the temporary directory, for one test's state.
func temporaryStateDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("camo-web-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
