import CamoCodec
import CamoLive
import CamoMedia
import Foundation
import Logging
import Synchronization

/// What the RTSP tests share: a logger, a live feed of encoded test pattern and tone, and ffmpeg runs.
enum RTSPFixture {
    static let logger = Logger(label: "camo.live.rtsp.tests")
    static let size = VideoSize(width: 640, height: 360)
    static let credentials = (username: "nvr", password: "s3cret-pass")

    /// A server on 127.0.0.1 on a port the system picks, with the fixture's credentials, started.
    static func startedServer(credentials: (username: String, password: String)? = credentials) throws -> RTSPLiveServer {
        let configuration = RTSPConfiguration(port: 0, bindAddress: "127.0.0.1", credentials: credentials)
        let server = try RTSPLiveServer(configuration: configuration, logger: logger)
        try server.start()
        return server
    }

    /// The server's URL with `username:password@` after the scheme.
    static func url(_ server: RTSPLiveServer, username: String = credentials.username, password: String = credentials.password) -> String {
        server.url.replacingOccurrences(of: "rtsp://", with: "rtsp://\(username):\(password)@")
    }
}

/// Feeds a server in real time: the test pattern at 640x360, 30 fps, encoded by x264 (a keyframe whenever the
/// server asks, and every 60 frames), and a 1 kHz tone in 10 ms chunks. Capture times follow the schedule, so the
/// stream's timestamps are exact even when the machine is busy.
final class RTSPFeeder: Sendable {
    private let keyframeWanted = Atomic(false)
    private let framesFed = Atomic(0)
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Video access units given to the server so far.
    var videoFramesFed: Int { framesFed.load(ordering: .relaxed) }

    private let keyframeRequests = Atomic(0)

    /// How many times the server asked for a keyframe.
    var keyframesRequested: Int { keyframeRequests.load(ordering: .relaxed) }

    /// Starts feeding `server` (and answers its keyframe requests); the encoder makes a keyframe every
    /// `gopFrames` frames besides.
    init(server: RTSPLiveServer, gopFrames: Int = 60) throws {
        let start = SystemMonotonicClock().now.nanoseconds
        let settings = H264EncoderSettings(width: RTSPFixture.size.width, height: RTSPFixture.size.height, bitrate: 1_500_000, gopFrames: gopFrames, kind: .x264)
        let encoder = try H264Encoder(settings: settings, logger: RTSPFixture.logger)
        server.onKeyframeNeeded = { [weak self] in
            self?.keyframeRequests.add(1, ordering: .relaxed)
            self?.keyframeWanted.store(true, ordering: .relaxed)
        }
        let video = Task { [encoder = SendableEncoder(encoder)] in
            let clock = SystemMonotonicClock()
            var number: UInt64 = 0
            while !Task.isCancelled {
                let due = start + number * 1_000_000_000 / 30
                do { try await clock.sleep(until: due) } catch { return }
                let frame = TestPattern.frame(number: number, size: RTSPFixture.size, captureTime: due)
                let force = self.keyframeWanted.exchange(false, ordering: .relaxed)
                if let packet = try? encoder.encoder.encode(frame, forceKeyframe: force) {
                    server.pushVideo(LiveAccessUnit(data: packet.data, isKeyframe: packet.isKeyframe, captureTime: due, size: RTSPFixture.size))
                    self.framesFed.add(1, ordering: .relaxed)
                }
                number += 1
            }
        }
        let audio = Task {
            let clock = SystemMonotonicClock()
            let frames = 480
            var chunk: UInt64 = 0
            while !Task.isCancelled {
                let due = start + chunk * 10_000_000
                do { try await clock.sleep(until: due) } catch { return }
                var samples = [Float](repeating: 0, count: frames * 2)
                for i in 0..<frames {
                    let t = Double(chunk * UInt64(frames) + UInt64(i)) / 48_000
                    let value = Float(0.25 * sin(2 * Double.pi * 1_000 * t))
                    samples[2 * i] = value
                    samples[2 * i + 1] = value
                }
                server.pushAudio(AudioChunk(samples: samples, firstSampleTime: due))
                chunk += 1
            }
        }
        tasks.withLock { $0 = [video, audio] }
    }

