import CamoCodec
import CamoMedia
import Foundation
import Logging

/// H.264 encoding beside `ffmpeg -c:v libx264` with the same settings on the same frames: the busy test pattern
/// (rows of noise that change every frame, so the encoder has to spend its bits), at 1280x720 and 1920x1080.
enum H264Bench {
    struct Row {
        var encoder: String
        var size: VideoSize
        var bitrate: Int
        var msPerFrame: Double
        var cpuMsPerFrame: Double
        var kbitPerFrame: Double
        var psnr: Double
        var ffmpegMsPerFrame: Double?
        var ffmpegCPUMsPerFrame: Double?
        var ffmpegKbitPerFrame: Double?
        var ffmpegPSNR: Double?

        var json: [String: Any] {
            var object: [String: Any] = [
                "encoder": encoder, "size": "\(size)", "bitrate": bitrate, "msPerFrame": msPerFrame, "cpuMsPerFrame": cpuMsPerFrame,
                "kbitPerFrame": kbitPerFrame, "psnr": psnr,
            ]
            if let ffmpegMsPerFrame, let ffmpegCPUMsPerFrame, let ffmpegKbitPerFrame, let ffmpegPSNR {
                object["ffmpegLibx264"] = [
                    "msPerFrame": ffmpegMsPerFrame, "cpuMsPerFrame": ffmpegCPUMsPerFrame, "kbitPerFrame": ffmpegKbitPerFrame,
                    "psnr": ffmpegPSNR,
                ]
                object["cpuOverFFmpeg"] = cpuMsPerFrame / max(ffmpegCPUMsPerFrame, 1e-9)
            }
            return object
        }
    }

