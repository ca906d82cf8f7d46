import CamoTestSupport
import Foundation
import Testing

/// A command running in the background with its output in files; killed at the end if still running.
final class Background {
    let process = Process()
    let stdoutPath: String
    let stderrPath: String

    init(_ executable: String, _ arguments: [String], scratch: Scratch, label: String) throws {
        stdoutPath = scratch.path + "/\(label).stdout"
        stderrPath = scratch.path + "/\(label).stderr"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Waits up to `seconds` for the exit; nil when it is still running.
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The repository root (for scripts/avahi-test).
enum Repository {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Starts the test avahi-daemon (loopback only) if it is not running; records why when it cannot.
    static func avahiUp() throws {
        let result = try run("/bin/bash", [root + "/scripts/avahi-test", "up"])
        guard result.status == 0 else {
            Issue.record("scripts/avahi-test up failed; the pairing tests need avahi-daemon:\n\(result.stderr)")
            throw HarnessError.agentDidNotStart("no avahi-daemon")
        }
    }
}

/// Waits until `condition` holds, up to `seconds`; returns whether it did.
func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return condition()
}

/// Pairing with separate `camo-agent` and `camo-studio` processes and the real avahi-daemon: by pasted code,
/// by the agent's camera scanning the studio's PNG, then KK sessions without any QR, unpairing, a wrong
/// secret, and garbage on both ports. Serialized: the agents share one avahi-daemon (each has a unique name).
@Suite("Pairing end to end (real processes, real avahi-daemon)", .serialized)
struct PairingEndToEndTests {
    static func unique(_ label: String) -> String { "\(label)-\(UUID().uuidString.prefix(6))" }

    /// `camo-studio pair` in the background; returns it once its payload file exists.
    static func studioPair(scratch: Scratch, state: String, name: String, extra: [String] = []) throws -> (Background, String) {
        let payloadFile = scratch.path + "/\(name).payload"
        let studio = try Background(
            try Binaries.path("camo-studio"),
            ["pair", "--state-dir", state, "--name", name, "--payload-file", payloadFile, "--png", scratch.path + "/\(name).png", "--no-qr"] + extra,
            scratch: scratch, label: "pair-\(name)")
        guard eventually(10, { FileManager.default.fileExists(atPath: payloadFile) && ((try? String(contentsOfFile: payloadFile, encoding: .utf8))?.hasSuffix("\n") ?? false) }) else {
            Issue.record("camo-studio pair wrote no payload: \(studio.stderr)")
            throw HarnessError.studioFailed(status: -1, stderr: studio.stderr)
        }
        return (studio, payloadFile)
    }

    static func record(studioState: String, agent: String, scratch: Scratch, label: String, seconds: Double = 5) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(try Binaries.path("camo-studio"), [
            "record", "--agent", agent, "--state-dir", studioState, "--seconds", "\(seconds)", "--out", scratch.path + "/" + label,
            "--no-pixels", "--size", "640x360",
        ])
    }

    @Test func pairByCodeThenKKAfterRestartsThenUnpairRefuses() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("pair-code")
        let agentName = Self.unique("agent")
        let studioState = scratch.path + "/studio"
        var agent: AgentProcess? = try AgentProcess(scratch: scratch, extra: ["--name", agentName], allowUnpaired: false)
        let stateDir = try #require(agent?.stateDir)

        let (studio, payloadFile) = try Self.studioPair(scratch: scratch, state: studioState, name: "Studio-A")
        let pair = try run(try Binaries.path("camo-agent"), ["pair", "--file", payloadFile, "--state-dir", stateDir])
        #expect(pair.status == 0, "camo-agent pair: \(pair.stdout) \(pair.stderr)")
        #expect(pair.stdout.contains("Paired with studio Studio-A"), "\(pair.stdout)")
        #expect(studio.wait(seconds: 15) == 0, "camo-studio pair: \(studio.stdout) \(studio.stderr)")
        #expect(studio.stdout.contains("Paired with agent \(agentName)"), "\(studio.stdout)")

