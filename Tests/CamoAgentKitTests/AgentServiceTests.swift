import CamoAgentKit
import CamoProducerKit
import CamoStudioKit
import CamoWire
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// A scratch directory (owner-only) with `state` and `run` inside, removed at the end.
struct ServiceScratch: ~Copyable {
    let path: String
    var state: String { path + "/state" }
    var runtime: String { path + "/run" }

    init() throws {
        path = NSTemporaryDirectory() + "camo-service-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The files the agent leaves in its state and runtime directories.
    func leftovers() -> [String] {
        let state = (try? FileManager.default.contentsOfDirectory(atPath: self.state)) ?? []
        let runtime = (try? FileManager.default.contentsOfDirectory(atPath: self.runtime)) ?? []
        return state.filter { $0 == "agent.json" } + runtime
    }

    func configuration() -> AgentConfiguration {
        var configuration = AgentConfiguration()
        configuration.port = 0
        configuration.camera = "test"
        configuration.microphone = "test"
        configuration.mdns = false
        configuration.web = false
        configuration.rtsp = false
        configuration.allowUnpaired = true
        configuration.stateDir = state
        configuration.runtimeDir = runtime
        configuration.name = "Service test"
        return configuration
    }
}

@Suite("AgentService: the agent as a service", .serialized, .timeLimit(.minutes(1)))
struct AgentServiceTests {
    static var logger: Logger {
        var logger = Logger(label: "agent-service-test")
        logger.logLevel = .critical
        return logger
    }