    /// This process's user + system CPU seconds (all threads: x264 runs slice threads).
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func frames(_ count: Int, size: VideoSize) -> [VideoFrame] {
        (0..<count).map { index in
            // Skip the flash frames (every 30th): they are trivial to encode and say nothing about the encoder.
            let number = UInt64(index + index / 29 + 1)
            var buffer: [UInt8] = []
            TestPattern.render(frameNumber: number, size: size, into: &buffer)
            TestPattern.addDetail(frameNumber: number, size: size, into: &buffer)
            return VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: buffer, captureTime: UInt64(index))
        }
    }

    /// Mean PSNR of `stream` (access units) decoded, against `originals`.
    static func psnr(of stream: [[UInt8]], against originals: [VideoFrame]) throws -> Double {
        let decoder = try H264Decoder(logger: Logger(label: "bench"))
        var sum = 0.0
        var count = 0
        for (unit, original) in zip(stream, originals) {
            guard let picture = try decoder.decode(unit, captureTime: 0) else { continue }
            let value = PictureQuality.psnr(picture, original)
            sum += value.isFinite ? value : 99
            count += 1
        }
        return count == 0 ? 0 : sum / Double(count)
    }

    static func run(frames count: Int, ffmpeg: String?) throws -> [Row] {
        var rows: [Row] = []
        let kinds = H264Encoders.probe().filter { $0.available && !$0.kind.isHardware }.map(\.kind)
        for (size, bitrate) in [(VideoSize(width: 1280, height: 720), 4_000_000), (VideoSize(width: 1920, height: 1080), 8_000_000)] {
            let input = frames(count, size: size)
            for kind in kinds {
                let encoder = try H264Encoder(
                    settings: H264EncoderSettings(width: size.width, height: size.height, bitrate: bitrate, gopFrames: 60, kind: kind),
                    logger: Logger(label: "bench"))
                var units: [[UInt8]] = []
                let cpuStart = cpuSeconds()
                let start = seconds()
                for frame in input {
                    if let packet = try encoder.encode(frame, forceKeyframe: false) { units.append(packet.data) }
                }
                let wall = seconds() - start
                let cpu = cpuSeconds() - cpuStart
                let bits = Double(units.reduce(0) { $0 + $1.count }) * 8
                var row = Row(
                    encoder: kind.rawValue, size: size, bitrate: bitrate, msPerFrame: wall * 1000 / Double(count),
                    cpuMsPerFrame: cpu * 1000 / Double(count), kbitPerFrame: bits / 1000 / Double(count),
                    psnr: try psnr(of: units, against: input))
                if let ffmpeg {
                    // Both streams' PSNR by one judge: ffmpeg's psnr filter against the same frames in yuv420p.
                    let directory = NSTemporaryDirectory() + "camo-bench-\(UUID().uuidString.prefix(8))"
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    defer { try? FileManager.default.removeItem(atPath: directory) }
                    let raw = try writeRaw(input, in: directory)
                    let ours = directory + "/ours.h264"
                    _ = FileManager.default.createFile(atPath: ours, contents: Data(units.joined()))
                    row.psnr = try ffmpegPSNR(ffmpeg, raw: raw, stream: ours, size: size)
                    if kind == .x264 {
                        let reference = try runFFmpeg(ffmpeg, raw: raw, directory: directory, size: size, bitrate: bitrate)
                        row.ffmpegMsPerFrame = reference.wall * 1000 / Double(count)
                        row.ffmpegCPUMsPerFrame = reference.cpu * 1000 / Double(count)
                        row.ffmpegKbitPerFrame = Double(reference.bytes) * 8 / 1000 / Double(count)
                        row.ffmpegPSNR = try ffmpegPSNR(ffmpeg, raw: raw, stream: reference.path, size: size)
                    }
                }
                rows.append(row)
            }
        }
        return rows
    }

    /// The frames as one raw BGRA file in `directory`.
    static func writeRaw(_ frames: [VideoFrame], in directory: String) throws -> String {
        let raw = directory + "/in.bgra"
        _ = FileManager.default.createFile(atPath: raw, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: raw))
        for frame in frames { try handle.write(contentsOf: frame.data) }
        try handle.close()
        return raw
    }

    /// Runs ffmpeg; returns what it printed (stdout and stderr) and the wall seconds, or throws with its output.
    static func ffmpegRun(_ ffmpeg: String, _ arguments: [String]) throws -> (output: String, wall: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let start = seconds()
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("ffmpeg \(arguments.joined(separator: " ")) failed: \(output)") }
        return (output, seconds() - start)
    }

    /// Mean PSNR (ffmpeg's `average`, over Y, U and V) of `stream` against the raw frames, both as yuv420p.
    static func ffmpegPSNR(_ ffmpeg: String, raw: String, stream: String, size: VideoSize) throws -> Double {
        let run = try ffmpegRun(ffmpeg, [
            "-nostdin", "-hide_banner", "-f", "rawvideo", "-pix_fmt", "bgra", "-s", "\(size.width)x\(size.height)", "-r", "30", "-i", raw,
            "-f", "h264", "-i", stream, "-lavfi", "[0:v]format=yuv420p[ref];[1:v]format=yuv420p[dist];[dist][ref]psnr", "-f", "null", "-",
        ])
        guard let range = run.output.range(of: "average:") else { throw BenchError("no PSNR in ffmpeg's output: \(run.output.suffix(500))") }
        return Double(run.output[range.upperBound...].prefix { $0 != " " && $0 != "\n" }) ?? 0
    }

    /// `ffmpeg -c:v libx264` with the agent's settings (ultrafast, zerolatency, no B-frames, VBV of four frames,
    /// GOP 60, no scene cuts) on the same frames, read as raw BGRA; its user + system CPU time comes from
    /// `-benchmark`, its wall time from the clock around it.
    static func runFFmpeg(_ ffmpeg: String, raw: String, directory: String, size: VideoSize, bitrate: Int) throws
        -> (wall: Double, cpu: Double, bytes: Int, path: String)
    {
        let out = directory + "/ffmpeg.h264"
        let kbit = bitrate / 1000
        let run = try ffmpegRun(ffmpeg, [
            "-nostdin", "-hide_banner", "-benchmark", "-f", "rawvideo", "-pix_fmt", "bgra", "-s", "\(size.width)x\(size.height)",
            "-r", "30", "-i", raw, "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-bf", "0",
            "-b:v", "\(kbit)k", "-maxrate", "\(kbit)k", "-bufsize", "\(kbit * 4 / 30)k", "-g", "60", "-x264-params", "scenecut=0",
            "-pix_fmt", "yuv420p", "-f", "h264", "-y", out,
        ])
        let bytes = (try FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
        return (run.wall, benchmarkCPUSeconds(run.output), bytes, out)
    }

    /// User + system CPU seconds from ffmpeg's `-benchmark` line ("bench: utime=1.234s stime=0.123s rtime=...").
    static func benchmarkCPUSeconds(_ output: String) -> Double {
        func field(_ name: String) -> Double {
            guard let range = output.range(of: name + "=") else { return 0 }
            return Double(output[range.upperBound...].prefix { $0 != "s" && $0 != " " }) ?? 0
        }
        return field("utime") + field("stime")
    }

    static func print(_ rows: [Row], frames: Int) {
        Swift.print("H.264 encode, busy test pattern, \(frames) frames, GOP 60 (ms per frame wall / CPU, kbit per frame, PSNR):")
        for row in rows {
            Swift.print(String(
                format: "  %-9@ %-9@ %5.1f Mb/s  %6.2f / %6.2f ms  %6.1f kbit  %5.2f dB", row.encoder as NSString,
                "\(row.size)" as NSString, Double(row.bitrate) / 1e6, row.msPerFrame, row.cpuMsPerFrame, row.kbitPerFrame, row.psnr))
            if let ms = row.ffmpegMsPerFrame, let cpu = row.ffmpegCPUMsPerFrame, let kbit = row.ffmpegKbitPerFrame, let psnr = row.ffmpegPSNR {
                Swift.print(String(
                    format: "    ffmpeg -c:v libx264, same settings: %6.2f / %6.2f ms  %6.1f kbit  %5.2f dB  (ours / ffmpeg CPU %.2f; dB per kbit %.3f vs %.3f)",
                    ms, cpu, kbit, psnr, row.cpuMsPerFrame / max(cpu, 1e-9), row.psnr / max(row.kbitPerFrame, 1e-9), psnr / max(kbit, 1e-9)))
            }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
