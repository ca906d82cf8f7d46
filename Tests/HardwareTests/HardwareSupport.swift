import CamoStudioKit
import Foundation
import Testing

// Helpers for the hardware tests: the real `camo-agent` and `camo-studio` binaries against the kernel's vivid
// virtual camera, inside the throw-away VM of scripts/vm-test (which sets CAMO_HARDWARE=1 and CAMO_BIN_DIR to the
// release binaries; debug binaries are too slow under emulation). Everything here blocks: the suite is serialized,
// and each test owns the camera for its whole run.

/// Every camera hardware test, one at a time (one vivid configuration per test). The nested suites live in the
/// other Camera*.swift files.
@Suite(
    "Camera hardware: camo-agent against vivid (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
struct CameraHardware {}

enum Hardware {
    /// scripts/vm-test sets CAMO_HARDWARE=1 inside the VM.
    static var isEnabled: Bool { ProcessInfo.processInfo.environment["CAMO_HARDWARE"] == "1" }

    /// vivid as a plain webcam: only /dev/video0 (and /dev/media0), one input "Webcam 0".
    static let webcam = "node_types=0x1 num_inputs=1 input_types=0x0"

    /// The release binaries (`CAMO_BIN_DIR`), else the folder of the test bundle.
    static func binary(_ name: String) throws -> String {
        var candidates: [String] = []
        if let dir = ProcessInfo.processInfo.environment["CAMO_BIN_DIR"] { candidates.append(dir) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent().path)
        for dir in candidates where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        throw HardwareError("\(name) not found in \(candidates): build it first (swift build -c release --scratch-path .build-release --product \(name)) and set CAMO_BIN_DIR")
    }

    /// Sets `process` up to run `binary` with `arguments`, inside network namespace `netns` when given
    /// (`ip netns exec` execs the program, so the pid is the program's).
    static func prepare(_ process: Process, binary: String, arguments: [String], netns: String?) throws {
        if let netns {
            let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }
            guard let ip else { throw HardwareError("ip (iproute2) is not installed") }
            process.executableURL = URL(fileURLWithPath: ip)
            process.arguments = ["netns", "exec", netns, binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds: the clock of the agent's slotTime and captureTime (same VM, same clock).
    static func monotonicNow() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Waits until `condition` holds; false on timeout.
    static func wait(seconds: Double, every interval: Double = 0.05, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: interval)
        }
        return condition()
    }

    /// The repeats allowed in `seconds` of recording: 3 per 10 s (at least 1).
    /// At most 3 repeats in any 10 s: a run of up to 10 s is one such window.
    static func repeatAllowance(seconds: Double) -> Int { 3 * Int((seconds / 10).rounded(.up)) }
}

struct HardwareError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The last `count` characters of a log, for failure messages.
func tail(_ text: String, _ count: Int = 3000) -> String {
    text.count <= count ? text : "…" + String(text.suffix(count))
}

// MARK: Processes

/// The outcome of a finished command.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    /// Ended by a signal (a crash, or our timeout kill): `status` is then the signal number.
    var signaled: Bool
    var timedOut: Bool
    var stdout: String
    var stderr: String

    var description: String {
        let how = timedOut ? "timed out and was killed" : signaled ? "killed by signal \(status)" : "exit \(status)"
        return "\(how)\n--- stdout:\n\(tail(stdout))\n--- stderr:\n\(tail(stderr))"
    }
}

