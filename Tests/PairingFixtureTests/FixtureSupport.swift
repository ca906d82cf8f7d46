import CamoMedia
import CamoQR
import Foundation
import Testing

/// pairing-fixtures/manifest.json.
struct Manifest: Decodable, Sendable {
    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var payload: String
        var expect: String
        var png: String?
        var note: String
        var testDescription: String { name }
    }

    var format: Int
    var now: UInt64
    var cases: [Case]
}

struct FixtureError: Error, Sendable, CustomStringConvertible {
    var description: String
}

/// The fixture directory and its manifest. With `CAMO_REGENERATE_FIXTURES=1` in the environment, loading
/// first rewrites every PNG the manifest names from its payload (once per test run).
enum Fixtures {
    /// The repository root: this file is Tests/PairingFixtureTests/FixtureSupport.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let directory = root.appendingPathComponent("pairing-fixtures")
    static let regenerating = ProcessInfo.processInfo.environment["CAMO_REGENERATE_FIXTURES"] == "1"

    private static let loaded: Result<Manifest, FixtureError> = {
        let url = directory.appendingPathComponent("manifest.json")
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url))
        } catch {
            return .failure(FixtureError(description: "cannot read \(url.path): \(error)"))
        }
        if regenerating {
            for item in manifest.cases {
                guard let png = item.png else { continue }
                do {
                    let bytes = try QRCode(item.payload).pngData()
                    try Data(bytes).write(to: directory.appendingPathComponent(png), options: .atomic)
                } catch {
                    return .failure(FixtureError(description: "cannot write \(png): \(error)"))
                }
            }
        }
        return .success(manifest)
    }()

    static func manifest() throws -> Manifest { try loaded.get() }

    /// The cases that name a PNG, with the file's bytes.
    static func pngCases() throws -> [(item: Manifest.Case, bytes: [UInt8])] {
        try manifest().cases.compactMap { item in
            guard let png = item.png else { return nil }
            return (item, try [UInt8](Data(contentsOf: directory.appendingPathComponent(png))))
        }
    }
}

/// Pictures for the scanner.
enum Canvas {
    /// A `width` x `height` BGRA picture of one gray level with `picture` drawn at (`left`, `top`).
    static func frame(width: Int, height: Int, gray: UInt8, drawing picture: PNGImage, left: Int, top: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: gray, count: width * height * 4)
        for index in Swift.stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
        for y in 0..<picture.height where (0..<height).contains(top + y) {
            for x in 0..<picture.width where (0..<width).contains(left + x) {
                let from = (y * picture.width + x) * 4
                let to = ((top + y) * width + left + x) * 4
                for channel in 0..<4 { pixels[to + channel] = picture.bgra[from + channel] }
            }
        }
        return pixels
    }
}

/// Runs programs for the tests.
enum Tool {
    /// The path of `name` on `PATH` (and the usual system directories), or nil.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/local/bin"]
        for directory in directories {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a program to its end; its standard output and exit status.
    static func run(_ executable: String, _ arguments: [String]) throws -> (output: Data, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (output, process.terminationStatus)
    }
}
