import CamoWire
import Logging

/// Reads and writes an agent's settings over a settings-only session (protocol 1.2: the agent sends no media).
public enum SettingsSession {
    /// Why settings could not be read or written.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The agent speaks an older protocol without settings.
        case unsupported(agentVersion: String)
        /// The session ended before the answer.
        case ended(String)
        /// The connection failed.
        case client(StudioClientError)

        public var description: String {
            switch self {
            case .unsupported(let version):
                return "the agent speaks protocol \(version), which has no settings (1.2 added them); update camo-agent on it"
            case .ended(let why): return "the session ended before the agent answered: \(why)"
            case .client(let error): return "\(error)"
            }
        }
    }

    /// Connects with `configuration` (its purpose set to settings only) and returns the agent's whole model.
    public static func read(
        host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger
    ) async throws(Failure) -> SettingsSnapshot {
        let client = try await connect(host: host, port: port, configuration: configuration, logger: logger)
        defer { Task { await client.close(reason: "settings read") } }
        do {
            try await client.requestSettings()
        } catch {
            throw .client(error)
        }
        for await event in client.events {
            switch event {
            case .settings(let snapshot) where snapshot.reason == .answer: return snapshot
            case .closed(let reason): throw .ended("\(reason)")
            default: continue
            }
        }
        throw .ended("the event stream ended")
    }

    /// Connects and writes `values`; returns what the agent applied and refused.
    public static func write(
        _ values: [String: SettingValue], host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger
    ) async throws(Failure) -> SettingsResult {
        let client = try await connect(host: host, port: port, configuration: configuration, logger: logger)
        defer { Task { await client.close(reason: "settings written") } }
        do {
            try await client.writeSettings(values, requestId: 1)
        } catch {
            throw .client(error)
        }
        for await event in client.events {
            switch event {
            case .settingsResult(let result) where result.requestId == 1: return result
            case .closed(let reason): throw .ended("\(reason)")
            default: continue
            }
        }
        throw .ended("the event stream ended")
    }

    private static func connect(
        host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger
    ) async throws(Failure) -> StudioClient {
        let client: StudioClient
        do {
            client = try await StudioClient.connectWithoutMedia(host: host, port: port, configuration: configuration, logger: logger)
        } catch {
            throw .client(error)
        }
        guard client.agent.capabilities.contains(.settings) else {
            await client.close(reason: "no settings")
            throw .unsupported(agentVersion: "1.\(client.agent.versionMinor)")
        }
        return client
    }
}
