import CamoStudioKit
import CamoWire
import Foundation
import Testing

/// `camo-agent run` under SIGTERM: at once after exec and mid-stream, it exits 0 within 2 s, says goodbye to
/// its studios, and leaves no agent.json or control socket behind.
@Suite("camo-agent shuts down gracefully at any moment", .serialized, .timeLimit(.minutes(3)))
struct ShutdownTests {
    /// Starts the agent with its own runtime directory, so the test can see the socket.
    static func launch(_ scratch: Scratch, extra: [String] = []) throws -> (Process, state: String, runtime: String, log: String) {
        let state = scratch.path + "/state"
        let runtime = scratch.path + "/run"
        let log = scratch.path + "/agent.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Binaries.path("camo-agent"))
        process.arguments = [
            "run", "--camera", "test", "--microphone", "test", "--port", "0", "--state-dir", state, "--runtime-dir", runtime, "--no-web", "--no-rtsp",
            "--allow-unpaired", "--no-mdns",
        ] + extra
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        return (process, state, runtime, log)
    }

    /// Waits up to `seconds` for the process to end; true when it did.
    static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return !process.isRunning
    }

    static func leftovers(state: String, runtime: String) -> [String] {
        let inState = ((try? FileManager.default.contentsOfDirectory(atPath: state)) ?? []).filter { $0 == "agent.json" || $0.hasSuffix(".sock") }
        let inRuntime = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
        return inState + inRuntime
    }

    @Test(arguments: [50, 50, 50, 120, 300])
    func sigtermDuringStartup(afterMilliseconds delay: Int) throws {
        let scratch = try Scratch("sigterm-start")
        let (process, state, runtime, log) = try Self.launch(scratch)
        Thread.sleep(forTimeInterval: Double(delay) / 1000)
        kill(process.processIdentifier, SIGTERM)
        let exited = Self.waitForExit(process, seconds: 2)
        if !exited { process.interrupt(); kill(process.processIdentifier, SIGKILL) }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(exited, "exits within 2 s of SIGTERM \(delay) ms after exec: \(output)")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "exit 0, not killed by the signal: \(process.terminationReason.rawValue)/\(process.terminationStatus): \(output)")
        #expect(Self.leftovers(state: state, runtime: runtime).isEmpty, "left behind: \(Self.leftovers(state: state, runtime: runtime))")
    }

    @Test func sigtermMidStreamSaysGoodbye() async throws {
        let scratch = try Scratch("sigterm-stream")
        let (process, state, runtime, log) = try Self.launch(scratch)
        var port: Int?
        for _ in 0..<400 where port == nil {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").first { $0.hasPrefix("port=") }.flatMap { Int($0.dropFirst(5)) }
            try await Task.sleep(for: .milliseconds(25))
        }
        let agentPort = try #require(port, "the agent printed its port")
        let studio = try await StudioClient.connect(
            host: "127.0.0.1", port: agentPort, configuration: StudioClientConfiguration(identity: .generated(), studioName: "Goodbye"))
        var frames = 0
        var closedBy: StudioCloseReason?
        var signalled: Date?
        for await event in studio.events {
            switch event {
            case .video:
                frames += 1
                if frames == 30 {
                    #expect(FileManager.default.fileExists(atPath: state + "/agent.json"))
                    #expect(FileManager.default.fileExists(atPath: runtime + "/control.sock"))
                    signalled = Date()
                    kill(process.processIdentifier, SIGTERM)
                }
            case .closed(let reason):
                closedBy = reason
            default:
                break
            }
        }
        let exited = Self.waitForExit(process, seconds: 2)
        if !exited { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(signalled != nil, "30 frames arrived before the signal")
        #expect(exited, "exits within 2 s of SIGTERM: \(output)")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "exit 0: \(output)")
        if case .agentGoodbye(let code, let reason) = closedBy {
            #expect(code == WireErrorCode.shuttingDown.rawValue, "\(reason)")
        } else {
            Issue.record("the studio got no goodbye: \(String(describing: closedBy))")
        }
        #expect(Self.leftovers(state: state, runtime: runtime).isEmpty, "left behind: \(Self.leftovers(state: state, runtime: runtime))")
    }
}

/// What `camo-agent run` prints about discovery: one line, whether or not avahi-daemon can be reached.
@Suite("camo-agent says whether studios can find it", .serialized, .timeLimit(.minutes(2)))
struct DiscoveryLineTests {
    @Test func withoutASystemBusItSaysInOneLineHowToConnect() throws {
        let scratch = try Scratch("no-bus")
        let out = scratch.path + "/agent.out"
        let log = scratch.path + "/agent.log"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Binaries.path("camo-agent"))
        process.arguments = [
            "run", "--camera", "test", "--microphone", "test", "--port", "0", "--state-dir", scratch.path + "/state", "--no-web", "--no-rtsp",
            "--runtime-dir", scratch.path + "/run",
        ]
        // libdbus takes the system bus from here: no bus answers, so avahi-daemon cannot be reached.
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + scratch.path + "/no-such-bus"
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func lines() -> [String] { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        #expect(eventually(8) { lines().count >= 2 }, "two lines: \(lines()) \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let output = lines()
        let port = try #require(output.first.flatMap { $0.hasPrefix("port=") ? Int($0.dropFirst(5)) : nil }, "\(output)")
        #expect(output.count == 2, "exactly one line about discovery: \(output)")
        let line = output.count > 1 ? output[1] : ""
        #expect(line.hasPrefix("discovery is off: "), "\(line)")
        #expect(line.contains("D-Bus system bus") || line.contains("avahi-daemon"), "it says why: \(line)")
        #expect(line.hasSuffix("connect with: camo-studio record --connect \(ProcessInfo.processInfo.hostName):\(port)"), "\(line)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }
}
