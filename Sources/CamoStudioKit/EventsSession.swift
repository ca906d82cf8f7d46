import CamoWire
import Logging

/// Follows an agent's camera events over a settings-only session (protocol 1.3: no media flows).
public enum EventsSession {
    /// Why the events could not be followed.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The agent speaks an older protocol, or runs no event detectors.
        case unsupported(String)
        /// The session ended.
        case ended(String)
        /// The connection failed.
        case client(StudioClientError)

        public var description: String {
            switch self {
            case .unsupported(let why): return why
            case .ended(let why): return "the session ended: \(why)"
            case .client(let error): return "\(error)"
            }
        }
    }

    /// Connects with `configuration` (its purpose set to settings only), asks for the events (`replay`: the kept
    /// ones first) and calls `onEvent` with each until it returns false; returns then.
    /// - Throws: ``Failure`` when the agent cannot send events or the session ends first.
    public static func follow(
        host: String, port: Int, configuration: StudioClientConfiguration, replay: Bool, logger: Logger,
        onEvent: (WireEvent) -> Bool
    ) async throws(Failure) {
        let client: StudioClient
        do {
            client = try await StudioClient.connectWithoutMedia(host: host, port: port, configuration: configuration, logger: logger)
        } catch {
            throw .client(error)
        }
        defer { Task { await client.close(reason: "events followed") } }
        guard client.agent.versionMinor >= 3 else {
            throw .unsupported("the agent speaks protocol 1.\(client.agent.versionMinor), which has no events (1.3 added them); update camo-agent on it")
        }
        guard client.agent.capabilities.contains(.events) else {
            throw .unsupported("the agent runs no event detectors (it was started with --no-events, config key events); start it without that")
        }
        do {
            try await client.requestEvents(replay: replay)
        } catch {
            throw .client(error)
        }
        for await event in client.events {
            switch event {
            case .cameraEvent(let notice):
                if !onEvent(notice) { return }
            case .closed(let reason):
                throw .ended("\(reason)")
            default:
                continue
            }
        }
        throw .ended("the event stream ended")
    }
}