/// Runs a command to completion (killed after `timeout` s), with stdout and stderr through files (no pipe deadlocks).
@discardableResult
func runCommand(_ executable: String, _ arguments: [String], timeout: Double = 60) throws -> CommandResult {
    let directory = NSTemporaryDirectory() + "camo-hw-cmd-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let outPath = directory + "/out", errPath = directory + "/err"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle(forWritingAtPath: outPath)
    process.standardError = FileHandle(forWritingAtPath: errPath)
    try process.run()
    let finished = Hardware.wait(seconds: timeout, every: 0.02) { !process.isRunning }
    if !finished {
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal, timedOut: !finished,
        stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
}

/// A bash command line.
@discardableResult
func shell(_ script: String, timeout: Double = 60) throws -> CommandResult {
    try runCommand("/bin/bash", ["-c", script], timeout: timeout)
}

/// `camo-agent ARGS` (a short command such as devices, controls, info, status).
@discardableResult
func agentCommand(_ arguments: [String], timeout: Double = 60) throws -> CommandResult {
    try runCommand(try Hardware.binary("camo-agent"), arguments, timeout: timeout)
}

/// Parses JSON text, or throws with the text.
func parseJSON(_ text: String) throws -> Any {
    do {
        return try JSONSerialization.jsonObject(with: Data(text.utf8))
    } catch {
        throw HardwareError("not JSON (\(error)): \(tail(text, 1500))")
    }
}

/// CPU seconds (user + system) a process has used so far, from /proc/PID/stat; nil when it is gone.
func cpuSeconds(pid: Int32) -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    // After "pid (comm) ": state is field 3, utime field 14, stime field 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A scratch folder per test (in the VM's tmpfs), removed at the end.
final class HardwareScratch {
    let path: String

    init(_ label: String) throws {
        path = NSTemporaryDirectory() + "camo-hw-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

// MARK: vivid

/// Loads and unloads the vivid module and talks to it with v4l2-ctl.
enum Vivid {
    /// Runs `body` with vivid loaded with `parameters`, and unloads it afterwards. `body` must stop every process that
    /// opened the camera before it returns (the module cannot be removed while a node is open).
    static func with<T>(_ parameters: String, _ body: () throws -> T) throws -> T {
        try load(parameters)
        defer { unload() }
        return try body()
    }

    /// `rmmod vivid` (whatever configuration an earlier test left), `modprobe vivid PARAMETERS`, then waits until
    /// /dev/video0 answers.
    static func load(_ parameters: String) throws {
        _ = try? shell("rmmod vivid 2>/dev/null")
        let probe = try shell("modprobe vivid \(parameters) 2>&1")
        guard probe.status == 0 else { throw HardwareError("modprobe vivid \(parameters): \(probe)") }
        let ready = Hardware.wait(seconds: 20, every: 0.1) {
            FileManager.default.fileExists(atPath: "/dev/video0")
                && (try? shell("v4l2-ctl -d /dev/video0 --info >/dev/null 2>&1"))?.status == 0
        }
        guard ready else { throw HardwareError("/dev/video0 did not appear after modprobe vivid \(parameters)") }
    }

    /// `rmmod vivid`, retried for a while; an issue when it cannot (something still holds a node open).
    static func unload() {
        var last: CommandResult?
        for _ in 0..<20 {
            guard let result = try? shell("grep -q '^vivid ' /proc/modules || exit 0; rmmod vivid 2>&1") else { return }
            if result.status == 0 { return }
            last = result
            Thread.sleep(forTimeInterval: 0.25)
        }
        let holders = (try? shell("ls -l /proc/[0-9]*/fd 2>/dev/null | grep -E 'video|media' | head"))?.stdout ?? ""
        Issue.record("rmmod vivid failed (is a process still holding the camera?): \(last.map(String.init(describing:)) ?? "")\n\(holders)")
    }

    /// `v4l2-ctl -d /dev/video0 ARGS`; throws when it fails.
    @discardableResult
    static func ctl(_ arguments: String, timeout: Double = 60) throws -> String {
        let result = try shell("v4l2-ctl -d /dev/video0 \(arguments)", timeout: timeout)
        guard result.status == 0, !result.signaled else { throw HardwareError("v4l2-ctl -d /dev/video0 \(arguments): \(result)") }
        return result.stdout + result.stderr
    }

    /// Unplug: the platform driver lets go of vivid.0 (the /dev nodes vanish at once).
    static func unplug() throws {
        try write("vivid.0", to: "/sys/bus/platform/drivers/vivid/unbind")
    }

    /// Replug: the nodes come back (as /dev/video0 again only when nobody kept the old one open).
    static func replug() throws {
        try write("vivid.0", to: "/sys/bus/platform/drivers/vivid/bind")
    }

    private static func write(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw HardwareError("cannot open \(path)") }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
    }
}

// MARK: Agent and studio

/// A running `camo-agent run --camera PATH`, stopped with SIGINT (then SIGKILL) at the end.
final class HardwareAgent {
    let process = Process()
    let port: Int
    let stateDir: String
    let logPath: String
    private(set) var stopped: CommandResult?

    /// Starts the agent and waits for `port=N`, then (with `waitForCamera`) for the camera to stream: a
    /// "Camera mode chosen" line. Throws with the log when it exits or its camera cannot start.
    init(_ scratch: HardwareScratch, camera: String = "/dev/video0", microphone: String = "test", arguments: [String] = [],
         label: String = "agent", waitForCamera: Bool = true, timeout: Double = 60, allowUnpaired: Bool = true,
         port: Int = 0, netns: String? = nil) throws {
        stateDir = scratch.path + "/\(label)-state"
        logPath = scratch.path + "/\(label).log"
        let outPath = scratch.path + "/\(label).out"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let runArguments = [
            "run", "--camera", camera, "--port", String(port), "--state-dir", stateDir, "--no-web", "--no-rtsp",
            "--name", "vm-\(label)", "--microphone", microphone,
        ] + (allowUnpaired ? ["--allow-unpaired"] : []) + arguments
        try Hardware.prepare(process, binary: Hardware.binary("camo-agent"), arguments: runArguments, netns: netns)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        let process = self.process
        var found: Int?
        _ = Hardware.wait(seconds: timeout) {
            if let text = try? String(contentsOfFile: outPath, encoding: .utf8), text.contains("\n"),
                let line = text.split(separator: "\n").first, line.hasPrefix("port=")
            {
                found = Int(line.dropFirst(5))
            }
            return found != nil || !process.isRunning
        }
        guard let found else {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            Self.kill(process)
            throw HardwareError("camo-agent \(process.arguments ?? []) did not print port=N (exit \(process.terminationStatus)):\n\(tail(log))")
        }
        self.port = found
        if waitForCamera {
            let started = Hardware.wait(seconds: timeout) {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                return log.contains("Camera mode chosen") || log.contains("The camera could not start") || !process.isRunning
            }
            let log = self.log
            guard started, log.contains("Camera mode chosen") else {
                Self.kill(process)
                throw HardwareError("the agent's camera did not start streaming (\(process.arguments ?? [])):\n\(tail(log))")
            }
        }
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Every "Camera mode chosen" log line (the last one is the mode in use).
    var modeLines: [String] { log.split(separator: "\n").map(String.init).filter { $0.contains("Camera mode chosen") } }

    /// The "Camera mode chosen" line in force when the last studio session closed (the measured one, after the
    /// warm-up; when it ends, the agent goes back to the mode for 1280x720, the size it wants without studios). On a
    /// slow guest the camera's restart for the studio's size can end after the 1 s warm-up session, so the mode of
    /// the warm-up is not the one measured.
    var sessionModeLine: String? {
        var chosen: String?
        var atClose: String?
        var closing = false
        for line in log.split(separator: "\n") {
            if line.contains("Session closed") || line.contains("The studio said goodbye") {
                if !closing { atClose = chosen }
                closing = true
                continue
            }
            if line.contains("Studio connected") { closing = false }
            if line.contains("Camera mode chosen") {
                chosen = String(line)
                closing = false
            }
        }
        return atClose ?? chosen
    }

    /// `mode=` of ``sessionModeLine``, e.g. `YUYV 640x360 at 30 fps`.
    var mode: String? {
        guard let line = sessionModeLine, let range = line.range(of: #"mode=\S+ \d+x\d+ at [0-9.]+ fps"#, options: .regularExpression)
        else { return nil }
        return String(line[range].dropFirst(5))
    }

    /// `reason=` of ``sessionModeLine``.
    var reason: String? {
        guard let line = sessionModeLine, let start = line.range(of: " reason=") else { return nil }
        let rest = line[start.upperBound...]
        let end = rest.range(of: " [CamoCapture]")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    /// Waits for a log line containing `text`.
    func waitForLog(_ text: String, seconds: Double = 60) -> Bool {
        Hardware.wait(seconds: seconds, every: 0.1) { log.contains(text) }
    }

    /// SIGINT, then SIGKILL after 15 s. Returns how it ended (nil if it had already been stopped).
    @discardableResult
    func stop() -> CommandResult? {
        guard stopped == nil else { return stopped }
        var timedOut = false
        if process.isRunning {
            Foundation.kill(pid, SIGINT)
            if !Hardware.wait(seconds: 15, { !process.isRunning }) {
                timedOut = true
                Foundation.kill(pid, SIGKILL)
            }
        }
        process.waitUntilExit()
        stopped = CommandResult(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal, timedOut: timedOut,
            stdout: "", stderr: log)
        return stopped
    }

    private static func kill(_ process: Process) {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// A `camo-studio record` run against an agent.
final class HardwareStudio {
    let process = Process()
    let out: String
    let seconds: Double
    private let stdoutPath: String
    private let stderrPath: String

    init(_ scratch: HardwareScratch, port: Int, label: String = "studio", seconds: Double, size: String = "640x360",
         codec: String?, samples: Int? = nil, videoFile: Bool = false, host: String = "127.0.0.1", arguments: [String] = [],
         netns: String? = nil) throws {
        self.seconds = seconds
        out = scratch.path + "/" + label
        stdoutPath = scratch.path + "/\(label).stdout"
        stderrPath = scratch.path + "/\(label).stderr"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let recordArguments = [
            "record", "--connect", "\(host.contains(":") ? "[\(host)]" : host):\(port)", "--out", out, "--name", label,
            "--seconds", String(seconds), "--size", size,
        ] + (codec.map { ["--codec", $0] } ?? []) + (samples.map { ["--samples", String($0)] } ?? [])
            + (videoFile ? [] : ["--no-pixels"]) + arguments  // no decode, no hash: the studio must not starve the emulated VM
        try Hardware.prepare(process, binary: Hardware.binary("camo-studio"), arguments: recordArguments, netns: netns)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// The studio's CPU share (1 = one CPU busy) from its start to its last moments, measured by ``summary()``.
    private(set) var cpuShare: Double?

    /// Waits for the end (generously: emulation is slow) and returns the one-line JSON summary and its text.
    func summary() throws -> (summary: RecordingSummary, line: String) {
        let started = Hardware.monotonicNow()
        var lastCPU: (seconds: Double, at: UInt64)?
        let finished = Hardware.wait(seconds: seconds * 3 + 90, every: 0.1) {
            if let used = cpuSeconds(pid: pid) { lastCPU = (used, Hardware.monotonicNow()) }
            return !process.isRunning
        }
        if let lastCPU, lastCPU.at > started { cpuShare = lastCPU.seconds / (Double(lastCPU.at - started) / 1e9) }
        if !finished { kill(pid, SIGKILL) }
        process.waitUntilExit()
        let stdout = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        guard finished, process.terminationReason == .exit, process.terminationStatus == 0 else {
            let how = !finished ? "timed out" : process.terminationReason == .exit ? "exit \(process.terminationStatus)" : "signal \(process.terminationStatus)"
            throw HardwareError("camo-studio \(how):\n\(tail(stderr))\n\(tail(stdout))")
        }
        let line = stdout.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return (try JSONDecoder().decode(RecordingSummary.self, from: Data(line.utf8)), line)
        } catch {
            throw HardwareError("camo-studio printed no summary (\(error)):\n\(tail(stdout))\n\(tail(stderr))")
        }
    }

    /// DIR/audio.json: each packet's offset in audio.wav and its timestamp.
    func audioIndex() throws -> AudioIndex {
        try AudioIndex.decode(Data(contentsOf: URL(fileURLWithPath: out + "/audio.json")))
    }

    /// DIR/audio.wav as interleaved stereo floats.
    func audio() throws -> [Float] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out + "/audio.wav")))
        return try WAVReader(bytes: bytes).samples
    }

    /// DIR/video.json.
    func index() throws -> VideoIndex {
        try JSONDecoder().decode(VideoIndex.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/video.json")))
    }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
}

// MARK: Checks

/// What is wrong with a recording that should be `seconds` of steady 30 fps at `width`x`height` from a camera that
/// delivered every frame once: frames within 3 %, fps 30 ± 0.5, no dropped slots, at most 3 repeats per 10 s, no
/// duplicated camera frame, at most `maxGaps` skipped camera frames, no "no signal" frame. Empty when all is well.
func steady30Problems(
    _ summary: RecordingSummary, seconds: Double, width: Int, height: Int, maxGaps: Int = 3, checkRepeats: Bool = true
) -> [String] {
    let expected = 30 * seconds
    let slack = max(1, (expected * 0.03).rounded(.down))
    let allowedRepeats = Hardware.repeatAllowance(seconds: seconds)
    var problems: [String] = []
    if abs(Double(summary.frames) - expected) > slack { problems.append("frames \(summary.frames), want \(Int(expected)) ± \(Int(slack))") }
    if abs(summary.fps - 30) > 0.5 { problems.append("fps \(summary.fps), want 30 ± 0.5") }
    if summary.width != width || summary.height != height { problems.append("size \(summary.width)x\(summary.height), want \(width)x\(height)") }
    if summary.dropped != 0 { problems.append("dropped \(summary.dropped), want 0") }
    if checkRepeats && summary.repeated > allowedRepeats { problems.append("repeated \(summary.repeated), want ≤ \(allowedRepeats)") }
    if summary.sourceDuplicates != 0 { problems.append("sourceDuplicates \(summary.sourceDuplicates), want 0") }
    if checkRepeats && summary.sourceGaps > maxGaps { problems.append("sourceGaps \(summary.sourceGaps), want ≤ \(maxGaps)") }
    if summary.noSignal != 0 { problems.append("noSignal \(summary.noSignal), want 0") }
    return problems
}

/// A format's path from vivid to the studio: the mode, the size, 30 fps of slots with none dropped, no camera frame
/// sent twice, no no-signal filler, at least half the slots carrying a new camera frame, and at most 3 repeats per
/// 10 s (a started part counts whole) that the camera's own skips do not explain (``repeatsBeyondCameraSkips(_:)``).
/// A guest slowed by a busy host makes vivid skip frames: its timer thread wakes late and its sequence number jumps
/// (4-6 of 90 at 320x180 on the CI host of November 2026, every one of them matched by a repeat); the pacer then has
/// nothing new to send and repeats, which is its contract. Those skips are printed, not bounded apart: a format whose
/// conversion could not keep up would miss slots on frames that the camera did deliver, which this counts. The studio
/// asks for 320x180, so the camera, idle in its default size before, restarts in the new mode once the studio
/// connected: the repeats in that gap (the camera's own restart, 2-3 slots in which the studio got the last frame from
/// before) are counted apart, bounded by 5, and printed. A new studio now waits for a new frame instead
/// (FirstFrameGate, up to 10 slots), so the count is 0 unless the restart takes longer than that.
func expectFormatPath(
    _ run: CameraRecording, seconds: Double, width: Int, height: Int, mode: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var problems = steady30Problems(run.summary, seconds: seconds, width: width, height: height, checkRepeats: false)
    if run.agent.mode != mode { problems.append("camera mode \(run.agent.mode ?? "none"), want \(mode)") }
    if run.summary.sourceFrames * 2 < run.summary.frames {
        problems.append("only \(run.summary.sourceFrames) of \(run.summary.frames) slots carried a new camera frame, want at least half")
    }
    let allowed = Hardware.repeatAllowance(seconds: seconds)
    let index: VideoIndex
    do {
        index = try run.studio.index()
    } catch {
        Issue.record("video.json unreadable: \(error)\n\(run.context)", sourceLocation: sourceLocation)
        return
    }
    let restart = restartRepeats(index)
    let own = repeatsBeyondCameraSkips(index)
    if own > allowed { problems.append("\(own) repeats that the camera's skips do not explain, want ≤ \(allowed)") }
    if restart > 5 { problems.append("the camera's restart cost \(restart) repeated slots, want ≤ 5") }
    #expect(problems.isEmpty, "\(problems.joined(separator: "; "))\n\(run.context)", sourceLocation: sourceLocation)
    print("HW repeats \(mode): \(run.summary.repeated), \(restart) of them while the camera restarted in the studio's size, "
          + "\(own) not explained by the camera's \(run.summary.sourceGaps) skipped frames (bound \(allowed) \(own <= allowed ? "held" : "missed"))")
}

/// Repeats that the camera's own skips do not explain. Between two new camera frames A and B that went out in turn,
/// with r repeats between them, the camera left a hole of (B's sequence − A's) camera periods (the period is the
/// median over the recording of capture-time steps per sequence step, so vivid's jittery timestamps under emulation
/// do not matter). A hole of Δ holds up to ⌈Δ / 33.3 ms⌉ slot instants, the first of which takes A: up to
/// ⌈Δ / 33.3 ms⌉ − 1 of the repeats are the camera's (for a 30 fps camera, exactly the frames it skipped; 0.15 of a
/// slot is forgiven for rounding). Repeats beyond that are slots missed on frames the camera did deliver. The camera's
/// restart (the run before the first new frame, or before a frame whose sequence went back: ``restartRepeats(_:)``)
/// is not counted here, nor, with `excludingStalls`, a run that a stall of the agent process paid for
/// (``stallRepeats(_:)``); repeats after the last new frame are, as nothing explains them.
func repeatsBeyondCameraSkips(_ index: VideoIndex, excludingStalls: Bool = false) -> Int {
    let slot = 1e9 / 30
    let fresh = index.frames.filter { !$0.repeat && !$0.noSignal }
    var steps: [Double] = []
    for (a, b) in zip(fresh, fresh.dropFirst()) where b.sourceSequence > a.sourceSequence && b.captureTime > a.captureTime {
        steps.append(Double(b.captureTime - a.captureTime) / Double(b.sourceSequence - a.sourceSequence))
    }
    steps.sort()
    let period = steps.isEmpty ? slot : steps[steps.count / 2]
    var previous: VideoIndex.Frame?
    var run = 0
    var total = 0
    for frame in index.frames {
        if frame.repeat {
            run += 1
            continue
        }
        if frame.noSignal { continue }
        let stall = frame.slotTime > frame.captureTime && frame.slotTime - frame.captureTime > 150_000_000
        if let last = previous, frame.sourceSequence > last.sourceSequence, !(excludingStalls && stall) {
            let hole = Double(frame.sourceSequence - last.sourceSequence) * period
            let explained = max(0, Int((hole / slot - 0.15).rounded(.up)) - 1)
            total += max(0, run - explained)
        }
        previous = frame
        run = 0
    }
    return total + run
}

/// Repeats in the gap where the camera restarted for the studio: the repeats before the first new camera frame of the
/// session (the last frame from before, which the agent sends once FirstFrameGate's 10 slots pass), or, when the
/// session began with frames of the old mode, the run of repeats just before the first new frame whose source
/// sequence went back (V4L2 counts from 0 at each stream start). 0 when the camera did not restart.
func restartRepeats(_ index: VideoIndex) -> Int {
    var previous: UInt32?
    var run = 0
    for frame in index.frames {
        if frame.repeat {
            run += 1
            continue
        }
        if frame.noSignal { continue }
        guard let last = previous else {
            if run > 0 { return run }
            previous = frame.sourceSequence
            continue
        }
        if frame.sourceSequence < last { return run }
        previous = frame.sourceSequence
        run = 0
    }
    return 0
}

/// One recording through the real processes.
struct CameraRecording {
    var summary: RecordingSummary
    /// The summary as the studio printed it.
    var line: String
    /// The agent, already stopped (its log stays readable while the scratch folder lives).
    var agent: HardwareAgent
    /// The scratch folder that holds the agent's log and the studio's recording: kept alive with the recording, so a
    /// caller that made it inline (a retry) can still read the log.
    var scratch: HardwareScratch
    var studio: HardwareStudio

    /// How late new camera frames went out (slotTime − captureTime), from video.json.
    var timing: String
    /// Repeats that a stall of the whole agent process paid for (see ``stallRepeats(_:)``).
    var stalls = StallRepeats()

    /// For failure messages: the summary, the mode line, the timing and the end of the agent's log.
    var context: String {
        "summary \(line)\nmode: \(agent.mode ?? "none"), reason: \(agent.reason ?? "none")\n\(timing)\nagent log:\n\(tail(agent.log, 1500))"
    }
}

/// Diagnosis of a recording's pacing from video.json: how long after its V4L2 timestamp each new camera frame went out
/// (slotTime − captureTime). The agent's pacer puts a frame into the first slot after the frame *reaches the pacer*;
/// a frame delayed past a slot boundary (driver or agent jitter, a starved CPU) leaves that slot to repeat the previous
/// frame and then shares the next slot with its successor, which replaces it: a repeat plus a skipped camera frame.
/// A wide spread of these latencies, or latencies far above one slot (33 ms), show such delays.
/// Repeats caused by a stall: a run of repeats whose next new frame went out more than 150 ms after its V4L2
/// timestamp. The pacer slots a frame by its capture time, so such a frame reached the pacer that late: the agent
/// process did not run (under TCG emulation the whole guest pauses now and then), not a pacing or conversion
/// fault. Counted apart; the tests that use it bound them separately.
struct StallRepeats: Equatable {
    var events = 0
    var repeats = 0
}

func stallRepeats(_ index: VideoIndex) -> StallRepeats {
    let frames = index.frames
    var result = StallRepeats()
    var run = 0
    for frame in frames {
        if frame.repeat {
            run += 1
            continue
        }
        if run > 0, !frame.noSignal, frame.slotTime > frame.captureTime, frame.slotTime - frame.captureTime > 150_000_000 {
            result.events += 1
            result.repeats += run
        }
        run = 0
    }
    return result
}

func timingDiagnosis(_ index: VideoIndex) -> String {
    let frames = index.frames
    let fresh = frames.filter { !$0.repeat && !$0.noSignal }
    guard !fresh.isEmpty else { return "timing: no new camera frames" }
    func latency(_ frame: VideoIndex.Frame) -> Double { (Double(frame.slotTime) - Double(frame.captureTime)) / 1e6 }
    let latencies = fresh.map(latency).sorted()
    func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count - 1) * p))] }
    var afterRepeat: [Double] = []
    for (i, frame) in frames.enumerated() where frame.repeat && i + 1 < frames.count && !frames[i + 1].repeat {
        afterRepeat.append(latency(frames[i + 1]))
    }
    func ms(_ value: Double) -> String { String(format: "%.1f", value) }
    return "timing: slotTime − captureTime of \(fresh.count) new frames: min \(ms(latencies[0])) ms, p5 \(ms(percentile(0.05))), "
        + "median \(ms(percentile(0.5))), p95 \(ms(percentile(0.95))), max \(ms(latencies[latencies.count - 1])); "
        + "\(frames.filter(\.repeat).count) repeats; for the frame after a repeat: \(afterRepeat.prefix(12).map(ms).joined(separator: " "))"
}

