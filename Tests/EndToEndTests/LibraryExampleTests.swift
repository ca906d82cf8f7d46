import Foundation
import Testing

/// The README's library example (Examples/DeskCamera, built as `desk-camera`), a program that uses only the
/// library products, against the real avahi-daemon: python-zeroconf sees it within 2 s, its pairing window
/// publishes `_camopairing._tcp`, `camo-studio pair` pairs with it, and after it restarts the studio records
/// from it with no pairing again (the paired list persisted by default).
@Suite("The library example, end to end (real avahi-daemon)", .serialized, .timeLimit(.minutes(3)))
struct LibraryExampleTests {
    @Test func discoveredPairedAndRecordedAfterARestart() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("example")
        let agentState = scratch.path + "/agent"
        let studioState = scratch.path + "/studio"
        let browser = try Background(
            "/usr/bin/python3",
            [Repository.root + "/scripts/zeroconf-browse.py", "--type", "_camo._tcp", "--type", "_camopairing._tcp", "--timeout", "90"],
            scratch: scratch, label: "zeroconf")
        #expect(eventually(10) { browser.stdout.contains("\"ready\"") }, "zeroconf-browse started: \(browser.stderr)")
        func events(_ kind: String, _ type: String) -> [[String: Any]] {
            browser.stdout.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }.filter { ($0["event"] as? String) == kind && ($0["type"] as? String) == type && ($0["name"] as? String) == "Desk camera" }
        }

        // The studio shows its code; the example gets it as its argument and opens its pairing window.
        let (studio, payloadFile) = try PairingEndToEndTests.studioPair(scratch: scratch, state: studioState, name: "Studio-L")
        let payload = try String(contentsOfFile: payloadFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let started = Date()
        let first = try Self.example(scratch, state: agentState, label: "first", arguments: [payload])
        #expect(eventually(2) { !events("add", "_camo._tcp").isEmpty }, "python-zeroconf sees _camo._tcp within 2 s: \(browser.stdout) \(first.stderr)")
        print("zeroconf saw the example \(String(format: "%.2f", Date().timeIntervalSince(started))) s after its start")
        #expect(eventually(5) { !events("add", "_camopairing._tcp").isEmpty }, "the pairing window is published: \(browser.stdout)")
        #expect(studio.wait(seconds: 30) == 0, "camo-studio pair: \(studio.stdout) \(studio.stderr)")
        #expect(studio.stdout.contains("Paired with agent Desk camera"), "\(studio.stdout)")
        #expect(
            eventually(5) { ((try? String(contentsOfFile: agentState + "/paired.json", encoding: .utf8)) ?? "").contains("Studio-L") },
            "the example stored the studio in its state directory")
        #expect(eventually(5) { !events("remove", "_camopairing._tcp").isEmpty }, "the window's service is withdrawn: \(browser.stdout)")

        // Restarted: the studio is remembered, so it records over KK without any code.
        kill(first.process.processIdentifier, SIGTERM)
        #expect(first.wait(seconds: 5) != nil)
        let second = try Self.example(scratch, state: agentState, label: "second", arguments: [])
        #expect(eventually(5) { events("add", "_camo._tcp").count >= 2 }, "the restarted example is published again: \(browser.stdout)")
        let recorded = try PairingEndToEndTests.record(studioState: studioState, agent: "Desk camera", scratch: scratch, label: "after-restart", seconds: 3)
        #expect(recorded.status == 0, "record --agent after the restart: \(recorded.stderr)")
        let summary = (try? JSONSerialization.jsonObject(with: Data((recorded.stdout.split(separator: "\n").last ?? "").utf8))) as? [String: Any] ?? [:]
        let frames = (summary["frames"] as? Int) ?? 0
        #expect(frames >= 80, "3 s at 30 fps from the restarted example: \(recorded.stdout)")
        kill(second.process.processIdentifier, SIGTERM)
    }

    static func example(_ scratch: Scratch, state: String, label: String, arguments: [String]) throws -> Background {
        let path = try Binaries.path("desk-camera")
        setenv("DESK_CAMERA_STATE", state, 1)
        defer { unsetenv("DESK_CAMERA_STATE") }
        return try Background(path, arguments, scratch: scratch, label: label)
    }
}

/// `camo-agent run` with avahi-daemon running ends advertised: it says so, and avahi-browse sees it.
@Suite("camo-agent run ends advertised (real avahi-daemon)", .serialized, .timeLimit(.minutes(2)))
struct AdvertisedRunTests {
    @Test func itSaysItIsAdvertisedAndAvahiBrowseSeesIt() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("advertised")
        let name = "adv-\(UUID().uuidString.prefix(6))"
        let agent = try AgentProcess(scratch: scratch, extra: ["--name", name], allowUnpaired: false)
        let out = scratch.path + "/state-agent.out"
        #expect(eventually(5) { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("advertised as \"\(name)\" (_camo._tcp)") },
                "\((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")")
        let browse = try run("/usr/bin/avahi-browse", ["-rtp", "_camo._tcp"])
        let resolved = browse.stdout.split(separator: "\n").filter { $0.hasPrefix("=") && $0.contains(name) }
        #expect(!resolved.isEmpty, "avahi-browse -rt _camo._tcp resolves it: \(browse.stdout) \(browse.stderr)")
        #expect(resolved.first?.contains(";\(agent.port);") == true, "on the agent's port: \(resolved)")
        agent.stop()
    }
}
