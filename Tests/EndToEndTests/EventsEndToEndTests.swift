import Foundation
import Testing

/// The event detectors in the running agent, seen from outside: the synthetic scenes (`--camera test:block`,
/// `test:steps`) make motion where it is and nothing for an exposure change, `camo-agent events --follow --json` and
/// the page's server-sent events (`GET /api/events`, read by curl) deliver the same notices, and `camo-agent settings`
/// refuses bad zones, triggers and time controls with a sentence, changing nothing.
@Suite("End to end: events", .serialized, .timeLimit(.minutes(3)))
struct EventsEndToEndTests {
    /// A left zone over x 0...700 of 2048 (the block's quarter lies inside it) and a right one over x 1300...2048.
    static let leftZone = ##"{"id":1,"name":"left","use":"motion","vertices":[{"x":0,"y":0},{"x":700,"y":0},{"x":700,"y":2048},{"x":0,"y":2048}],"color":"#F439A0"}"##
    static let rightZone = ##"{"id":2,"name":"right","use":"motion","vertices":[{"x":1300,"y":0},{"x":2048,"y":0},{"x":2048,"y":2048},{"x":1300,"y":2048}],"color":"#39A0F4"}"##

    @Test("test:block with a left and a right zone: camo-agent events --follow shows a motion event started in the left zone and nothing in the right one over 12 s; curl on /api/events gets the same started notice")
    func blockInLeftZone() throws {
        guard let curl = tool("curl") else { return }
        let scratch = try Scratch("events-block")
        let agentBinary = try Binaries.path("camo-agent")
        let began = Date()
        let agent = try AgentProcess(scratch: scratch, extra: [
            "--camera", "test:block", "--microphone", "test", "--web", "--web-host", "127.0.0.1", "--web-port", "0",
            "--web-loopback-without-token",
        ])
        defer { agent.stop() }
        #expect(agent.log.contains("synthetic scene block"), "the log names the scene:\n\(agent.log.suffix(2_000))")
        let live = try LiveViewEndToEndTests.liveStatus(agent)
        let pageURL = try #require(live["pageURL"] as? String, "the page is off: \(live)")
        let webPort = try #require(URLComponents(string: pageURL)?.port, "no port in \(pageURL)")

        // Both listeners first: each delivers only what happens after it joined. Then the zones.
        let follower = try Background(agentBinary, ["events", "--state-dir", agent.stateDir, "--follow", "--json"], scratch: scratch, label: "follow")
        defer { follower.stop() }
        // curl ends by itself (--max-time) a little after the 12 s watched (it takes SIGTERM late while it reads).
        let sse = try Background(curl, ["-sk", "-N", "--max-time", "17", "https://127.0.0.1:\(webPort)/api/events"], scratch: scratch, label: "sse")
        #expect(Self.waitFor(seconds: 20) { sse.stdout.contains("retry:") }, "the event stream did not open: \(sse.stdout) \(sse.stderr)")
        print(String(format: "events test:block: agent up and the event stream open after %.1f s", Date().timeIntervalSince(began)))
        Thread.sleep(forTimeInterval: 1.5)  // the follower's first request (what is kept) made
        let zones = try run(agentBinary, ["settings", "--state-dir", agent.stateDir, "zones", "[\(Self.leftZone),\(Self.rightZone)]"])
        try #require(zones.status == 0, "\(zones)")
        Thread.sleep(forTimeInterval: 12)
        follower.stop()
        #expect(sse.wait(seconds: 15) != nil, "curl did not end at its --max-time")

        let notices = follower.stdout.split(separator: "\n").compactMap { Self.notice(String($0)) }
        let summary = notices.map(Self.describe).joined(separator: "; ")
        print("events test:block: \(summary)")
        let leftStarts = notices.filter { $0.kind == "started" && $0.trigger == "motion" && $0.zone == 1 }
        #expect(!leftStarts.isEmpty, "no motion event started in the left zone: \(summary)\n\(follower.stderr)")
        #expect(!notices.contains { $0.zone == 2 }, "motion in the right zone, where nothing moves: \(summary)")
        // Kept by the agent since it started (before the zones, motion over the whole picture): never the right zone.
        let kept = try run(agentBinary, ["events", "--state-dir", agent.stateDir, "--json"])
        let history = kept.stdout.split(separator: "\n").compactMap { Self.notice(String($0)) }
        #expect(!history.isEmpty && !history.contains { $0.zone == 2 }, "\(history.map(Self.describe))")

        // The server-sent events: blocks of `id: N`, `event: KIND`, `data: JSON`.
        let blocks = sse.stdout.components(separatedBy: "\n\n").map { block -> [String: String] in
            var fields: [String: String] = [:]
            for line in block.split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { continue }
                fields[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            }
            return fields
        }
        let first = try #require(leftStarts.first)
        let same = blocks.first { $0["id"] == String(first.sequence) }
        #expect(same?["event"] == "started", "no `id: \(first.sequence)` / `event: started` block in the stream:\n\(sse.stdout.prefix(3_000))")
        let data = same?["data"].flatMap(Self.notice)
        #expect(data?.eventID == first.eventID && data?.zone == 1 && data?.kind == "started", "the stream's data: \(same?["data"] ?? "none")")
        #expect(!blocks.compactMap { $0["data"].flatMap(Self.notice) }.contains { $0.zone == 2 }, "the stream has the right zone")
    }

