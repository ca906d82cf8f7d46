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

    /// Runs `ffmpeg -v error -y <arguments>`: `inputs[k]` is written to the file named `INk` in the
    /// arguments (`IN` for the first), and the files named `OUTk` (`OUT`) are read back, in order.
    static func run(_ arguments: [String], inputs: [[UInt8]] = [], outputs: Int = 1) throws -> [[UInt8]] {
        let tool = try path()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camo-pixel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        for (index, input) in inputs.enumerated() {
            try Data(input).write(to: URL(fileURLWithPath: file("IN\(index)")))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-v", "error", "-nostdin", "-y"] + arguments.map { argument in
            switch argument {
            case "IN": return file("IN0")
            case "OUT": return file("OUT0")
            default: return argument.hasPrefix("IN") || argument.hasPrefix("OUT") ? file(argument) : argument
            }
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
        return try (0..<outputs).map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: file("OUT\($0)")))) }
    }

    /// Runs ffmpeg with one input and one output.
    static func run(_ arguments: [String], input: [UInt8]) throws -> [UInt8] {
        try run(arguments, inputs: [input])[0]
    }

    /// Runs ffmpeg with no input file and one output.
    static func run(_ arguments: [String]) throws -> [UInt8] {
        try run(arguments, inputs: [])[0]
    }

    /// One frame of ffmpeg's `testsrc2` pattern (colour bars, gradients, text) as raw bytes in each of
    /// `pixelFormats`, from one ffmpeg run.
    static func testPictures(width: Int, height: Int, pixelFormats: [String]) throws -> [String: [UInt8]] {
        var arguments = [
            "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=1", "-frames:v", "1",
            "-filter_complex", "[0:v]split=\(pixelFormats.count)" + pixelFormats.indices.map { "[o\($0)]" }.joined(),
        ]
        for (index, format) in pixelFormats.enumerated() {
            arguments += ["-map", "[o\(index)]", "-frames:v", "1", "-pix_fmt", format, "-f", "rawvideo", "OUT\(index)"]
        }
        let outputs = try run(arguments, outputs: pixelFormats.count)
        return Dictionary(uniqueKeysWithValues: zip(pixelFormats, outputs))
    }

    /// The swscale flags that make a pure Y'CbCr conversion exact: nearest-neighbour chroma (as libyuv
    /// upsamples), computed per output pixel, with accurate rounding. (For RGB inputs they are left out:
    /// on that path swscale expands RGB565 by shifting, 31 → 248, instead of its usual bit replication.)
    static let exactFlags = "accurate_rnd+full_chroma_int+bitexact+neighbor"

    /// ffmpeg's conversions to BGRA of raw frames (`bytes` in ffmpeg `pixelFormat`), reading Y'CbCr with
    /// `colorimetry`, from one ffmpeg run.
    static func referenceBGRA(
        _ frames: [(bytes: [UInt8], pixelFormat: String)], width: Int, height: Int, colorimetry: Colorimetry
    ) throws -> [[UInt8]] {
        let matrix: String
        switch colorimetry.matrix {
        case .bt601: matrix = "bt601"
        case .bt709: matrix = "bt709"
        case .bt2020: matrix = "bt2020"
        }
        let range = colorimetry.range == .full ? "pc" : "tv"
        var arguments: [String] = []
        for (index, frame) in frames.enumerated() {
            arguments += ["-f", "rawvideo", "-pix_fmt", frame.pixelFormat, "-s", "\(width)x\(height)", "-i", "IN\(index)"]
        }
        for (index, frame) in frames.enumerated() {
            arguments += ["-map", "\(index):v"]
            if isYUV(frame.pixelFormat) {
                arguments += ["-vf", "scale=in_color_matrix=\(matrix):in_range=\(range):flags=\(exactFlags)"]
            }
            arguments += ["-pix_fmt", "bgra", "-f", "rawvideo", "OUT\(index)"]
        }
        return try run(arguments, inputs: frames.map(\.bytes), outputs: frames.count)
    }

    static func isYUV(_ pixelFormat: String) -> Bool {
        pixelFormat.hasPrefix("yuv") || pixelFormat.hasPrefix("yuyv") || pixelFormat.hasPrefix("uyvy")
            || pixelFormat.hasPrefix("yvyu") || pixelFormat.hasPrefix("nv") || pixelFormat == "gray"
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