    @Test func startsReportsReadyFeedsTheWatchdogAndLeavesNothingBehind() async throws {
        let scratch = try ServiceScratch()
        let listener = try NotifyListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "300000"])
        let events = Mutex<[AgentService.Event]>([])
        let service = AgentService(configuration: scratch.configuration(), logger: Self.logger, notifier: notifier) { event in
            events.withLock { $0.append(event) }
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: service)], logger: Self.logger))
        let running = Task { try await group.run() }

        let startup = await listener.receive(seconds: 20) { $0.contains { $0.hasPrefix("READY=1") } }
        let ready = try #require(startup.first { $0.hasPrefix("READY=1") }, "READY=1 within 20 s: \(startup)")
        #expect(ready.contains("discovery off"), "mdns is off in this test: \(ready)")
        let port = try #require(events.withLock { $0 }.compactMap { if case .listening(let port) = $0 { port } else { nil } }.first)
        #expect(events.withLock { $0 }.last == .ready(discovery: .off(
            reason: "mDNS publishing is turned off (mdns false / --no-mdns)",
            connect: "camo-studio record --connect \(ProcessInfo.processInfo.hostName):\(port)")))
        #expect(FileManager.default.fileExists(atPath: scratch.state + "/agent.json"))
        #expect(FileManager.default.fileExists(atPath: scratch.runtime + "/control.sock"), "the socket is in the runtime directory")
        #expect(!FileManager.default.fileExists(atPath: scratch.state + "/control.sock"))

        // A studio: the hello names the synthetic sources as the spec does. It takes small JPEG frames: at 1280x720
        // BGRA its 64 MB backlog filled within a second whenever the parallel unit run kept its reading task from the
        // shared pool, and the agent then closed it as stalled before the goodbye (a full unit run here, November 27).
        var configuration = StudioClientConfiguration(identity: .generated(), studioName: "Watcher")
        configuration.preferredWidth = 320
        configuration.preferredHeight = 180
        configuration.codec = .jpeg
        let studio = try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration)
        #expect(studio.agent.camera == "synthetic test pattern")
        #expect(studio.agent.microphone == "synthetic tone")
        // The studio reads as a real one does, all along: a studio that stops reading may not get the goodbye, which
        // waits behind the frames it did not read (the agent closes after 1 s; PROTOCOL.md, "Backlog").
        let closing = Task { () -> StudioCloseReason? in
            var reason: StudioCloseReason?
            for await event in studio.events { if case .closed(let why) = event { reason = why } }
            return reason
        }

        // Capture runs, so the watchdog is fed every half interval.
        let fed = await listener.receive(seconds: 5) { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 }
        #expect(fed.filter { $0 == "WATCHDOG=1" }.count >= 3, "\(fed)")

        await group.triggerGracefulShutdown()
        try await running.value
        let closedBy = await closing.value
        if case .agentGoodbye(let code, _) = closedBy {
            #expect(code == WireErrorCode.shuttingDown.rawValue)
        } else {
            Issue.record("the studio got no goodbye: \(String(describing: closedBy))")
        }
        let stopping = await listener.receive(seconds: 2) { $0.contains { $0.hasPrefix("STOPPING=1") } }
        #expect(stopping.contains { $0.hasPrefix("STOPPING=1") }, "\(stopping)")
        #expect(scratch.leftovers().isEmpty, "no agent.json or socket left: \(scratch.leftovers())")
        #expect(service.controller == nil)
    }

    @Test(arguments: [0, 1, 5, 20, 60, 150])
    func aShutdownAtAnyMomentOfStartupLeavesNothingBehind(afterMilliseconds delay: Int) async throws {
        let scratch = try ServiceScratch()
        let service = AgentService(configuration: scratch.configuration(), logger: Self.logger, notifier: SystemdNotifier(environment: [:]))
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: service)], logger: Self.logger))
        let running = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(delay))
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(scratch.leftovers().isEmpty, "after \(delay) ms: \(scratch.leftovers())")
        // The state directory's lock is free again: another service can start on it.
        let again = AgentService(configuration: scratch.configuration(), logger: Self.logger, notifier: SystemdNotifier(environment: [:]))
        let task = Task { try await again.run() }
        for _ in 0..<200 where again.controller == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(again.controller != nil, "a second service starts on the same state directory")
        task.cancel()
        try await task.value
        #expect(scratch.leftovers().isEmpty)
    }

    @Test func aRuntimeDirectoryOpenToOthersIsRefusedWithWhatToDo() async throws {
        let scratch = try ServiceScratch()
        var configuration = scratch.configuration()
        let shared = scratch.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        chmod(shared, 0o777)
        configuration.runtimeDir = shared
        let service = AgentService(configuration: configuration, logger: Self.logger, notifier: SystemdNotifier(environment: [:]))
        let error = await #expect(throws: (any Error).self) { try await service.run() }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains(shared) && text.contains("open to others") && text.contains("--runtime-dir"), "\(text)")
        #expect(scratch.leftovers().isEmpty, "what had started was undone: \(scratch.leftovers())")
    }

    /// The SDK's error says what went wrong in its own terms; the service adds the agent's flag and config key.
    @Test func aPortInUseNamesTheFlagAndTheKey() async throws {
        let scratch = try ServiceScratch()
        let holder = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) == 0 && listen(holder, 1) == 0 && getsockname(holder, $0, &length) == 0 }
        }
        try #require(bound, "could not hold a port for the test: errno \(errno)")
        var configuration = scratch.configuration()
        configuration.port = Int(UInt16(bigEndian: address.sin6_port))
        let service = AgentService(configuration: configuration, logger: Self.logger, notifier: SystemdNotifier(environment: [:]))
        let error = await #expect(throws: AgentStartupError.self) { try await service.run() }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("port \(configuration.port)") && text.contains("--port (config key port)"), "\(text)")
        #expect(scratch.leftovers().isEmpty, "what had started was undone: \(scratch.leftovers())")
    }

    @Test func anInvalidConfigurationNamesTheKey() async throws {
        let scratch = try ServiceScratch()
        var configuration = scratch.configuration()
        configuration.jpegQuality = 0
        let service = AgentService(configuration: configuration, logger: Self.logger, notifier: SystemdNotifier(environment: [:]))
        await #expect(throws: AgentConfigurationError.invalid(key: "jpegQuality", value: "0", rule: "1...100", source: "default")) {
            try await service.run()
        }
    }
}
