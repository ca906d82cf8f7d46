import Foundation
import Glibc
import Synchronization

/// The real machine: runs programs with `Process` and reads files with `FileManager`.
public struct SystemLoopbackHost: LoopbackHost {
    /// Where programs are looked for before `PATH` (`modprobe` lives in /usr/sbin, which a user's PATH often lacks).
    static let folders = ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/bin", "/bin"]

    /// The real machine.
    public init() {}

    public func run(_ arguments: [String]) -> CommandResult {
        guard let program = arguments.first else { return .missing("") }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = program.hasPrefix("/")
            ? [program]
            : (Self.folders + path.split(separator: ":").map(String.init)).map { $0 + "/" + program }
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return .missing(program)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return CommandResult(status: 127, errors: "\(program): \(error)", programMissing: true)
        }
        // Standard error is drained on another thread so that neither pipe can fill up and stall the program.
        let errorText = DrainedText()
        let drained = DispatchSemaphore(value: 0)
        let errorHandle = errors.fileHandleForReading
        DispatchQueue.global().async {
            errorText.set(errorHandle.readDataToEndOfFile())
            drained.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: errorText.text)
    }

    public func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    public func list(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    public func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    public var isRoot: Bool { geteuid() == 0 }
}

/// What a reading thread collected from a pipe.
private final class DrainedText: Sendable {
    private let data = Mutex(Data())

    func set(_ value: Data) { data.withLock { $0 = value } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
