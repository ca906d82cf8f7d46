import CamoCapture
import Foundation

/// Runs ffmpeg for the pixel-conversion tests: it makes the inputs (test pictures in each format, JPEGs)
/// and the reference BGRA. A missing ffmpeg is a test failure that says to install it, never a skip.
enum FFmpeg {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// ffmpeg's absolute path, or a failure naming the package to install.
    static func path() throws -> String {
        let search = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in search.split(separator: ":") {
            let candidate = "\(directory)/ffmpeg"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure(description: "ffmpeg not found on PATH: install ffmpeg (apt-get install ffmpeg); these tests need it as the reference")
    }

    /// Runs `ffmpeg -v error -y <arguments>` with `input` written to the file named `IN` in the arguments,
    /// and returns the bytes written to the file named `OUT`.
    static func run(_ arguments: [String], input: [UInt8]? = nil) throws -> [UInt8] {
        let tool = try path()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camo-pixel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inURL = directory.appendingPathComponent("in.bin")
        let outURL = directory.appendingPathComponent("out.bin")
        if let input { try Data(input).write(to: inURL) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-v", "error", "-nostdin", "-y"] + arguments.map {
            $0 == "IN" ? inURL.path : $0 == "OUT" ? outURL.path : $0
        }
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "ffmpeg \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(String(decoding: message, as: UTF8.self))")
        }
        return [UInt8](try Data(contentsOf: outURL))
    }

    /// One frame of ffmpeg's `testsrc2` pattern (colour bars, gradients, text) as raw `pixelFormat`.
    static func testPicture(width: Int, height: Int, pixelFormat: String) throws -> [UInt8] {
        try run([
            "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=1", "-frames:v", "1",
            "-pix_fmt", pixelFormat, "-f", "rawvideo", "OUT",
        ])
    }

    /// The swscale flags that make a pure format conversion exact: nearest-neighbour chroma (as libyuv
    /// upsamples), computed per output pixel, with accurate rounding.
    static let exactFlags = "accurate_rnd+full_chroma_int+bitexact+neighbor"

    /// ffmpeg's conversion of raw `pixelFormat` bytes to BGRA, reading Y'CbCr with `colorimetry`.
    static func referenceBGRA(
        _ raw: [UInt8], pixelFormat: String, width: Int, height: Int, colorimetry: Colorimetry
    ) throws -> [UInt8] {
        let matrix: String
        switch colorimetry.matrix {
        case .bt601: matrix = "bt601"
        case .bt709: matrix = "bt709"
        case .bt2020: matrix = "bt2020"
        }
        let range = colorimetry.range == .full ? "pc" : "tv"
        return try run([
            "-f", "rawvideo", "-pix_fmt", pixelFormat, "-s", "\(width)x\(height)", "-i", "IN",
            "-vf", "scale=in_color_matrix=\(matrix):in_range=\(range):flags=\(exactFlags)",
            "-pix_fmt", "bgra", "-f", "rawvideo", "OUT",
        ], input: raw)
    }
}

/// The largest per-channel difference of B, G, R between two BGRA images, and whether every alpha of
/// `ours` is 255.
struct BGRAComparison: CustomStringConvertible {
    var maxDifference = 0
    var worstPixel = 0
    var opaque = true
    var differing = 0

    init(ours: [UInt8], reference: [UInt8], tolerance: Int = 3) {
        precondition(ours.count == reference.count, "sizes differ: \(ours.count) vs \(reference.count)")
        for pixel in 0..<(ours.count / 4) {
            var pixelDifference = 0
            for channel in 0..<3 {
                pixelDifference = max(pixelDifference, abs(Int(ours[pixel * 4 + channel]) - Int(reference[pixel * 4 + channel])))
            }
            if pixelDifference > tolerance { differing += 1 }
            if pixelDifference > maxDifference {
                maxDifference = pixelDifference
                worstPixel = pixel
            }
            if ours[pixel * 4 + 3] != 255 { opaque = false }
        }
    }

    var description: String {
        "max difference \(maxDifference) at pixel \(worstPixel), \(differing) pixel(s) over tolerance, opaque: \(opaque)"
    }
}

/// A small deterministic generator (SplitMix64) for test data.
struct PixelTestRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
