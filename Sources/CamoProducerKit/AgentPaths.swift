import Foundation
import Glibc

/// Where an agent keeps its files.
///
/// - The **state directory** holds what must survive a restart: the agent's key (`identity.json`) and the
///   paired-device list (`paired.json`), plus `agent.json` while the agent runs. `/var/lib/camo-agent` for root,
///   else `$XDG_STATE_HOME/camo-agent` or `~/.local/state/camo-agent`.
/// - The **runtime directory** holds the control socket, which needs a file system that has Unix sockets (a
///   shared 9p or SMB folder has none). Given explicitly (`--runtime-dir`) or by systemd (`RuntimeDirectory=`
///   sets `$RUNTIME_DIRECTORY`), the directory is this agent's own and the socket is `control.sock` in it;
///   otherwise it is `$XDG_RUNTIME_DIR/camo-agent`, `/run/camo-agent` for root, or `/tmp/camo-agent-UID`, shared
///   by every agent of this user, and the socket's name is derived from the state directory.
public enum AgentPaths {
    /// `/var/lib/camo-agent` for root, else `$XDG_STATE_HOME/camo-agent` or `~/.local/state/camo-agent`.
    public static func defaultStateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if getuid() == 0 { return "/var/lib/camo-agent" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/camo-agent" }
        return NSHomeDirectory() + "/.local/state/camo-agent"
    }

    /// The control socket's path for a state directory and an optional explicit runtime directory.
    public static func controlSocket(
        stateDirectory: String, runtimeDirectory: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let own = runtimeDirectory ?? environment["RUNTIME_DIRECTORY"].flatMap({ $0.isEmpty ? nil : $0 }) {
            // systemd may list several directories separated by colons; the first is ours.
            return String(own.split(separator: ":").first ?? Substring(own)) + "/control.sock"
        }
        return sharedRuntimeDirectory(environment: environment) + "/control-\(stableHash(standardized(stateDirectory))).sock"
    }

    /// The runtime directory shared by this user's agents: `$XDG_RUNTIME_DIR/camo-agent`, `/run/camo-agent` for
    /// root, else `/tmp/camo-agent-UID`.
    public static func sharedRuntimeDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/camo-agent" }
        if getuid() == 0 { return "/run/camo-agent" }
        return "/tmp/camo-agent-\(getuid())"
    }

    /// `agent.json` in the state directory.
    public static func agentFile(stateDirectory: String) -> String {
        stateDirectory + "/agent.json"
    }

    private static func standardized(_ path: String) -> String {
        var path = (path as NSString).standardizingPath
        if !path.hasPrefix("/") { path = FileManager.default.currentDirectoryPath + "/" + path }
        return path
    }

    /// FNV-1a, 64 bits, in hex: stable across runs and short.
    private static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
