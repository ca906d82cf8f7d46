import CamoTestSupport
import Foundation
import Testing

/// Runs the real `camo-agent` and `camo-studio` binaries built by `swift build`.
enum Binaries {
    /// `CAMO_BIN_DIR` (set by scripts/test), else the folder of the test bundle, which is SwiftPM's bin folder.
    static func path(_ name: String) throws -> String {
        var candidates: [String] = []
        if let dir = ProcessInfo.processInfo.environment["CAMO_BIN_DIR"] { candidates.append(dir) }
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        candidates.append(testBinary.deletingLastPathComponent().path)
        candidates.append(testBinary.deletingLastPathComponent().deletingLastPathComponent().path)
        for dir in candidates where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        Issue.record("\(name) not found in \(candidates); run `swift build` first (scripts/test does) or set CAMO_BIN_DIR")
        throw HarnessError.missingBinary(name)
    }
}

enum HarnessError: Error {
    case missingBinary(String)
    case agentDidNotStart(String)
    case studioFailed(status: Int32, stderr: String)
}

/// A scratch folder per test, removed at the end.
final class Scratch {
    let path: String

    init(_ label: String) throws {
        path = NSTemporaryDirectory() + "camo-e2e-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A running agent (`camo-agent run`), stopped with SIGTERM at the end.
final class AgentProcess {
    let process = Process()
    let port: Int
    let stateDir: String
    let logPath: String

    /// `launcher` runs the agent through another program (`ip netns exec NAME`), or directly when empty.
    init(scratch: Scratch, extra: [String] = [], allowUnpaired: Bool = true, stateName: String = "state", launcher: [String] = []) throws {
        stateDir = scratch.path + "/" + stateName
        logPath = scratch.path + "/\(stateName)-agent.log"
        let outPath = scratch.path + "/\(stateName)-agent.out"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let agentArguments = [
            "run", "--camera", "test", "--microphone", "test", "--port", "0", "--state-dir", stateDir, "--no-web", "--no-rtsp",
        ] + (allowUnpaired ? ["--allow-unpaired"] : []) + extra
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(launcher.dropFirst()) + [try Binaries.path("camo-agent")] + agentArguments
        } else {
            process.executableURL = URL(fileURLWithPath: try Binaries.path("camo-agent"))
            process.arguments = agentArguments
        }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        // The first line of output is port=N.
        var found: Int?
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: outPath, encoding: .utf8),
                let line = text.split(separator: "\n").first, line.hasPrefix("port="), text.contains("\n")
            {
                found = Int(line.dropFirst(5))
                break
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let found else {
            process.terminate()
            throw HarnessError.agentDidNotStart((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
        }
        port = found
    }

    var pid: Int32 { process.processIdentifier }

    /// Resident memory in KiB, from /proc.
    var residentKiB: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// `camo-agent status --json`, parsed.
    func status() throws -> [String: Any] {
        let output = try run(try Binaries.path("camo-agent"), ["status", "--json", "--state-dir", stateDir])
        let object = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8))
        return object as? [String: Any] ?? [:]
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// A `camo-studio record` run.
final class StudioProcess {
    let process = Process()
    let out: String
    private let stdoutPath: String
    private let stderrPath: String

    /// `target` replaces `--connect 127.0.0.1:PORT` (say, `--agent NAME --connect HOST:PORT --state-dir DIR`).
    init(scratch: Scratch, name: String, port: Int, arguments: [String], target: [String]? = nil) throws {
        out = scratch.path + "/" + name
        stdoutPath = scratch.path + "/\(name).stdout"
        stderrPath = scratch.path + "/\(name).stderr"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: try Binaries.path("camo-studio"))
        process.arguments = ["record"] + (target ?? ["--connect", "127.0.0.1:\(port)"]) + ["--out", out, "--name", name] + arguments
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits for the end and returns the one-line JSON summary.
    func summary() throws -> [String: Any] {
        process.waitUntilExit()
        let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw HarnessError.studioFailed(status: process.terminationStatus, stderr: stderr)
        }
        let stdout = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let line = stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (try JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// What the studio printed on stderr so far.
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Runs a command to completion and returns its output.
@discardableResult
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    try runToCompletion(executable, arguments)
}

/// Finds a tool on PATH, or records why the test cannot check with it.
func tool(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    Issue.record("\(name) is not installed; scripts/test installs it (apt-get install ffmpeg sox)")
    return nil
}

/// Polls `condition` every 100 ms for up to `seconds`; records an issue and throws when it never holds.
func waitFor(_ what: String, seconds: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? condition()) == true { return }
        Thread.sleep(forTimeInterval: 0.1)
    }
    Issue.record("timed out waiting for \(what)")
    throw CheckError("timed out waiting for \(what)")
}