/// Starts an agent on /dev/video0 with `agentArguments`, records `seconds` with one studio, stops the agent, and
/// prints the result (`HW label: summary`) for the test log.
func recordFromCamera(
    _ scratch: HardwareScratch, label: String, agentArguments: [String] = [], seconds: Double, size: String = "640x360",
    codec: String = "jpeg", videoFile: Bool = false
) throws -> CameraRecording {
    let agent = try HardwareAgent(scratch, arguments: agentArguments)
    defer { agent.stop() }
    // A 1 s warm-up session first: under emulation the first second after a studio connects (code paged in over
    // 9p, the encoder set up, the camera mode settled for the studio's size) is slow, and it is not what is measured.
    let warmup = try HardwareStudio(scratch, port: agent.port, label: "warmup", seconds: 1, size: size, codec: codec)
    _ = try? warmup.summary()
    let cpuBefore = cpuSeconds(pid: agent.pid)
    let wallBefore = Hardware.monotonicNow()
    let studio = try HardwareStudio(scratch, port: agent.port, seconds: seconds, size: size, codec: codec, videoFile: videoFile)
    let result: (summary: RecordingSummary, line: String)
    do {
        result = try studio.summary()
    } catch {
        throw HardwareError("\(label): \(error)\nagent log:\n\(tail(agent.log))")
    }
    // The agent's CPU share over the session (1 = one CPU busy): shows when emulation is what limits the rate.
    let cpuAfter = cpuSeconds(pid: agent.pid)
    let wall = Double(Hardware.monotonicNow() - wallBefore) / 1e9
    var share: Double?
    if let before = cpuBefore, let after = cpuAfter, wall > 0 { share = (after - before) / wall }
    let stop = agent.stop()
    let index = try? studio.index()
    let stalls = index.map(stallRepeats) ?? StallRepeats()
    let timing = (index.map(timingDiagnosis) ?? "timing: no video.json")
        + "; stalls: \(stalls.events) (\(stalls.repeats) repeats)"
        + "; CPU during the session: agent " + (share.map { String(format: "%.0f %%", $0 * 100) } ?? "unknown")
        + ", studio " + (studio.cpuShare.map { String(format: "%.0f %%", $0 * 100) } ?? "unknown")
    print("HW \(label): \(result.line) mode=\(agent.mode ?? "none")\nHW \(label) \(timing)")
    #expect(stop?.signaled == false && stop?.timedOut == false && stop?.status == 0, "\(label): the agent did not stop cleanly on SIGINT: \(stop.map(String.init(describing:)) ?? "")")
    return CameraRecording(
        summary: result.summary, line: result.line, agent: agent, scratch: scratch, studio: studio, timing: timing, stalls: stalls)
}

