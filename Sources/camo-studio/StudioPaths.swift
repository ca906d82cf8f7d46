import ArgumentParser
import CamoDiscovery
import CamoStudioKit
import Foundation
import Logging
import Synchronization

/// `--state-dir`: where the studio keeps its identity and its paired agents.
struct StudioStateOptions: ParsableArguments {
    @Option(name: .long, help: "The studio's state directory (its key and paired agents).")
    var stateDir: String = StudioStateOptions.defaultDirectory()

    /// `/var/lib/camo-studio` for root, else `$XDG_STATE_HOME/camo-studio` or `~/.local/state/camo-studio`.
    static func defaultDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if getuid() == 0 { return "/var/lib/camo-studio" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/camo-studio" }
        return NSHomeDirectory() + "/.local/state/camo-studio"
    }

    func open(logger: Logger) throws -> StudioState {
        do {
            return try StudioState(directory: stateDir, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: cannot use the state directory \(stateDir): \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// Browses `_camo._tcp` and tells each address's link: `AvahiBrowser` merges an agent's records over its
/// interfaces (its USB link and the network) into one service, so the browser's events are followed from the
/// start and split back into per-link records (see `AgentLinkTracker`).
final class AgentBrowser: Sendable {
    private let browser: AvahiBrowser
    private let tracker = Mutex(AgentLinkTracker())
    private let failure = Mutex<DiscoveryError?>(nil)

    init(logger: Logger) {
        browser = AvahiBrowser(type: CamoServiceType.agent, logger: logger)
    }

    /// Starts browsing; throws what `AvahiBrowser.start()` throws.
    func start() throws(DiscoveryError) {
        let events = browser.services()   // before start(): no event is missed
        do {
            try browser.start()
        } catch {
            browser.stop()
            throw error
        }
        Task { [self] in
            for await event in events {
                switch event {
                case .added(let service), .updated(let service):
                    tracker.withLock { $0.seen(AgentLookup.record(service)) }
                case .removed(let service):
                    tracker.withLock { $0.removed(name: service.name) }
                case .failed(let error):
                    failure.withLock { $0 = error }
                }
            }
        }
    }

    /// Stops browsing. Harmless when not started.
    func stop() { browser.stop() }

    /// One record per agent and link, as known now.
    var records: [AgentRecord] { tracker.withLock { $0.records } }

    /// Why browsing stopped, if it did (avahi-daemon went away).
    var failed: DiscoveryError? { failure.withLock { $0 } }
}

/// Finding agents with mDNS.
enum AgentLookup {
    /// The agents seen within `seconds`, one per agent however many links and address families it was seen on.
    static func agents(seconds: Double, logger: Logger) async throws -> [AgentRoute] {
        let browser = AgentBrowser(logger: logger)
        try browser.start()
        defer { browser.stop() }
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        if let failure = browser.failed { throw failure }
        return AgentRoutes.merge(browser.records)
    }

    /// What the studio needs of a discovered service (as the browser merged it), for `AgentLinkTracker`.
    static func record(_ service: DiscoveredService) -> AgentRecord {
        AgentRecord(name: service.name, addresses: service.addresses, port: service.port, txt: service.txt,
                    interfaceIndex: service.interfaceIndex)
    }

    /// The address to reach `service` at: IPv4 first (link-local IPv6 needs a zone), then the others.
    static func addresses(of service: DiscoveredService) -> [HostPort] {
        let ordered = service.addresses.filter { !$0.contains(":") } + service.addresses.filter { $0.contains(":") }
        return ordered.map { HostPort(host: $0, port: service.port) }
    }

    /// The route of the agent whose TXT id is `agentId`, or, when `agentId` is nil, whose service name or id is
    /// `name`, among `records`.
    static func matching(_ records: [AgentRecord], agentId: String?, name: String) -> [AgentRoute] {
        let keys = Set(records.filter { record in
            if let agentId { return record.agentKey == agentId }
            return record.name == name || record.txt["id"] == name
        }.map(\.agentKey))
        return AgentRoutes.merge(records.filter { keys.contains($0.agentKey) })
    }

    /// Waits up to `seconds` for an agent whose TXT id is `agentId` (or, when `agentId` is nil, whose service
    /// name is `name`) at an address that accepts connections, trying its USB addresses before its network
    /// ones: a record an agent left a moment ago (a restart) is skipped until the fresh one arrives. Once the
    /// agent is seen, its other records get a moment to arrive, so the cable is not missed for being a few
    /// milliseconds later than the network.
    static func find(agentId: String?, name: String, seconds: Double, logger: Logger) async throws -> (AgentRoute, HostPort)? {
        let browser = AgentBrowser(logger: logger)
        try browser.start()
        defer { browser.stop() }
        let deadline = Date().addingTimeInterval(seconds)
        var settled = false
        while Date() < deadline {
            let routes = matching(browser.records, agentId: agentId, name: name)
            if !routes.isEmpty && !settled {
                settled = true
                try await Task.sleep(for: .milliseconds(300))
                continue
            }
            for route in routes {
                for address in route.candidates where await address.acceptsConnections() {
                    return (route, address)
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}

/// Where a paired agent found with mDNS is now, for the recorder's reconnection. One browser follows
/// `_camo._tcp` for the whole recording (started again if avahi-daemon went away), so each round sees the
/// records as they are then: a pulled cable's records go with its interface and the network's remain; a cable
/// plugged in again comes first again. When mDNS shows nothing, the addresses last known are tried.
final class AgentCandidates: Sendable {
    private struct State {
        var browser: AgentBrowser?
        var lastKnown: [HostPort]
    }

    private let agentId: String
    private let logger: Logger
    private let state: Mutex<State>

    init(agentId: String, known: [HostPort], logger: Logger) {
        self.agentId = agentId
        self.logger = logger
        self.state = Mutex(State(browser: nil, lastKnown: known))
    }

    /// The agent's addresses now, best first.
    func candidates() async -> [HostPort] {
        let (browser, fresh) = currentBrowser()
        var found: [HostPort] = []
        if let browser {
            // A browser just started needs a moment for the records avahi-daemon has; a running one knows them.
            let deadline = Date().addingTimeInterval(fresh ? 1 : 0.3)
            while true {
                found = AgentLookup.matching(browser.records, agentId: agentId, name: agentId).first?.candidates ?? []
                if !found.isEmpty || Date() >= deadline { break }
                do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
            }
            if fresh && !found.isEmpty {
                // The agent's other records (its other link, the other address family) come within moments.
                try? await Task.sleep(for: .milliseconds(150))
                found = AgentLookup.matching(browser.records, agentId: agentId, name: agentId).first?.candidates ?? found
            }
        }
        if found.isEmpty { return state.withLock { $0.lastKnown } }
        logger.debug("mDNS shows the agent at \(found.map(\.description).joined(separator: ", "))")
        state.withLock { $0.lastKnown = found }
        return found
    }

    /// Stops browsing.
    func stop() {
        let browser = state.withLock { state in
            defer { state.browser = nil }
            return state.browser
        }
        browser?.stop()
    }

    /// The running browser (started now when there is none or the last one failed: `fresh`), nil when mDNS
    /// cannot be used now.
    private func currentBrowser() -> (AgentBrowser?, fresh: Bool) {
        if let running = state.withLock({ $0.browser }), running.failed == nil { return (running, false) }
        state.withLock { $0.browser }?.stop()
        let browser = AgentBrowser(logger: logger)
        do {
            try browser.start()
        } catch {
            logger.debug("mDNS lookup for reconnecting: \(error)")
            state.withLock { $0.browser = nil }
            return (nil, false)
        }
        state.withLock { $0.browser = browser }
        return (browser, true)
    }
}
