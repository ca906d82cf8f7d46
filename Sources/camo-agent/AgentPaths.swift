import CamoProducerKit
import CamoWire
import Foundation

enum AgentVersion {
    static let software = "0.4.0"
    static let protocolMajor = WireLimits.versionMajor
    static let protocolMinor = WireLimits.versionMinor
}

enum AgentPaths {
    /// `/var/lib/camo-agent` for root, else `$XDG_STATE_HOME/camo-agent` or `~/.local/state/camo-agent`.
    static func defaultStateDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if getuid() == 0 { return "/var/lib/camo-agent" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/camo-agent" }
        return NSHomeDirectory() + "/.local/state/camo-agent"
    }

    static func send(_ command: String, stateDirectory: String) async throws -> ControlResponse {
        try await send(ControlRequest(command: command), stateDirectory: stateDirectory)
    }

    static func send(_ request: ControlRequest, stateDirectory: String) async throws -> ControlResponse {
        let path = ControlSocketPath.path(forStateDirectory: stateDirectory)
        let response = try await ControlClient.send(request, to: path)
        guard response.ok else { throw ControlError.refused(response.error ?? "no reason given") }
        return response
    }
}
