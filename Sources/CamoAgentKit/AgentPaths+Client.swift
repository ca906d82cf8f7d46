import CamoProducerKit
import Foundation

extension AgentPaths {
    /// The control socket of the agent that runs (or ran) with `stateDirectory`, for a client: in
    /// `runtimeDirectory` when one is given, else the one its `agent.json` names, else where the agent would
    /// put it without an own runtime directory.
    public static func runningControlSocket(stateDirectory: String, runtimeDirectory: String?) -> String {
        if let runtimeDirectory { return runtimeDirectory + "/control.sock" }
        if let data = FileManager.default.contents(atPath: agentFile(stateDirectory: stateDirectory)),
            let file = try? JSONDecoder().decode(AgentFile.self, from: data)
        {
            return file.controlSocket
        }
        // A client's own $RUNTIME_DIRECTORY (set when it runs in some other unit) is not the agent's.
        return controlSocket(
            stateDirectory: stateDirectory, runtimeDirectory: nil,
            environment: ProcessInfo.processInfo.environment.filter { $0.key != "RUNTIME_DIRECTORY" })
    }
}