    @Test("test:steps, no zones, motion on: its brightness steps of ±40 every 3 s make no event over 14 s (four steps)")
    func brightnessSteps() throws {
        let scratch = try Scratch("events-steps")
        let agentBinary = try Binaries.path("camo-agent")
        let agent = try AgentProcess(scratch: scratch, extra: ["--camera", "test:steps", "--microphone", "test"])
        defer { agent.stop() }
        let follower = try Background(agentBinary, ["events", "--state-dir", agent.stateDir, "--follow", "--json"], scratch: scratch, label: "follow")
        defer { follower.stop() }
        let values = try Self.settingValues(agentBinary, stateDir: agent.stateDir)
        #expect(values["enabledEventTriggers"] == "motion,smokeAlarm,coAlarm" && values["zones"] == "[]", "\(values)")
        // The scene's steps come 3, 6, 9 and 12 s after it started (about when the agent printed its port).
        Thread.sleep(forTimeInterval: 14)
        follower.stop()
        #expect(agent.log.contains("synthetic scene steps") && agent.log.contains("Event detectors running"), "\(agent.log.suffix(2_000))")
        #expect(agent.log.contains("triggers=coAlarm,motion,smokeAlarm"), "motion runs:\n\(agent.log.suffix(2_000))")
        let followed = follower.stdout.split(separator: "\n").compactMap { Self.notice(String($0)) }
        #expect(followed.isEmpty, "\(followed.map(Self.describe))")
        let kept = try run(agentBinary, ["events", "--state-dir", agent.stateDir, "--json"])
        #expect(kept.status == 0 && kept.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "events since the start: \(kept)")
        #expect(!agent.log.contains("Event started"), "\(agent.log.suffix(2_000))")
    }

    @Test("camo-agent settings refuses a bow-tie zone, 2 vertices, x 3000, 9 zones, trigger dogbark, personTalking and maxDuration 7, each with a sentence that says why; the settings stay as they were")
    func badSettings() throws {
        let scratch = try Scratch("events-bad")
        let agentBinary = try Binaries.path("camo-agent")
        let agent = try AgentProcess(scratch: scratch, extra: ["--camera", "test:steps", "--microphone", "test"])
        defer { agent.stop() }
        func settings(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(agentBinary, ["settings", "--state-dir", agent.stateDir] + arguments)
        }
        // Values that are not the defaults, so "unchanged" means something.
        for (name, value) in [("zones", "[\(Self.leftZone)]"), ("enabledEventTriggers", "motion,coAlarm"), ("motionTimeControl.maxDuration", "30")] {
            let result = try settings([name, value])
            try #require(result.status == 0, "\(name) \(value): \(result)")
        }
        let before = try Self.settingValues(agentBinary, stateDir: agent.stateDir)
        try #require(
            before["enabledEventTriggers"] == "motion,coAlarm" && before["zones"]?.contains("left") == true
                && before["motionTimeControl.maxDuration"] == "30", "\(before)")