    /// Stops feeding (and waits until both loops ended).
    func stop() async {
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}

/// Hands the encoder to the one task that uses it.
private struct SendableEncoder: @unchecked Sendable {
    let encoder: H264Encoder
    init(_ encoder: H264Encoder) { self.encoder = encoder }
}

/// A finished (or killed) child process.
struct ProcessOutcome {
    var status: Int32
    var standardOutput: String
    var standardError: String
    /// Whether it ran past its time limit and was killed.
    var timedOut: Bool
}

enum ProcessRunner {
    /// Runs `executable` with `arguments`, killing it after `limit`; its output goes through files (no pipe can
    /// fill and stall it).
    static func run(_ executable: String, _ arguments: [String], limit: Duration) async throws -> ProcessOutcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camo-rtsp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = ContinuousClock.now + limit
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                timedOut = true
                process.terminate()
                try? await Task.sleep(for: .seconds(2))
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                break
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        return ProcessOutcome(
            status: process.terminationStatus,
            standardOutput: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "",
            timedOut: timedOut)
    }

    /// `ffprobe -show_streams` of `url` over RTSP with RTP over `transport` ("tcp" or "udp"): the codec names by codec type ("video": ["h264"], ...).
    static func probeStreams(_ url: String, transport: String = "tcp") async throws -> (streams: [String: [String]], outcome: ProcessOutcome) {
        let outcome = try await run("/usr/bin/ffprobe", ["-rtsp_transport", transport, "-v", "error", "-show_streams", url], limit: .seconds(20))
        var streams: [String: [String]] = [:]
        var name: String?
        for line in outcome.standardOutput.split(separator: "\n") {
            if line == "[STREAM]" { name = nil }
            if line.hasPrefix("codec_name=") { name = String(line.dropFirst("codec_name=".count)) }
            if line.hasPrefix("codec_type="), let name { streams[String(line.dropFirst("codec_type=".count)), default: []].append(name) }
        }
        return (streams, outcome)
    }

    /// Records `seconds` of `url` over RTSP/TCP into a Matroska file as it comes (no decoding).
    static func record(_ url: String, seconds: Int, to file: URL) async throws -> ProcessOutcome {
        try await run(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-y", "-v", "error", "-rtsp_transport", "tcp", "-i", url, "-t", "\(seconds)", "-c", "copy", "-f", "matroska", file.path],
            limit: .seconds(seconds + 30))
    }

    /// The number of video frames ffprobe decodes from `file`.
    static func countVideoFrames(_ file: URL) async throws -> Int? {
        let outcome = try await run(
            "/usr/bin/ffprobe",
            ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file.path],
            limit: .seconds(60))
        return Int(outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The codec names of `file`'s streams, in order.
    static func codecs(_ file: URL) async throws -> [String] {
        let outcome = try await run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", file.path], limit: .seconds(30))
        return outcome.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The test pattern's frame numbers read from each decoded video frame of `file` (nil where unreadable),
    /// decoded by ffmpeg to BGRA at 320x180.
    static func frameNumbers(_ file: URL) async throws -> [UInt64?] {
        let raw = file.deletingPathExtension().appendingPathExtension("bgra")
        defer { try? FileManager.default.removeItem(at: raw) }
        let outcome = try await run(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-y", "-v", "error", "-i", file.path, "-map", "0:v:0", "-fps_mode", "passthrough", "-s", "320x180", "-pix_fmt", "bgra", "-f", "rawvideo", raw.path],
            limit: .seconds(60))
        guard outcome.status == 0 else { return [] }
        let frameBytes = 320 * 180 * 4
        let handle = try FileHandle(forReadingFrom: raw)
        defer { try? handle.close() }
        var numbers: [UInt64?] = []
        while let data = try handle.read(upToCount: frameBytes), data.count == frameBytes {
            let frame = VideoFrame(width: 320, height: 180, bytesPerRow: 320 * 4, data: [UInt8](data), captureTime: 0)
            numbers.append(TestPattern.readFrameNumber(frame))
        }
        return numbers
    }
}

/// Polls `condition` every 50 ms until it holds or `limit` passes; returns whether it held.
func eventually(within limit: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

/// A temporary directory for one test's recordings.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camo-rtsp-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}
