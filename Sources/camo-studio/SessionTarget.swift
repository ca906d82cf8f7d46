import ArgumentParser
import CamoStudioKit
import Logging

/// Which agent a settings-only session (`settings`, `events`) talks to: a paired one by `--agent` (mDNS, Noise KK),
/// or `--connect HOST:PORT` with the studio's key from `--key-file` (or a new one).
struct SessionTarget: ParsableArguments {
    @Option(help: "The agent as HOST:PORT. With --agent: where that paired agent is, instead of mDNS.")
    var connect: String?
    @Option(help: "A paired agent, by id or name: found with mDNS and reached with Noise KK (default: the only paired agent).")
    var agent: String?
    @Option(help: "A file holding the studio's long-term key (with --connect and no --agent, for an agent that allows unpaired loopback studios).")
    var keyFile: String?
    @Option(help: "The studio name sent to the agent.")
    var name: String = "camo-studio"
    @OptionGroup var state: StudioStateOptions

    func validate() throws {
        if let connect, HostPort(parsing: connect) == nil { throw ValidationError("--connect must be HOST:PORT, got '\(connect)'") }
    }

    /// The agent's address and the client configuration to reach it with.
    func resolve(logger: Logger) async throws -> (address: HostPort, configuration: StudioClientConfiguration) {
        var agent = agent
        if agent == nil && connect == nil {
            // Neither given: the only paired agent (the desktop entry's case).
            let paired = try state.open(logger: logger).pairedAgents
            guard paired.count == 1 else {
                throw ValidationError(paired.isEmpty
                    ? "No paired agent: pair one with `camo-studio pair`, or give --connect HOST:PORT"
                    : "Say which agent with --agent NAME_OR_ID: \(paired.count) are paired (\(paired.map(\.name).joined(separator: ", ")))")
            }
            agent = paired[0].id
        }
        if let agent {
            let studio = try state.open(logger: logger)
            let target = try await Record.resolve(agent: agent, connect: connect, studio: studio, logger: logger)
            var configuration = StudioClientConfiguration(identity: studio.identity, studioName: name, audioSamplesRequired: 1024)
            configuration.handshake = .paired(agentKey: Array(target.agent.publicKey))
            return (target.address, configuration)
        }
        guard let connect, let address = HostPort(parsing: connect) else { throw ExitCode.usage }
        let identity = try keyFile.map { try StudioIdentity.load(keyFile: $0) } ?? StudioIdentity.generated()
        return (address, StudioClientConfiguration(identity: identity, studioName: name, audioSamplesRequired: 1024))
    }
}
