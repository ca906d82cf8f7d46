import CamoDiscovery
import Logging

/// Finding agents with mDNS (`_camo._tcp`).
///
/// The functions that wait take a clock (a `ContinuousClock` unless told otherwise), so their waiting can be
/// tested with one that does not take real time; the pure ones (``record(_:)``, ``addresses(of:)``,
/// ``matching(_:agentId:name:)``) need no mDNS at all.
public enum AgentLookup {
    /// How long ``find(in:agentId:name:seconds:clock:accepts:)`` gives an agent's other records to arrive once
    /// the first is seen, so the cable is not missed for being a few milliseconds later than the network.
    public static let settleTime: Duration = .milliseconds(300)
    /// How often ``find(in:agentId:name:seconds:clock:accepts:)`` looks at the records again.
    public static let pollInterval: Duration = .milliseconds(100)

    /// The agents seen within `seconds`, one per agent however many links and address families it was seen on.
    /// - Throws: `DiscoveryError` when mDNS cannot be used, or browsing stopped meanwhile; `CancellationError`.
    public static func agents(
        seconds: Double, logger: Logger, clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> [AgentRoute] {
        try await agents(in: AgentBrowser(logger: logger), seconds: seconds, clock: clock)
    }

    /// The agents `source` shows after following it for `seconds` (it is started and stopped here).
    public static func agents(
        in source: some AgentRecordSource, seconds: Double, clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> [AgentRoute] {
        try source.start()
        defer { source.stop() }
        try await clock.sleep(for: .milliseconds(Int(seconds * 1000)))
        if let failure = source.failed { throw failure }
        return AgentRoutes.merge(source.records)
    }

    /// What the studio needs of a discovered service (as the browser merged it), for ``AgentLinkTracker``.
    public static func record(_ service: DiscoveredService) -> AgentRecord {
        AgentRecord(name: service.name, addresses: service.addresses, port: service.port, txt: service.txt,
                    interfaceIndex: service.interfaceIndex)
    }

    /// The addresses to reach `service` at: IPv4 first (link-local IPv6 needs a zone), then the others.
    public static func addresses(of service: DiscoveredService) -> [HostPort] {
        let ordered = service.addresses.filter { !$0.contains(":") } + service.addresses.filter { $0.contains(":") }
        return ordered.map { HostPort(host: $0, port: service.port) }
    }

    /// The route of the agent whose TXT id is `agentId`, or, when `agentId` is nil, whose service name or id is
    /// `name`, among `records`.
    public static func matching(_ records: [AgentRecord], agentId: String?, name: String) -> [AgentRoute] {
        let keys = Set(records.filter { record in
            if let agentId { return record.agentKey == agentId }
            return record.name == name || record.txt["id"] == name
        }.map(\.agentKey))
        return AgentRoutes.merge(records.filter { keys.contains($0.agentKey) })
    }

    /// Waits up to `seconds` for an agent whose TXT id is `agentId` (or, when `agentId` is nil, whose service
    /// name is `name`) at an address that accepts connections, trying its USB addresses before its network
    /// ones: a record an agent left a moment ago (a restart) is skipped until the fresh one arrives. Once the
    /// agent is seen, its other records get a moment (``settleTime``) to arrive, so the cable is not missed for
    /// being a few milliseconds later than the network.
    /// - Returns: the agent's route and the address that answered; nil when none did within `seconds`.
    /// - Throws: `DiscoveryError` when mDNS cannot be used; `CancellationError`.
    public static func find(
        agentId: String?, name: String, seconds: Double, logger: Logger, clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> (AgentRoute, HostPort)? {
        try await find(in: AgentBrowser(logger: logger), agentId: agentId, name: name, seconds: seconds, clock: clock) {
            await $0.acceptsConnections()
        }
    }

    /// ``find(agentId:name:seconds:logger:clock:)`` over `source` (started and stopped here), asking `accepts`
    /// whether an address answers.
    public static func find(
        in source: some AgentRecordSource, agentId: String?, name: String, seconds: Double,
        clock: any Clock<Duration> = ContinuousClock(), accepts: (HostPort) async -> Bool
    ) async throws -> (AgentRoute, HostPort)? {
        try source.start()
        defer { source.stop() }
        return try await poll(source, agentId: agentId, name: name, seconds: seconds, clock: clock, accepts: accepts)
    }

    /// The waiting of ``find(in:agentId:name:seconds:clock:accepts:)``, with the clock's own instants.
    private static func poll<C: Clock<Duration>>(
        _ source: some AgentRecordSource, agentId: String?, name: String, seconds: Double, clock: C,
        accepts: (HostPort) async -> Bool
    ) async throws -> (AgentRoute, HostPort)? {
        let deadline = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        var settled = false
        while clock.now < deadline {
            let routes = matching(source.records, agentId: agentId, name: name)
            if !routes.isEmpty && !settled {
                settled = true
                try await clock.sleep(for: settleTime)
                continue
            }
            for route in routes {
                for address in route.candidates where await accepts(address) {
                    return (route, address)
                }
            }
            try await clock.sleep(for: pollInterval)
        }
        return nil
    }
}
