import CamoMedia
import Foundation

/// What `camo-agent status` shows: the agent, its state, and every studio session with its counters.
public struct AgentStatus: Sendable, Codable, Equatable {
    public struct Connection: Sendable, Codable, Equatable {
        public var studioId: String
        public var studio: String
        public var address: String
        public var since: Date
        public var codec: String
        public var size: String
        public var audioSamplesRequired: Int
        public var pausedByStudio: Bool
        public var framesSent: UInt64
        public var framesDropped: UInt64
        public var framesRepeated: UInt64
        public var audioPackets: UInt64
        /// The last keep-alive round trip in milliseconds, nil until measured.
        public var roundTripMs: Double?
    }

    public var agentId: String
    public var name: String
    public var pid: Int32
    public var port: Int?
    /// `stopped`, `notConnected`, `active` or `paused`.
    public var state: String
    public var paused: Bool
    public var camera: String
    public var microphone: String
    public var captureSize: String
    public var connections: [Connection]

    /// A few lines for people.
    public var humanDescription: String {
        var lines = [
            "agent \(name) (\(agentId)) pid \(pid) port \(port.map(String.init) ?? "-")",
            "state \(state)\(paused ? " (privacy switch on)" : "")",
            "camera \(camera); microphone \(microphone); capture \(captureSize)",
        ]
        if connections.isEmpty { lines.append("no studios connected") }
        let formatter = ISO8601DateFormatter()
        for c in connections {
            let rtt = c.roundTripMs.map { String(format: "%.1f ms", $0) } ?? "-"
            lines.append(
                "studio \(c.studio) [\(c.studioId)] from \(c.address) since \(formatter.string(from: c.since)): "
                    + "\(c.codec) \(c.size), \(c.audioSamplesRequired) samples/packet, sent \(c.framesSent), "
                    + "dropped \(c.framesDropped), repeated \(c.framesRepeated), audio packets \(c.audioPackets), rtt \(rtt)"
                    + (c.pausedByStudio ? ", paused by studio" : ""))
        }
        return lines.joined(separator: "\n")
    }
}

extension CamoController {
    /// The status as `camo-agent status` reports it.
    public func status(camera: String, microphone: String) -> AgentStatus {
        let size = preferredCaptureSize
        return AgentStatus(
            agentId: configuration.identity.id, name: configuration.identity.name, pid: getpid(), port: port,
            state: state?.word ?? "stopped", paused: isPaused, camera: camera, microphone: microphone,
            captureSize: "\(size.width)x\(size.height)",
            connections: connections.map { c in
                AgentStatus.Connection(
                    studioId: c.studioId, studio: c.name, address: c.address, since: c.since,
                    codec: "\(c.codec)", size: "\(c.videoSize.width)x\(c.videoSize.height)",
                    audioSamplesRequired: c.audioSamplesRequired, pausedByStudio: c.pausedByStudio,
                    framesSent: c.statistics.framesSent, framesDropped: c.statistics.framesDropped,
                    framesRepeated: c.statistics.framesRepeated, audioPackets: c.statistics.audioPackets,
                    roundTripMs: c.statistics.roundTripNanos.map { Double($0) / 1e6 })
            })
    }
}
