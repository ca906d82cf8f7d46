import Logging

/// A paired agent and where to reach it, for `camo-studio record --agent`.
public struct ResolvedAgent: Sendable, Equatable {
    /// The paired agent (its id, name and key).
    public var agent: PairedAgent
    /// The address to connect to first.
    public var address: HostPort
    /// Every address known for it, best first (the USB link before the network).
    public var candidates: [HostPort]

    /// How long mDNS is given to show an agent named by its service name rather than its paired name or id.
    public static let nameLookupSeconds: Double = 3
    /// How long mDNS is given to show the paired agent at an address that answers.
    public static let lookupSeconds: Double = 5

    /// A resolved agent from its parts.
    public init(agent: PairedAgent, address: HostPort, candidates: [HostPort]) {
        self.agent = agent
        self.address = address
        self.candidates = candidates
    }

    /// Finds the paired agent called `idOrName` in `studio` and where it is: `connect` when given, else the
    /// address mDNS (`_camo._tcp`) finds for its id (its USB link when it has one, else the network), with
    /// every address mDNS showed for it.
    public static func resolve(
        _ idOrName: String, connect: HostPort?, studio: StudioState, logger: Logger,
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws(AgentResolutionError) -> ResolvedAgent {
        try await resolve(idOrName, connect: connect, paired: studio.agent(matching:), logger: logger) { agentId, name, seconds in
            try await AgentLookup.find(agentId: agentId, name: name, seconds: seconds, logger: logger, clock: clock)
        }
    }

    /// ``resolve(_:connect:studio:logger:clock:)`` with the paired agents as `paired` tells them (by id, else by
    /// name) and mDNS as `find` does (``AgentLookup/find(agentId:name:seconds:logger:clock:)``'s arguments and
    /// answer).
    /// - Throws: ``AgentResolutionError``: `notPaired` when `idOrName` names no paired agent, not even as the
    ///   service name mDNS shows (looked up only without `connect`); `lookupFailed` when `find` throws;
    ///   `notFound` when it finds nothing.
    public static func resolve(
        _ idOrName: String, connect: HostPort?, paired: (String) -> PairedAgent?, logger: Logger,
        find: (_ agentId: String?, _ name: String, _ seconds: Double) async throws -> (AgentRoute, HostPort)?
    ) async throws(AgentResolutionError) -> ResolvedAgent {
        var agent = paired(idOrName)
        if agent == nil, connect == nil {
            // Perhaps the name mDNS shows (renamed after a collision, say): look up its id.
            if let (route, _) = try? await find(nil, idOrName, nameLookupSeconds), let id = route.id {
                agent = paired(id)
            }
        }
        guard let agent else { throw .notPaired(idOrName) }
        if let connect { return ResolvedAgent(agent: agent, address: connect, candidates: [connect]) }
        let found: (AgentRoute, HostPort)?
        do {
            found = try await find(agent.id, agent.name, lookupSeconds)
        } catch {
            throw .lookupFailed(agent, error)
        }
        guard let (route, address) = found else { throw .notFound(agent, seconds: lookupSeconds) }
        logger.info("\(agent.name) is reachable over \(route.link) at \(route.candidates.map(\.description).joined(separator: ", ")); using \(address)")
        return ResolvedAgent(agent: agent, address: address, candidates: route.candidates)
    }
}
