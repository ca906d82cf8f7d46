import Foundation
import Testing

/// Helpers for the deployment tests: run a tool, find a tool, make a scratch folder.
enum Deployment {
    /// The package's root folder (this file is Tests/DeploymentTests/DeploymentSupport.swift).
    static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// `udev/<name>` in this package.
    static func udevFile(_ name: String) -> String { packageRoot + "/udev/" + name }

    struct Result {
        let status: Int32
        /// stdout and stderr together, in the order they were written.
        let output: String
    }

    /// Runs an executable (absolute path) and waits for it.
    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// The path of `name` on PATH or in the sbin folders. A missing tool fails the test (never a silent pass) with
    /// the Debian package to install.
    static func tool(_ name: String, package: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        let found = folders.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "\(name) not found: install the Debian package \(package) (apt-get install \(package))")
    }

    /// A fresh folder under the temporary directory; the caller removes it.
    static func scratch(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "camo-deploy-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes a small executable shell script (a stand-in for the camo-agent binary).
    static func writeStub(at path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("#!/bin/sh\necho camo-agent stub \"$@\"\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue, "no mode for \(path)")
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The lines of a unit file that start with `key=`.
    static func values(of key: String, in unitText: String) -> [String] {
        unitText.split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }
}