        func zone(_ id: Int, _ vertices: [(Int, Int)]) -> String {
            let points = vertices.map { "{\"x\":\($0.0),\"y\":\($0.1)}" }.joined(separator: ",")
            return ##"{"id":\##(id),"name":"z\##(id)","use":"motion","vertices":[\##(points)],"color":"#F439A0"}"##
        }
        let square = [(0, 0), (200, 0), (200, 200), (0, 200)]
        let cases: [(label: String, name: String, value: String, words: [String])] = [
            ("a bow tie", "zones", "[\(zone(1, [(0, 0), (1000, 1000), (1000, 0), (0, 1000)]))]", ["cross", "simple polygon"]),
            ("2 vertices", "zones", "[\(zone(1, [(0, 0), (1000, 1000)]))]", ["2 vertices", "at least 3"]),
            ("x 3000", "zones", "[\(zone(1, [(0, 0), (3000, 0), (0, 1000)]))]", ["(3000, 0)", "outside the zone space", "0...2048"]),
            ("9 zones", "zones", "[" + (1...9).map { zone($0, square) }.joined(separator: ",") + "]", ["9 zones", "at most 8"]),
            ("dogbark", "enabledEventTriggers", "motion,dogbark", ["'dogbark' is not a trigger", "motion, sound, smokeAlarm, coAlarm"]),
            ("personTalking", "enabledEventTriggers", "personTalking", ["personTalking is not supported", "sound classification"]),
            ("maxDuration 7", "motionTimeControl.maxDuration", "7", ["maxDuration", "10, 15, 30, 60, 120, 180", "7"]),
        ]
        for item in cases {
            let result = try settings([item.name, item.value])
            let missing = item.words.filter { !result.stderr.contains($0) }
            #expect(result.status != 0 && missing.isEmpty, "\(item.label): missing \(missing) in: \(result)")
            #expect(result.stderr.split(separator: "\n").count <= 2, "\(item.label): one sentence, not a dump: \(result.stderr)")
        }
        let after = try Self.settingValues(agentBinary, stateDir: agent.stateDir)
        // A scene that does not exist is refused at start, with the ones there are.
        let unknown = try run(agentBinary, ["run", "--camera", "test:nope", "--microphone", "test", "--port", "0", "--state-dir", scratch.path + "/nope", "--no-web", "--no-rtsp", "--no-mdns"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no synthetic camera test:nope") && unknown.stderr.contains("test:block, test:steps"), "\(unknown)")
        #expect(before.count == Self.eventSettings.count, "\(before.keys.sorted())")
        #expect(after == before, "the settings changed:\nbefore \(before)\nafter \(after)")
    }

    // MARK: Helpers

    /// The fields of one EventNotice JSON line the tests look at.
    struct Notice {
        var sequence: Int
        var kind: String
        var trigger: String
        var zone: Int?
        var eventID: Int
    }

    static func notice(_ line: String) -> Notice? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let event = object["event"] as? [String: Any], let sequence = object["sequence"] as? Int, let kind = object["kind"] as? String,
            let trigger = event["trigger"] as? String, let id = event["id"] as? Int
        else { return nil }
        return Notice(sequence: sequence, kind: kind, trigger: trigger, zone: event["zoneID"] as? Int, eventID: id)
    }

    static func describe(_ notice: Notice) -> String {
        "\(notice.sequence) \(notice.kind) \(notice.trigger)\(notice.zone.map { " zone \($0)" } ?? "") (event \(notice.eventID))"
    }

    static let eventSettings: Set<String> = [
        "enabledEventTriggers", "motionSensitivity", "motionTimeControl.initialDuration", "motionTimeControl.augmentationDuration",
        "motionTimeControl.maxDuration", "motionTimeControl.blindDuration", "soundThreshold", "zones",
    ]

    /// The event settings' values (from `camo-agent settings --json`), as text.
    static func settingValues(_ agentBinary: String, stateDir: String) throws -> [String: String] {
        let result = try run(agentBinary, ["settings", "--state-dir", stateDir, "--json"])
        guard result.status == 0, let list = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] else {
            throw CheckError("camo-agent settings --json: \(result)")
        }
        var values: [String: String] = [:]
        for item in list {
            guard let name = item["name"] as? String, let value = item["value"], Self.eventSettings.contains(name) else { continue }
            values[name] = "\(value)"
        }
        return values
    }

    static func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }
}

extension Background {
    /// Ends it with SIGTERM and waits (a follower or curl runs until stopped).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
