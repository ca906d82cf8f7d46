import CamoAgentKit
import CamoProducerKit
import Foundation
import Testing

@Suite("Where an agent keeps its files")
struct AgentPathsTests {
    @Test func anOwnRuntimeDirectoryHoldsControlSock() {
        #expect(AgentPaths.controlSocket(stateDirectory: "/var/lib/camo-agent", runtimeDirectory: "/run/x", environment: [:]) == "/run/x/control.sock")
        // systemd's RuntimeDirectory= (several directories are separated by colons; the first is the agent's).
        #expect(
            AgentPaths.controlSocket(stateDirectory: "/var/lib/camo-agent", runtimeDirectory: nil, environment: ["RUNTIME_DIRECTORY": "/run/camo-agent:/run/other"])
                == "/run/camo-agent/control.sock")
        // An explicit directory wins over systemd's.
        #expect(
            AgentPaths.controlSocket(stateDirectory: "/s", runtimeDirectory: "/mine", environment: ["RUNTIME_DIRECTORY": "/run/camo-agent"])
                == "/mine/control.sock")
    }

    @Test func theSharedRuntimeDirectoryHasOneSocketPerStateDirectory() {
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        let one = AgentPaths.controlSocket(stateDirectory: "/home/a/state", runtimeDirectory: nil, environment: environment)
        let same = AgentPaths.controlSocket(stateDirectory: "/home/a/state/", runtimeDirectory: nil, environment: environment)
        let other = AgentPaths.controlSocket(stateDirectory: "/home/a/state2", runtimeDirectory: nil, environment: environment)
        #expect(one.hasPrefix("/run/user/1000/camo-agent/control-") && one.hasSuffix(".sock"), "\(one)")
        #expect(one == same, "a trailing slash names the same state directory")
        #expect(one != other)
        // However long the state directory's path, the socket's stays within a Unix socket address.
        let deep = "/tmp/" + String(repeating: "deep/", count: 60)
        #expect(AgentPaths.controlSocket(stateDirectory: deep, runtimeDirectory: nil, environment: environment).utf8.count <= ControlServer.maxPathLength)
    }

    @Test func aClientFindsTheSocketThatAgentJSONNames() throws {
        let directory = NSTemporaryDirectory() + "camo-paths-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try AgentFile(port: 1, pid: 2, name: "n", agentId: "a", controlSocket: "/run/somewhere/control.sock")
            .write(to: AgentPaths.agentFile(stateDirectory: directory))
        #expect(AgentPaths.runningControlSocket(stateDirectory: directory, runtimeDirectory: nil) == "/run/somewhere/control.sock")
        #expect(AgentPaths.runningControlSocket(stateDirectory: directory, runtimeDirectory: "/r") == "/r/control.sock")
    }
}
