import Foundation

/// A PipeWire of the test's own: a runtime folder, a session bus, pipewire and wireplumber (Debian's), as a desktop
/// session has them. Nothing of the machine's is touched.
public final class PrivatePipeWire {
    /// The programs it needs, missing ones named.
    public static var missing: [String] {
        ["pipewire", "wireplumber", "pw-record", "pw-cli", "dbus-daemon"].filter { name in
            !["/usr/bin", "/bin", "/usr/local/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
        }
    }

    /// Its XDG_RUNTIME_DIR.
    public let runtime: String
    /// The environment its programs run with (XDG_RUNTIME_DIR, the session bus).
    public let environment: [String: String]
    /// The daemon's socket.
    public var socket: String { runtime + "/pipewire-0" }
    private var bus: Process?
    private var daemons: [Process] = []
    private let logs: String

    /// Starts the bus and the daemons, keeping their runtime folder and logs in `directory`.
    public init(directory: String) throws {
        runtime = directory + "/run"
        logs = directory
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Its own configuration home: no Bluetooth (its logind module ends wireplumber where systemd-logind does not
        // run, as in the test VM) and no devices of the machine (ALSA, V4L2, libcamera): only the test's own nodes.
        let config = directory + "/config"
        for (folder, lines) in [("bluetooth.lua.d", "bluez_monitor.enabled = false\n"),
                                ("main.lua.d", "alsa_monitor.enabled = false\nv4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n")] {
            try FileManager.default.createDirectory(atPath: "\(config)/wireplumber/\(folder)", withIntermediateDirectories: true)
            try lines.write(toFile: "\(config)/wireplumber/\(folder)/80-camo-test.lua", atomically: true, encoding: .utf8)
        }
        let environment = ["XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/bus",
                           "XDG_CONFIG_HOME": config, "PATH": "/usr/bin:/bin", "HOME": directory]
        self.environment = environment
        bus = try spawn("/usr/bin/dbus-daemon", ["--session", "--nofork", "--address=unix:path=\(runtime)/bus"], log: "dbus")
        try Self.waitFor("the session bus", seconds: 10) { FileManager.default.fileExists(atPath: "\(self.runtime)/bus") }
        try startDaemons()
    }

    /// Starts pipewire, then wireplumber (the session manager that links a recorder to its target).
    public func startDaemons() throws {
        daemons.append(try spawn("/usr/bin/pipewire", [], log: "pipewire"))
        try Self.waitFor("pipewire's socket", seconds: 10) { FileManager.default.fileExists(atPath: self.socket) }
        daemons.append(try spawn("/usr/bin/wireplumber", [], log: "wireplumber"))
        // Ready once the session manager has made itself known (its client, application.name "WirePlumber"); an
        // emulated guest takes seconds.
        try Self.waitFor("wireplumber (its log: \(self.log("wireplumber")))", seconds: 60) { try self.tool("pw-cli", ["ls", "Client"]).stdout.contains("\"WirePlumber\"") }
    }

    /// Kills pipewire and wireplumber (SIGKILL: a crash), leaving the bus.
    public func killDaemons() {
        for daemon in daemons.reversed() where daemon.isRunning {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        daemons.removeAll()
        try? FileManager.default.removeItem(atPath: socket)
        try? FileManager.default.removeItem(atPath: socket + ".lock")
    }

    /// Kills everything it started.
    public func stop() {
        killDaemons()
        // dbus-daemon --session does not end on SIGTERM.
        if let bus, bus.isRunning {
            kill(bus.processIdentifier, SIGKILL)
            bus.waitUntilExit()
        }
        bus = nil
    }

    deinit { stop() }

    /// Polls `condition` every 100 ms for up to `seconds`; throws when it never holds.
    private static func waitFor(_ what: @autoclosure () -> String, seconds: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? condition()) == true { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw PrivatePipeWireError(description: "timed out waiting for \(what())")
    }

    /// Runs a PipeWire tool against this daemon.
    public func tool(_ name: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runToCompletion("/usr/bin/\(name)", arguments, environment: environment)
    }

    /// The description node `name` shows now, from `pw-dump` (the node's own properties, which change with
    /// `pw_stream_update_properties`; `pw-cli ls` shows the registry's copy, fixed when the node appeared). Nil when
    /// there is no such node.
    public func nodeDescription(_ name: String) throws -> String? {
        let dump = try tool("pw-dump", [])
        guard dump.status == 0, let objects = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]] else {
            return nil
        }
        for object in objects where object["type"] as? String == "PipeWire:Interface:Node" {
            let props = (object["info"] as? [String: Any])?["props"] as? [String: Any]
            if props?["node.name"] as? String == name { return props?["node.description"] as? String }
        }
        return nil
    }

    /// Starts a PipeWire tool against this daemon in the background.
    public func spawn(_ executable: String, _ arguments: [String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let path = "\(logs)/\(log).log"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The last lines a background program wrote.
    public func log(_ name: String) -> String {
        let text = (try? String(contentsOfFile: "\(logs)/\(name).log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(8).joined(separator: "\n")
    }
}

/// Why the private PipeWire did not start.
public struct PrivatePipeWireError: Error, CustomStringConvertible {
    public let description: String
}

/// Runs `executable` to completion (with `environment`, or this process's) and returns its status and output.
public func runToCompletion(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
    -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}
