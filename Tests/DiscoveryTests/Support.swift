import CamoDiscovery
import Foundation
import Logging
import Synchronization

/// The repository root, from this file's path (Tests/DiscoveryTests/Support.swift).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

struct CommandResult {
    var status: Int32
    var output: String
}

/// Runs a program to the end; stdout and stderr together.
func run(_ executable: String, _ arguments: [String]) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = repositoryRoot
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}

struct ScriptFailed: Error, CustomStringConvertible {
    var command: String
    var result: CommandResult
    var description: String { "`\(command)` exited with \(result.status):\n\(result.output)" }
}

/// scripts/avahi-test with one action; throws with its output when it fails.
@discardableResult
func avahiTest(_ action: String) throws -> CommandResult {
    let script = repositoryRoot.appendingPathComponent("scripts/avahi-test").path
    let result = try run(script, [action])
    guard result.status == 0 else { throw ScriptFailed(command: "scripts/avahi-test \(action)", result: result) }
    return result
}

/// A unique instance name: "<prefix> <random hex>".
func uniqueName(_ prefix: String) -> String {
    "\(prefix) \(String(UInt32.random(in: 0x1000_0000...0xFFFF_FFFF), radix: 16))"
}

/// A value behind a lock, shareable by reference (a `Mutex` cannot be captured by closures).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

// MARK: - Logs

/// Keeps every log line of the code under test, to count them and to print them when a test fails.
final class LogCapture: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: String
    }

    private let lines = Mutex<[Line]>([])
    private let start = ContinuousClock.now

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ line: Line) { lines.withLock { $0.append(line) } }

    var all: [Line] { lines.withLock { $0 } }

    func count(where predicate: (Line) -> Bool) -> Int { all.filter(predicate).count }

    /// Everything logged, one line each.
    var text: String {
        all.map { "[\($0.level)] \($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.append(Line(level: event.level, message: "\(event.message)", metadata: rendered))
        }
    }
}

// MARK: - Publisher status

/// Records every status a publisher reports, with the time it arrived.
final class StatusRecorder: Sendable {
    struct Entry: Sendable {
        var status: PublisherStatus
        var at: ContinuousClock.Instant
    }

    private let entries = Locked<[Entry]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ publisher: AvahiPublisher) {
        let stream = publisher.statusUpdates()
        task.withLock {
            $0 = Task { [entries] in
                for await status in stream { entries.withLock { $0.append(Entry(status: status, at: .now)) } }
            }
        }
    }

    deinit { task.withLock { $0?.cancel() } }

    var all: [Entry] { entries.withLock { $0 } }
    var count: Int { entries.withLock { $0.count } }

    /// The first status matching `predicate` at index `from` or later, waiting up to `timeout`.
    func wait(from: Int = 0, within timeout: Duration, _ predicate: (PublisherStatus) -> Bool) async -> Entry? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = entries.withLock { list in list.dropFirst(from).first { predicate($0.status) } }
            if let found { return found }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    var text: String { all.map { "\($0.status)" }.joined(separator: " → ") }
}

// MARK: - python-zeroconf observer

/// scripts/zeroconf-browse.py as a subprocess: an mDNS stack independent of avahi-daemon, bound to 127.0.0.1.
final class ZeroconfObserver: @unchecked Sendable {
    struct Event: Sendable, CustomStringConvertible {
        var event: String
        var type: String
        var name: String
        var port: Int?
        var addresses: [String]
        var txt: [String: String]
        var txtOrder: [String]
        var at: ContinuousClock.Instant
        var raw: String

        var description: String { raw }
    }

    private let process = Process()
    private let events = Locked<[Event]>([])
    private let rawLines = Locked<[String]>([])
    private let errors = Pipe()

    /// Starts the browser for `types` and waits until it says it is ready.
    init(types: [String] = [CamoServiceType.agent, CamoServiceType.pairing], timeout: Int = 60) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [repositoryRoot.appendingPathComponent("scripts/zeroconf-browse.py").path,
                             "--timeout", "\(timeout)"] + types.flatMap { ["--type", $0] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let reader = output.fileHandleForReading
        let thread = Thread { [events, rawLines] in
            var buffer = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    rawLines.withLock { $0.append(line) }
                    if let event = ZeroconfObserver.parse(line) { events.withLock { $0.append(event) } }
                }
            }
        }
        thread.start()
        guard await waitFor(within: .seconds(10), { $0.event == "ready" }) != nil else {
            let log = self.log
            stop()
            throw ObserverFailed(message: "zeroconf-browse.py did not get ready within 10 s:\n\(log)")
        }
    }

    struct ObserverFailed: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    deinit { stop() }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    private static func parse(_ line: String) -> Event? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        var txt: [String: String] = [:]
        for (key, value) in object["txt"] as? [String: Any] ?? [:] { txt[key] = value as? String ?? "\(value)" }
        return Event(
            event: object["event"] as? String ?? "?", type: object["type"] as? String ?? "",
            name: object["name"] as? String ?? "", port: object["port"] as? Int,
            addresses: object["addresses"] as? [String] ?? [], txt: txt,
            txtOrder: object["txt_order"] as? [String] ?? [], at: .now, raw: line)
    }

    var all: [Event] { events.withLock { $0 } }

    /// The first event matching `predicate`, waiting up to `within`.
    func waitFor(within timeout: Duration, _ predicate: (Event) -> Bool) async -> Event? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = events.withLock({ $0.first(where: predicate) }) { return found }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Every line it printed (and its stderr so far, when it has exited).
    var log: String {
        var text = rawLines.withLock { $0.joined(separator: "\n") }
        if !process.isRunning {
            text += "\n" + String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        return text
    }
}

extension ZeroconfObserver.Event {
    /// An add or update of `name`/`type` (python-zeroconf sends both; both are upserts).
    func isUpsert(of name: String, _ type: String) -> Bool {
        (event == "add" || event == "update") && self.name == name && self.type == type
    }
}

// MARK: - python-zeroconf responder

/// Registers one service with python-zeroconf on 127.0.0.1 (another mDNS responder than avahi-daemon, as
/// another host would be), until stopped.
final class ZeroconfResponder: @unchecked Sendable {
    private let process = Process()

    private static let script = """
        import signal, socket, sys
        from zeroconf import IPVersion, ServiceInfo, Zeroconf
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        done = []
        signal.signal(signal.SIGTERM, lambda *_: done.append(1))
        name, kind, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
        zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
        info = ServiceInfo(kind + ".local.", name + "." + kind + ".local.", port=port, server="zeroconf-peer.local.",
                           addresses=[socket.inet_aton("127.0.0.1")], properties={"peer": "zeroconf"})
        zc.register_service(info)
        print("registered", flush=True)
        while not done:
            signal.pause()
        zc.unregister_service(info)
        zc.close()
        """

    /// Returns once the service is registered (probed and announced).
    init(name: String, type: String, port: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, name, type, "\(port)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var text = Data()
        while !String(decoding: text, as: UTF8.self).contains("registered") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                throw ZeroconfObserver.ObserverFailed(
                    message: "the zeroconf responder exited: \(String(decoding: text, as: UTF8.self))")
            }
            text.append(chunk)
        }
    }

    deinit { stop() }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
