import Foundation

/// Debian's curl and openssl, run as processes without blocking the test's thread.
enum Curl {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
        var rawHeaders: String
    }

    /// Runs `executable` and waits for it on this thread (for a test that holds Swift's pool on purpose): its exit
    /// status and standard output.
    static func runBlocking(_ executable: String, _ arguments: [String]) -> (exit: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(error)") }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Runs `executable` with `arguments`; returns its exit status and standard output.
    static func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory
        let outputURL = directory.appendingPathComponent("camo-web-out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try output.close()
        return (status, String(decoding: try Data(contentsOf: outputURL), as: UTF8.self))
    }

    /// One request with curl trusting `certificate` (the server's own, checked against localhost/127.0.0.1).
    static func request(
        _ method: String, _ url: String, certificate: URL?, headers: [String] = [], body: Data? = nil
    ) async throws -> Response {
        let directory = FileManager.default.temporaryDirectory
        let headerURL = directory.appendingPathComponent("camo-web-h-\(UUID().uuidString)")
        let bodyURL = directory.appendingPathComponent("camo-web-b-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: headerURL)
            try? FileManager.default.removeItem(at: bodyURL)
        }
        var arguments = ["-s", "--max-time", "30", "-X", method, "-D", headerURL.path, "-o", bodyURL.path, "-w", "%{http_code}"]
        if let certificate { arguments += ["--cacert", certificate.path] } else { arguments += ["-k"] }
        for header in headers { arguments += ["-H", header] }
        if let body {
            let dataURL = directory.appendingPathComponent("camo-web-d-\(UUID().uuidString)")
            try body.write(to: dataURL)
            arguments += ["--data-binary", "@" + dataURL.path]
        }
        arguments.append(url)
        let (exit, output) = try await run("/usr/bin/curl", arguments)
        let rawHeaders = (try? String(contentsOf: headerURL, encoding: .utf8)) ?? ""
        var parsed: [String: String] = [:]
        for line in rawHeaders.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            parsed[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = (try? String(contentsOf: bodyURL, encoding: .utf8)) ?? ""
        guard exit == 0, let status = Int(output) else {
            throw CurlFailure(description: "curl \(method) \(url) exited \(exit), printed \(output)")
        }
        return Response(status: status, headers: parsed, body: body, rawHeaders: rawHeaders)
    }

    struct CurlFailure: Error, CustomStringConvertible {
        var description: String
    }
}
