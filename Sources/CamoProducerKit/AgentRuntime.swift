import Foundation
import Glibc

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

/// One agent per state directory: an exclusive `flock` on `agent.lock`, held for the life of the process.
public final class StateDirectoryLock: Sendable {
    private let fd: Int32

    /// Takes the lock, or throws when another agent runs on the same state directory.
    public init(directory: String) throws {
        let path = directory + "/agent.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw AtomicFile.Failure(path: path, operation: "open", errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw StateDirectoryBusy(directory: directory)
        }
        self.fd = fd
    }

    deinit { close(fd) }
}

/// Another agent already runs on this state directory.
public struct StateDirectoryBusy: Error, CustomStringConvertible {
    /// The state directory in use.
    public var directory: String
    public var description: String {
        "Another camo-agent already runs with the state directory \(directory). Stop it (`camo-agent status` shows it), or pass another --state-dir."
    }
}

/// The control socket's commands, answered from a controller.
public enum AgentControl {
    /// Answers `status`, `pause`, `resume`, `mute` (value `on` or `off`), `controls`, `set-control` and `rescan`.
    /// - Parameters:
    ///   - camera: describes the camera in use now (it can change when a camera is replugged).
    ///   - microphoneDetail: the microphone's device and counters now (nil for the synthetic tone).
    ///   - rescan: looks for a lost camera at once (udev calls `camo-agent rescan` when a camera is added).
    public static func handler(
        controller: CamoController, camera: @escaping @Sendable () -> String, microphone: String,
        microphoneDetail: @escaping @Sendable () -> MicrophoneStatus? = { nil },
        rescan: @escaping @Sendable () -> Void = {}
    ) -> ControlServer.Handler {
        { request in
            switch request.command {
            case "status":
                break
            case "pause":
                controller.pause()
            case "resume":
                controller.resume()
            case "rescan":
                rescan()
            case "mute":
                switch request.value {
                case "on": controller.muteMicrophone()
                case "off": controller.unmuteMicrophone()
                default: return ControlResponse(ok: false, error: "mute needs the value on or off")
                }
            case "controls":
                do {
                    return ControlResponse(ok: true, controls: try controller.cameraControls())
                } catch {
                    return ControlResponse(ok: false, error: "\(error)")
                }
            case "set-control":
                guard let name = request.name, let value = request.value else {
                    return ControlResponse(ok: false, error: "set-control needs a name and a value")
                }
                do {
                    return ControlResponse(ok: true, controls: [try controller.setCameraControl(name: name, value: value)])
                } catch {
                    return ControlResponse(ok: false, error: "\(error)")
                }
            default:
                return ControlResponse(
                    ok: false, error: "unknown command \(request.command); try status, pause, resume, mute, controls, set-control or rescan")
            }
            return ControlResponse(
                ok: true, status: controller.status(camera: camera(), microphone: microphone, microphoneDetail: microphoneDetail()))
        }
    }
}
