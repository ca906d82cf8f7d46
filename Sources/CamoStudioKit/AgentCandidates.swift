import CamoDiscovery
import Logging
import Synchronization

/// Where a paired agent found with mDNS is now, for the recorder's reconnection
/// (``RecorderConfiguration/candidates``). One browser follows `_camo._tcp` for the whole recording (started
/// again if avahi-daemon went away), so each round sees the records as they are then: a pulled cable's records
/// go with its interface and the network's remain; a cable plugged in again comes first again. When mDNS shows
/// nothing, the addresses last known are tried.
///
/// It owns its browser from the first ``candidates()`` until ``stop()``.
public final class AgentCandidates: Sendable {
    /// How long a browser just started gets to show the agent's records (avahi-daemon's cache).
    public static let freshWait: Duration = .seconds(1)
    /// How long a running browser gets: it knows the records already, unless they are just changing.
    public static let runningWait: Duration = .milliseconds(300)
    /// How often the records are looked at while waiting.
    public static let pollInterval: Duration = .milliseconds(50)
    /// Once a fresh browser shows the agent, the moment its other records (its other link, the other address
    /// family) get to arrive.
    public static let settleTime: Duration = .milliseconds(150)

    private struct State {
        var source: (any AgentRecordSource)?
        var lastKnown: [HostPort]
    }

    private let agentId: String
    private let logger: Logger
    private let clock: any Clock<Duration>
    private let makeSource: @Sendable () -> any AgentRecordSource
    private let state: Mutex<State>

    /// Follows the agent whose TXT id (or, without one, service name) is `agentId`, starting from the
    /// addresses `known` (best first).
    /// - Parameters:
    ///   - clock: what the waiting is measured with.
    ///   - makeSource: makes the record source to follow (an ``AgentBrowser`` logging to `logger` by default);
    ///     called again when the last one failed.
    public init(
        agentId: String, known: [HostPort], logger: Logger, clock: any Clock<Duration> = ContinuousClock(),
        makeSource: (@Sendable () -> any AgentRecordSource)? = nil
    ) {
        self.agentId = agentId
        self.logger = logger
        self.clock = clock
        self.makeSource = makeSource ?? { AgentBrowser(logger: logger) }
        self.state = Mutex(State(source: nil, lastKnown: known))
    }

    /// The agent's addresses now, best first: what mDNS shows, else the addresses last known.
    public func candidates() async -> [HostPort] {
        let (source, fresh) = currentSource()
        var found: [HostPort] = []
        if let source {
            found = await look(in: source, fresh: fresh, clock: clock)
        }
        if found.isEmpty { return state.withLock { $0.lastKnown } }
        logger.debug("mDNS shows the agent at \(found.map(\.description).joined(separator: ", "))")
        state.withLock { $0.lastKnown = found }
        return found
    }

    /// Stops browsing.
    public func stop() {
        let source = state.withLock { state in
            defer { state.source = nil }
            return state.source
        }
        source?.stop()
    }

    /// The agent's addresses in `source`, waiting a moment for them (longer for a `fresh` source); empty when
    /// it does not show the agent.
    private func look<C: Clock<Duration>>(in source: any AgentRecordSource, fresh: Bool, clock: C) async -> [HostPort] {
        let deadline = clock.now.advanced(by: fresh ? Self.freshWait : Self.runningWait)
        var found: [HostPort] = []
        while true {
            found = route(in: source)?.candidates ?? []
            if !found.isEmpty || clock.now >= deadline { break }
            do { try await clock.sleep(for: Self.pollInterval) } catch { break }
        }
        if fresh && !found.isEmpty {
            try? await clock.sleep(for: Self.settleTime)
            found = route(in: source)?.candidates ?? found
        }
        return found
    }

    /// The agent's route as `source` shows it now, if it does.
    private func route(in source: any AgentRecordSource) -> AgentRoute? {
        AgentLookup.matching(source.records, agentId: agentId, name: agentId).first
    }

    /// The running source (started now when there is none or the last one failed: `fresh`), nil when mDNS
    /// cannot be used now.
    private func currentSource() -> (source: (any AgentRecordSource)?, fresh: Bool) {
        if let running = state.withLock({ $0.source }), running.failed == nil { return (running, false) }
        state.withLock { $0.source }?.stop()
        let source = makeSource()
        do {
            try source.start()
        } catch {
            logger.debug("mDNS lookup for reconnecting: \(error)")
            state.withLock { $0.source = nil }
            return (nil, false)
        }
        state.withLock { $0.source = source }
        return (source, true)
    }
}
