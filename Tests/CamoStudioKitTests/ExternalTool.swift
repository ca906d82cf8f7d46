import Foundation
import Testing

/// Finds and runs command-line tools that tests verify files with. A missing tool is a test
/// FAILURE naming what to install, never a silent skip: CI installs them.
enum ExternalTool {
    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// The absolute path of `name` on PATH, or records an issue and returns nil.
    static func find(_ name: String, package: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        Issue.record("\(name) not found on PATH: install it (apt-get install \(package))", sourceLocation: sourceLocation)
        return nil
    }

    /// Runs `tool` with `arguments`; returns stdout without surrounding whitespace; throws on a non-zero exit.
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
