import CamoStorage
import Foundation

/// `agent.json` in the state directory: how scripts and `camo-agent status` find the running agent.
public struct AgentFile: Codable, Sendable, Equatable {
    /// The TCP port.
    public var port: Int
    /// The agent's process id.
    public var pid: Int32
    /// The agent's name.
    public var name: String
    /// The agent's id.
    public var agentId: String
    /// The control socket path.
    public var controlSocket: String

    /// The file from its parts.
    public init(port: Int, pid: Int32, name: String, agentId: String, controlSocket: String) {
        self.port = port
        self.pid = pid
        self.name = name
        self.agentId = agentId
        self.controlSocket = controlSocket
    }

    /// Writes the file atomically, owner-only.
    public func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(Array(try encoder.encode(self)), to: path, permissions: 0o600)
    }
}