        let paired = try run(try Binaries.path("camo-agent"), ["paired", "--state-dir", stateDir])
        let lines = paired.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ID") == true, "a header line: \(paired.stdout)")
        #expect(lines.count == 2 && lines[1].contains("Studio-A"), "\(paired.stdout)")
        let studioId = String(lines.count == 2 ? lines[1].split(separator: " ").first ?? "" : "")
        let json = try run(try Binaries.path("camo-agent"), ["paired", "--json", "--state-dir", stateDir])
        #expect(json.stdout.contains("\"\(studioId)\""), "\(json.stdout)")

        // Both restart; the studio records 5 s with KK, found by mDNS, without any QR.
        agent?.stop()
        agent = nil
        agent = try AgentProcess(scratch: scratch, extra: ["--name", agentName], allowUnpaired: false)
        let recorded = try Self.record(studioState: studioState, agent: agentName, scratch: scratch, label: "kk")
        #expect(recorded.status == 0, "record --agent: \(recorded.stderr)")
        let summary = (try? JSONSerialization.jsonObject(with: Data(recorded.stdout.split(separator: "\n").last.map { Data($0.utf8) } ?? Data()))) as? [String: Any] ?? [:]
        let frames = (summary["frames"] as? Int) ?? (summary["videoFrames"] as? Int) ?? 0
        #expect(frames >= 140, "5 s at 30 fps over KK: \(recorded.stdout)")
        #expect(agent?.log.contains("Studio connected") == true)

        // Listed by camo-studio agents, marked paired.
        let agents = try run(try Binaries.path("camo-studio"), ["agents", "--state-dir", studioState, "--seconds", "2"])
        let row = agents.stdout.split(separator: "\n").first { $0.contains(agentName) }
        #expect(row?.hasSuffix("yes") == true, "camo-studio agents: \(agents.stdout) \(agents.stderr)")

