import CamoMedia
import CamoStudioKit
import Logging
import NIOCore
import NIOPosix

/// What an ``AgentFeed`` reports, in order.
public enum AgentFeedEvent: Sendable {
    /// A session is up (the first, or a new one after a loss).
    case connected(AgentInfo, HostPort)
    /// The session was lost; the feed is reconnecting.
    case lost(String)
    /// Anything the session delivered (frames, audio, stats, clock samples …), except its end.
    case session(StudioEvent)
}

/// A studio session that lasts: it connects to the agent and, whenever the session ends, connects again (every
/// candidate address once per round, forever) until it is cancelled or the agent refuses for good (not paired,
/// a declined studio). Unlike a recording it has no end: a virtual camera's consumer may watch all day.
public struct AgentFeed: Sendable {
    /// How to reach the agent.
    public var client: StudioClientConfiguration
    /// Where it is first tried.
    public var address: HostPort
    /// Where to look before each round (mDNS for a paired agent); nil: `address` only.
    public var candidates: (@Sendable () async -> [HostPort])?
    /// The pause between rounds of attempts.
    public var roundNanos: UInt64 = 250_000_000
    /// How long one attempt may take to connect.
    public var connectTimeoutNanos: UInt64 = 1_000_000_000
    /// Silence from a streaming agent that counts as a dead link.
    public var stallTimeoutNanos: UInt64 = 2_000_000_000
    private let logger: Logger

    /// A feed from the agent at `address`.
    public init(client: StudioClientConfiguration, address: HostPort, logger: Logger) {
        self.client = client
        self.address = address
        self.logger = logger
    }

    /// Runs until cancelled (returns) or refused for good (throws); every event goes to `handle`, on the
    /// session's task, in order.
    public func run(
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, handle: @Sendable (AgentFeedEvent) -> Void
    ) async throws(StudioClientError) {
        var configuration = client
        configuration.stallTimeoutNanos = stallTimeoutNanos
        configuration.connectTimeoutNanos = connectTimeoutNanos
        var agentKey: [UInt8]?
        var lastFailure = ""
        while !Task.isCancelled {
            let roundStart = client.clock.now.nanoseconds
            let addresses = await candidates?() ?? [address]
            for candidate in addresses where !Task.isCancelled {
                let session: StudioClient
                do {
                    session = try await StudioClient.connect(
                        host: candidate.host, port: candidate.port, configuration: configuration, group: group, logger: logger)
                } catch {
                    if ReconnectPolicy.isPermanent(error) { throw error }
                    let failure = "\(candidate): \(error)"
                    // Once per change, so a long absence does not fill the log.
                    if failure != lastFailure { logger.info("The agent cannot be reached yet; trying again", metadata: ["attempt": "\(failure)"]) }
                    lastFailure = failure
                    continue
                }
                if let agentKey, session.agent.staticPublicKey != agentKey {
                    logger.warning("Another agent answered at \(candidate) (\(session.agent.agentName)); not feeding it")
                    await session.close(reason: "the studio feeds another agent")
                    continue
                }
                agentKey = session.agent.staticPublicKey
                lastFailure = ""
                handle(.connected(session.agent, candidate))
                let ending = await stream(session, handle: handle)
                if Task.isCancelled {
                    await session.close(reason: "the studio stopped")
                    return
                }
                if !ReconnectPolicy.shouldReconnect(after: ending) && ending != .requested {
                    throw .sessionEnded(ending)
                }
                handle(.lost(ending.description))
                break
            }
            let pauseUntil = roundStart + roundNanos
            if client.clock.now.nanoseconds < pauseUntil {
                do { try await client.clock.sleep(until: pauseUntil) } catch { return }
            }
        }
    }

    /// Delivers one session's events until it ends (or the task is cancelled); returns why it ended.
    private func stream(_ session: StudioClient, handle: @Sendable (AgentFeedEvent) -> Void) async -> StudioCloseReason {
        await withTaskCancellationHandler {
            for await event in session.events {
                if case .closed(let reason) = event { return reason }
                handle(.session(event))
            }
            return .connectionLost("the event stream ended")
        } onCancel: {
            Task { await session.close(reason: "the studio stopped") }
        }
    }
}