// MARK: ffmpeg as the reference for a capture → JPEG job

/// How fast ffmpeg does the agent's capture → JPEG job on this machine: frames per second that it captured from
/// /dev/video0 (YUYV at `size`), converted and encoded to JPEG (its mjpeg encoder) and threw away, over `seconds` of
/// wall-clock input timestamps. Under emulation the guest's speed depends on the host it runs on; this rate, taken in
/// the same run, says what the guest can do, so a test can tell a slow guest from a slow agent.
struct FFmpegJPEGReference {
    /// Frames per second with `-threads 1`: the same shape of work as the agent's, one encoding thread.
    var oneThread: Double
    /// Frames per second with ffmpeg's default threads (slice threads over every CPU): what a parallel encoder gets.
    var defaultThreads: Double

    /// Runs both measurements (each `seconds` long); throws when ffmpeg is missing or reports no frames.
    static func measure(size: String, seconds: Double = 5) throws -> FFmpegJPEGReference {
        FFmpegJPEGReference(oneThread: try rate(size: size, seconds: seconds, threads: "1"),
                            defaultThreads: try rate(size: size, seconds: seconds, threads: "0"))
    }

    private static func rate(size: String, seconds: Double, threads: String) throws -> Double {
        guard let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw HardwareError("ffmpeg is not installed (apt-get install ffmpeg); it is the reference for the JPEG rate") }
        // Wall-clock input timestamps, passed through to an encoder with a fine time base: two frames must never
        // share a timestamp, which the mjpeg encoder refuses ("Invalid pts"); -t then counts wall time, as the
        // agent's run does.
        let result = try runCommand(ffmpeg, [
            "-hide_banner", "-nostdin", "-nostats", "-f", "v4l2", "-use_wallclock_as_timestamps", "1", "-input_format", "yuyv422",
            "-framerate", "30", "-video_size", size, "-i", "/dev/video0", "-t", String(seconds), "-fps_mode", "passthrough",
            "-enc_time_base", "1:1000000", "-threads", threads, "-c:v", "mjpeg", "-q:v", "4",
            "-f", "null", "-",
        ], timeout: 60 + seconds * 4)
        let output = result.stderr
        guard result.status == 0, let last = output.matches(of: /frame=\s*(\d+)/).last, let frames = Int(last.output.1), frames > 0
        else { throw HardwareError("ffmpeg's reference run (threads \(threads)) failed: \(tail(output))") }
        return Double(frames) / seconds
    }

    var description: String {
        String(format: "ffmpeg capture → JPEG on this guest: %.1f fps on one thread, %.1f fps on its default threads", oneThread, defaultThreads)
    }
}

