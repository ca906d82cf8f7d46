import ArgumentParser
import CamoAgentKit
import CamoProducerKit
import CamoWire
import Foundation

extension AgentVersion {
    static let protocolMajor = WireLimits.versionMajor
    static let protocolMinor = WireLimits.versionMinor
}

/// Options every subcommand that finds the running agent shares.
struct StateOptions: ParsableArguments {
    @Option(name: .long, help: "The agent's state directory (identity key, paired studios, agent.json).")
    var stateDir: String = AgentPaths.defaultStateDirectory()
    @Option(name: .long, help: "The agent's runtime directory, where its control socket is (default: the one agent.json names).")
    var runtimeDir: String?

    /// The running agent's control socket.
    var controlSocket: String {
        AgentPaths.runningControlSocket(stateDirectory: stateDir, runtimeDirectory: runtimeDir)
    }

    /// Sends `command` to the running agent; throws its refusal.
    func send(_ command: String) async throws -> ControlResponse {
        try await send(ControlRequest(command: command))
    }

    /// Sends `request` to the running agent; throws its refusal.
    func send(_ request: ControlRequest) async throws -> ControlResponse {
        let response = try await ControlClient.send(request, to: controlSocket)
        guard response.ok else { throw ControlError.refused(response.error ?? "no reason given") }
        return response
    }
}

/// An error whose text is printed as is.
struct ValidationErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