        // Unpaired: the same studio is refused with a reason that says it is not paired.
        let unpair = try run(try Binaries.path("camo-agent"), ["unpair", studioId, "--state-dir", stateDir])
        #expect(unpair.status == 0, "\(unpair.stderr)")
        let refused = try Self.record(studioState: studioState, agent: agentName, scratch: scratch, label: "refused", seconds: 2)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("not paired"), "\(refused.stderr)")
        #expect(agent?.log.contains("Refused a studio") == true, "the attempt is logged")
        agent?.stop()
    }

    /// The agent binary, watched by python-zeroconf (an mDNS stack independent of avahi): `_camo._tcp` with its
    /// TXT within 3 s of the start; `_camopairing._tcp` only while the window is open.
    @Test func zeroconfSeesTheAgentAndItsPairingWindow() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("zeroconf")
        let name = Self.unique("zc")
        let browser = try Background(
            "/usr/bin/python3", [Repository.root + "/scripts/zeroconf-browse.py", "--type", "_camo._tcp", "--type", "_camopairing._tcp", "--timeout", "40"],
            scratch: scratch, label: "zeroconf")
        #expect(eventually(10) { browser.stdout.contains("\"ready\"") }, "zeroconf-browse started: \(browser.stderr)")
        let started = Date()
        let agent = try AgentProcess(scratch: scratch, extra: ["--name", name], allowUnpaired: false)
        func events(_ kind: String, _ type: String) -> [[String: Any]] {
            browser.stdout.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }.filter { ($0["event"] as? String) == kind && ($0["type"] as? String) == type && ($0["name"] as? String) == name }
        }
        #expect(eventually(3) { !events("add", "_camo._tcp").isEmpty }, "seen within 3 s of the start: \(browser.stdout)")
        let seenAfter = Date().timeIntervalSince(started)
        let txt = (events("add", "_camo._tcp") + events("update", "_camo._tcp")).last?["txt"] as? [String: String] ?? [:]
        let identity = try String(contentsOfFile: agent.stateDir + "/agent.json", encoding: .utf8)
        #expect(txt["v"] == "1" && txt["name"] == name && txt["sw"] != nil && txt["model"]?.hasPrefix("Linux") == true, "\(txt)")
        #expect(txt["id"].map { identity.contains($0) } == true, "the TXT id is the agent's: \(txt) vs \(identity)")
        #expect(events("add", "_camopairing._tcp").isEmpty, "no pairing service before a window opens")

        // A window for a studio that never comes (it waits on a closed port), then cancelled.
        let (studio, payloadFile) = try Self.studioPair(scratch: scratch, state: scratch.path + "/studio", name: "Studio-Z", extra: ["--connect", "127.0.0.1:9"])
        let pairing = try Background(try Binaries.path("camo-agent"), ["pair", "--file", payloadFile, "--state-dir", agent.stateDir], scratch: scratch, label: "pair-z")
        #expect(eventually(5) { !events("add", "_camopairing._tcp").isEmpty }, "the pairing service appears: \(browser.stdout)")
        let pairingTXT = events("add", "_camopairing._tcp").last?["txt"] as? [String: String] ?? [:]
        let studioId = try #require(try String(contentsOfFile: payloadFile, encoding: .utf8).split(separator: "&").first { $0.hasPrefix("id=") || $0.contains("?id=") }?.split(separator: "=").last)
        #expect(pairingTXT["studio"] == String(studioId), "the TXT names the studio it waits for: \(pairingTXT)")
        let cancel = try run(try Binaries.path("camo-agent"), ["pair", "--cancel", "--state-dir", agent.stateDir])
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(eventually(3) { !events("remove", "_camopairing._tcp").isEmpty }, "the pairing service is withdrawn: \(browser.stdout)")
        #expect(events("remove", "_camo._tcp").isEmpty, "_camo._tcp stays")
        #expect(pairing.wait(seconds: 5) == 130, "camo-agent pair reports the cancel: \(pairing.stderr)")
        kill(studio.process.processIdentifier, SIGKILL)
        agent.stop()
        #expect(eventually(3) { !events("remove", "_camo._tcp").isEmpty }, "_camo._tcp leaves with the agent")
        print("zeroconf saw the agent \(String(format: "%.2f", seenAfter)) s after its start")
    }

    /// The agent binary across an avahi-daemon restart, and two agents with one name: a fresh python-zeroconf
    /// browser sees both services again within 5 s of the daemon answering, and the second agent's services
    /// both carry another name.
    @Test func theAgentBinarySurvivesADaemonRestartAndRenamesOnACollision() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("restart")
        let name = Self.unique("rs")
        let agent = try AgentProcess(scratch: scratch, extra: ["--name", name], allowUnpaired: false)
        let second = try AgentProcess(scratch: scratch, extra: ["--name", name], allowUnpaired: false, stateName: "second")
        // A window on the first agent, so both of its services are up (its studio waits on a closed port).
        let (studio, payloadFile) = try Self.studioPair(scratch: scratch, state: scratch.path + "/studio", name: "Studio-R", extra: ["--connect", "127.0.0.1:9"])
        let pairing = try Background(try Binaries.path("camo-agent"), ["pair", "--file", payloadFile, "--state-dir", agent.stateDir], scratch: scratch, label: "pair-r")
        #expect(eventually(5) { agent.log.contains("Pairing listener ready") }, "\(agent.log.suffix(1000))")

        func browse(_ label: String, seconds: Double) throws -> [[String: Any]] {
            let out = try run("/usr/bin/python3", [Repository.root + "/scripts/zeroconf-browse.py", "--type", "_camo._tcp", "--type", "_camopairing._tcp", "--timeout", "\(seconds)"])
            return out.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }
        func names(_ events: [[String: Any]], _ type: String) -> Set<String> {
            Set(events.filter { ($0["event"] as? String) != "remove" && ($0["type"] as? String) == type }.compactMap { $0["name"] as? String }.filter { $0.hasPrefix(name) })
        }
        let before = try browse("before", seconds: 3)
        #expect(names(before, "_camo._tcp") == [name, name + " #2"], "two agents, two names: \(names(before, "_camo._tcp"))")
        #expect(names(before, "_camopairing._tcp") == [name], "the pairing service carries the first agent's name")
        #expect(second.log.contains("#2"), "the second agent logs its new name")

        // SIGTERM the daemon, start it again: the agents publish again on their own.
        #expect(try run("/bin/bash", [Repository.root + "/scripts/avahi-test", "stop-daemon"]).status == 0)
        #expect(eventually(5) { agent.log.contains("avahi-daemon went away") }, "the agent noticed: \(agent.log.suffix(800))")
        #expect(try run("/bin/bash", [Repository.root + "/scripts/avahi-test", "start-daemon"]).status == 0)
        let answered = Date()
        var after: [[String: Any]] = []
        var seenAt: Double?
        while Date().timeIntervalSince(answered) < 5 {
            after = try browse("after", seconds: 1.5)
            if names(after, "_camo._tcp") == [name, name + " #2"], names(after, "_camopairing._tcp") == [name] {
                seenAt = Date().timeIntervalSince(answered)
                break
            }
        }
        #expect(seenAt != nil, "a fresh browser saw both services within 5 s of the daemon answering: \(after)")
        print("after the daemon restart a fresh browser saw both services \(String(format: "%.2f", seenAt ?? -1)) s after it answered")
        kill(studio.process.processIdentifier, SIGKILL)
        kill(pairing.process.processIdentifier, SIGKILL)
        second.stop()
        agent.stop()
    }

    /// The code on standard input.
    @Test func pairReadsTheCodeFromStandardInput() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("stdin")
        let agent = try AgentProcess(scratch: scratch, extra: ["--name", Self.unique("stdin")], allowUnpaired: false)
        let (studio, payloadFile) = try Self.studioPair(scratch: scratch, state: scratch.path + "/studio", name: "Studio-S")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Binaries.path("camo-agent"))
        process.arguments = ["pair", "--state-dir", agent.stateDir]
        process.standardInput = FileHandle(forReadingAtPath: payloadFile)
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("Paired with studio Studio-S"))
        #expect(studio.wait(seconds: 15) == 0)
        agent.stop()
    }

    @Test func pairByScanningTheStudiosQRCodeWithTheCamera() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("pair-scan")
        let studioState = scratch.path + "/studio"
        let (studio, _) = try Self.studioPair(scratch: scratch, state: studioState, name: "Studio-B")
        let png = scratch.path + "/Studio-B.png"
        let agent = try AgentProcess(
            scratch: scratch, extra: ["--name", Self.unique("scan"), "--camera", "image:" + png], allowUnpaired: false)
        let pair = try run(try Binaries.path("camo-agent"), ["pair", "--scan", "--state-dir", agent.stateDir])
        #expect(pair.status == 0, "camo-agent pair --scan: \(pair.stdout) \(pair.stderr)\n\(agent.log.suffix(2000))")
        #expect(pair.stdout.contains("Scanning for the studio's QR code"), "the countdown is shown: \(pair.stdout)")
        #expect(pair.stdout.contains("Paired with studio Studio-B"))
        #expect(studio.wait(seconds: 15) == 0, "camo-studio pair: \(studio.stderr)")
        agent.stop()
    }

    /// Codes that are not valid pairing codes are reported while scanning, not silently skipped.
    @Test func scanningReportsACodeThatIsNotAPairingCode() throws {
        let scratch = try Scratch("scan-bad")
        let png = Repository.root + "/pairing-fixtures/version-2.png"
        let agent = try AgentProcess(
            scratch: scratch, extra: ["--name", Self.unique("scanbad"), "--camera", "image:" + png, "--no-mdns"], allowUnpaired: false)
        let scan = try Background(try Binaries.path("camo-agent"), ["pair", "--scan", "--state-dir", agent.stateDir], scratch: scratch, label: "scan")
        #expect(eventually(10) { scan.stdout.contains("seen a code that is not valid: unknownVersion") }, "\(scan.stdout) \(scan.stderr)")
        #expect(agent.log.contains("Saw a QR code that is not a valid pairing code"), "logged too")
        let cancel = try run(try Binaries.path("camo-agent"), ["pair", "--cancel", "--state-dir", agent.stateDir])
        #expect(cancel.status == 0)
        #expect(scan.wait(seconds: 5) == 130, "\(scan.stderr)")
        #expect(scan.stdout.components(separatedBy: "seen a code that is not valid").count == 2, "reported once, not per frame: \(scan.stdout)")
        agent.stop()
    }

    @Test func aWrongSecretFailsAndTheWindowStillClosesAt30Seconds() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("pair-wrong")
        let agent = try AgentProcess(scratch: scratch, extra: ["--name", Self.unique("wrong")], allowUnpaired: false)
        // The studio keeps waiting for a window it can pair with until its code expires (35 s here).
        let (studio, payloadFile) = try Self.studioPair(scratch: scratch, state: scratch.path + "/studio", name: "Studio-C", extra: ["--lifetime", "35"])
        // The same studio id with another secret: the studio's real secret will not match.
        let payload = try String(contentsOfFile: payloadFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let forged = payload.replacingOccurrences(
            of: #"secret=[A-Za-z0-9_-]{43}"#, with: "secret=" + String(repeating: "A", count: 42) + "E", options: .regularExpression)
        #expect(forged != payload)
        let started = Date()
        let pair = try run(try Binaries.path("camo-agent"), ["pair", forged, "--state-dir", agent.stateDir])
        let elapsed = Date().timeIntervalSince(started)
        #expect(pair.status == 1, "\(pair.stdout) \(pair.stderr)")
        #expect(pair.stderr.contains("No studio completed pairing within 30 seconds"), "\(pair.stderr)")
        #expect(elapsed > 29 && elapsed < 45, "the window ran its 30 s: \(elapsed) s")
        #expect(studio.wait(seconds: 15) == 1, "the studio failed to pair: \(studio.stderr)")
        #expect(studio.stderr.contains("failed"), "the studio said why: \(studio.stderr)")
        #expect(agent.log.contains("A pairing handshake failed"), "the wrong secret is logged")
        let paired = try run(try Binaries.path("camo-agent"), ["paired", "--json", "--state-dir", agent.stateDir])
        #expect(paired.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]" || paired.stdout.contains("[]"), "\(paired.stdout)")
        agent.stop()
    }

    @Test func aThousandGarbageConnectionsLeaveTheAgentServing() throws {
        try Repository.avahiUp()
        let scratch = try Scratch("garbage")
        let agent = try AgentProcess(scratch: scratch, extra: ["--name", Self.unique("garbage")], allowUnpaired: false)
        let (studio, payloadFile) = try Self.studioPair(scratch: scratch, state: scratch.path + "/studio", name: "Studio-D")
        // Kill the studio's own pairing so the window stays open for the garbage.
        kill(studio.process.processIdentifier, SIGKILL)
        let pairing = try Background(
            try Binaries.path("camo-agent"), ["pair", "--file", payloadFile, "--state-dir", agent.stateDir], scratch: scratch, label: "pair-d")
        var pairingPort = 0
        _ = eventually(10) {
            let log = agent.log
            // swift-log prints the metadata first: "... port=N [CamoProducerKit] Pairing listener ready".
            if let range = log.range(of: #"port=\d+ \[CamoProducerKit\] Pairing listener ready"#, options: .regularExpression) {
                pairingPort = Int(log[range].dropFirst(5).prefix { $0.isNumber }) ?? 0
            }
            return pairingPort > 0
        }
        #expect(pairingPort > 0, "the pairing listener's port is logged: \(agent.log.suffix(1500))")
        var generator = SeededGenerator(seed: 0xE2E_5EED)
        var sent = 0
        for n in 0..<1000 {
            let port = n % 2 == 0 ? agent.port : pairingPort
            var bytes = [UInt8](repeating: 0, count: Int.random(in: 1...300, using: &generator))
            for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
            // Half start like a real preamble, so the garbage reaches the handshake.
            if n % 4 < 2 { bytes = Array("CAMO".utf8) + [1, 0, UInt8(1 + n % 3), 0] + bytes }
            if RawSocket.sendAndClose(port: port, bytes: bytes) { sent += 1 }
        }
        #expect(sent == 1000, "every garbage connection was accepted by the kernel")
        let status = try agent.status()
        #expect(!status.isEmpty, "the agent still answers its control socket")
        // Ctrl-C on `camo-agent pair` cancels the window.
        kill(pairing.process.processIdentifier, SIGINT)
        #expect(pairing.wait(seconds: 5) == 130, "pair after Ctrl-C: \(pairing.stdout) \(pairing.stderr)")
        #expect(pairing.stderr.contains("cancelled"), "\(pairing.stderr)")
        // Still serving: a new window takes the real studio.
        let (studio2, payload2) = try Self.studioPair(scratch: scratch, state: scratch.path + "/studio", name: "Studio-E")
        let pair = try run(try Binaries.path("camo-agent"), ["pair", "--file", payload2, "--state-dir", agent.stateDir])
        #expect(pair.status == 0, "pairing after the garbage: \(pair.stdout) \(pair.stderr)")
        #expect(studio2.wait(seconds: 15) == 0, "\(studio2.stderr)")
        #expect(agent.process.isRunning)
        agent.stop()
    }

    @Test func thePairedDeviceListSurvivesSIGKILL200Times() throws {
        let scratch = try Scratch("store-kill")
        var generator = SeededGenerator(seed: 0xE2E_5EED)
        var checked = 0
        var mostChanges = 0
        for round in 0..<200 {
            let state = scratch.path + "/state-\(round)"
            let churn = try Background(try Binaries.path("camo-agent"), ["debug-store-churn", "--state-dir", state], scratch: scratch, label: "churn")
            // From the first change on disk on (a loaded machine may take longer than a random wait to start the
            // process), then a random moment within the next 100 ms.
            _ = eventually(10) { churn.stdout.contains("\n") }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.1, using: &generator))
            kill(churn.process.processIdentifier, SIGKILL)
            churn.process.waitUntilExit()
            let printed = churn.stdout.split(separator: "\n").compactMap { Int($0) }.last ?? 0
            defer { try? FileManager.default.removeItem(atPath: state) }
            guard let data = FileManager.default.contents(atPath: state + "/paired.json") else {
                #expect(printed == 0, "round \(round): the file is missing after change \(printed)")
                continue
            }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let content = object["content"] as? [[String: Any]]
            else {
                Issue.record("round \(round): paired.json does not parse after SIGKILL: \(String(decoding: data, as: UTF8.self))")
                continue
            }
            let ids = content.compactMap { $0["id"] as? String }
            // The change in flight when the kill came may or may not have landed: old list or new list.
            let acceptable = [Self.listAfter(printed), Self.listAfter(printed + 1)]
            #expect(acceptable.contains(ids), "round \(round): \(ids) is neither the list after change \(printed) nor \(printed + 1)")
            mostChanges = max(mostChanges, printed)
            checked += 1
        }
        #expect(checked == 200, "every kill came after the first write: \(checked) of 200")
        #expect(mostChanges > 3, "the churn made progress before the kills")
    }

    /// The list after change `k` of `camo-agent debug-store-churn` (odd k adds studio k, even k removes k-3).
    static func listAfter(_ k: Int) -> [String] {
        var list: [String] = []
        guard k > 0 else { return list }
        for change in 1...k {
            if change % 2 == 1 { list.append("studio-\(change)") } else { list.removeAll { $0 == "studio-\(change - 3)" } }
        }
        return list
    }
}

/// A plain TCP client for garbage: connect, send, close.
enum RawSocket {
    static func sendAndClose(port: Int, bytes: [UInt8]) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return true
    }
}