/// What ``steady30Problems(_:seconds:width:height:maxGaps:checkRepeats:)`` finds in a JPEG run, judged against what
/// this guest can do. The pacer's contract holds in full whatever the guest (the slots at 30 fps, none dropped, every
/// repeat flagged, no frame sent twice), and the agent must carry new camera frames at min(29, 0.9x ffmpeg's
/// one-thread rate) a second: the same shape of work (one encoding thread), while the agent also sends to a studio
/// that shares the guest. With headroom (ffmpeg's one thread makes ≥ 1.5x 30 fps of the same job) the agent must
/// also miss no more than 3 slots per 10 s on frames the camera delivered (``repeatsBeyondCameraSkips(_:)``): vivid's
/// own skips, when a busy host makes its timer thread wake late, are the camera's and are printed. Without headroom
/// the agent cannot keep every slot and only the rate is judged. The camera mode must be `mode`.
func steady30Problems(
    _ run: CameraRecording, seconds: Double, width: Int, height: Int, mode: String, against reference: FFmpegJPEGReference
) -> [String] {
    let headroom = reference.oneThread >= 45
    var found = steady30Problems(run.summary, seconds: seconds, width: width, height: height, checkRepeats: false)
    let rate = Double(run.summary.sourceFrames) / seconds
    let wanted = min(29, 0.9 * reference.oneThread)
    if rate < wanted {
        found.append(String(format: "%.1f new camera frames a second, want ≥ %.1f (%@)", rate, wanted, reference.description))
    }
    if headroom {
        let allowed = Hardware.repeatAllowance(seconds: seconds)
        switch Result(catching: { try run.studio.index() }) {
        case .success(let index):
            // The camera does not restart here (the warm-up session asked for the same mode), so a run of repeats
            // before the first new frame counts against the agent too.
            let own = repeatsBeyondCameraSkips(index) + restartRepeats(index)
            if own > allowed {
                found.append("\(own) repeats that the camera's \(run.summary.sourceGaps) skips do not explain, want ≤ \(allowed)")
            }
        case .failure(let error):
            found.append("video.json unreadable: \(error)")
        }
    }
    if run.agent.mode != mode { found.append("camera mode \(run.agent.mode ?? "none"), want \(mode)") }
    return found
}

/// Prints how the agent's rate of new camera frames in `run` compares with the reference.
func printJPEGBench(_ label: String, _ run: CameraRecording, seconds: Double, against reference: FFmpegJPEGReference) {
    let rate = Double(run.summary.sourceFrames) / seconds
    print(String(format: "BENCH %@ jpeg: agent %.1f new frames/s = %.2fx ffmpeg's one thread, %.2fx its default threads (%@; %@)",
                 label, rate, rate / reference.oneThread, rate / reference.defaultThreads, reference.description,
                 reference.oneThread >= 45 ? "headroom: ≤ 3 repeats per 10 s beyond the camera's skips" : "no headroom: the rate alone"))
}
