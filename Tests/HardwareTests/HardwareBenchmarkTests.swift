import Foundation
import Testing

extension CameraHardware {
    /// A measurement, not a speed bound: the agent's CPU share while streaming 640x360 at 30 fps to a studio, beside
    /// ffmpeg doing the same capture, BGRA conversion and TCP send in the same VM.
    @Suite(
        "Benchmark: agent CPU beside ffmpeg (printed, not judged)", .serialized,
        .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
    struct Benchmark {
        @Test("CPU share of the agent and of ffmpeg for 640x360 YUYV at 30 fps to BGRA over TCP")
        func agentBesideFFmpeg() throws {
            let ffmpeg = try #require(
                ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) },
                "ffmpeg is not installed (apt-get install ffmpeg)")
            try Vivid.with(Hardware.webcam) {
                let scratch = try HardwareScratch("bench")
                let window = 8.0

                // The agent, with one studio taking BGRA.
                let agent = try HardwareAgent(scratch, arguments: ["--camera-format", "YUYV"])
                defer { agent.stop() }
                let studio = try HardwareStudio(scratch, port: agent.port, seconds: window + 5, codec: "bgra")
                try #require(agent.waitForLog("Studio connected"), "the studio did not connect:\n\(tail(agent.log))")
                Thread.sleep(forTimeInterval: 2)
                let agentCPU = try #require(measureCPU(pid: agent.pid, seconds: window), "the agent is gone:\n\(tail(agent.log))")
                let (summary, line) = try studio.summary()
                agent.stop()

                // ffmpeg: the same capture and conversion, sent to a TCP receiver that throws the bytes away.
                let sink = try DiscardingTCPSink()
                defer { sink.close() }
                let ffmpegLog = scratch.path + "/ffmpeg.log"
                _ = FileManager.default.createFile(atPath: ffmpegLog, contents: nil)
                let process = Process()
                process.executableURL = URL(fileURLWithPath: ffmpeg)
                process.arguments = [
                    "-nostdin", "-loglevel", "error", "-f", "v4l2", "-input_format", "yuyv422", "-video_size", "640x360",
                    "-framerate", "30", "-i", "/dev/video0", "-pix_fmt", "bgra", "-f", "rawvideo", "tcp://127.0.0.1:\(sink.port)",
                ]
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle(forWritingAtPath: ffmpegLog)
                try process.run()
                defer {
                    if process.isRunning {
                        kill(process.processIdentifier, SIGINT)
                        if !Hardware.wait(seconds: 10, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
                    }
                    process.waitUntilExit()
                }
                let ffmpegOutput = { (try? String(contentsOfFile: ffmpegLog, encoding: .utf8)) ?? "" }
                try #require(Hardware.wait(seconds: 30) { sink.bytes > 0 || !process.isRunning }, "ffmpeg sent nothing: \(ffmpegOutput())")
                Thread.sleep(forTimeInterval: 2)
                let before = sink.bytes
                let ffmpegCPU = try #require(measureCPU(pid: process.processIdentifier, seconds: window), "ffmpeg is gone: \(ffmpegOutput())")
                let ffmpegFPS = Double(sink.bytes - before) / Double(640 * 360 * 4) / ffmpegCPU.wallSeconds

                let ratio = ffmpegCPU.share > 0 ? agentCPU.share / ffmpegCPU.share : 0
                // When the studio cannot take 30 fps (it decrypts and hashes every frame on the same emulated CPUs),
                // the agent sends fewer frames (the summary's fps counts the frames that arrived): CPU per frame sent
                // compares the two better than the shares alone.
                let sentFPS = summary.fps
                let agentPerFrame = sentFPS > 0 ? agentCPU.share * 1000 / sentFPS : 0
                let ffmpegPerFrame = ffmpegFPS > 0 ? ffmpegCPU.share * 1000 / ffmpegFPS : 0
                print(String(
                    format: "BENCH agent_cpu=%.1f%% ffmpeg_cpu=%.1f%% ratio=%.2f agent_fps=%.2f ffmpeg_fps=%.2f agent_ms_per_frame=%.1f ffmpeg_ms_per_frame=%.1f (over %.1f s each, 640x360 YUYV to BGRA over TCP)",
                    agentCPU.share * 100, ffmpegCPU.share * 100, ratio, sentFPS, ffmpegFPS, agentPerFrame, ffmpegPerFrame, window))
                print("HW bench studio: \(line)")
                #expect(agentCPU.share > 0, "no CPU time measured for the agent")
                #expect(ffmpegCPU.share > 0, "no CPU time measured for ffmpeg")
                #expect(ffmpegFPS > 0, "ffmpeg delivered nothing: \(ffmpegOutput())")
            }
        }

        /// CPU share (1 = one CPU busy) of a process over `seconds` of wall time, from /proc/PID/stat.
        private func measureCPU(pid: Int32, seconds: Double) -> (share: Double, wallSeconds: Double)? {
            guard let start = cpuSeconds(pid: pid) else { return nil }
            let begin = Hardware.monotonicNow()
            Thread.sleep(forTimeInterval: seconds)
            guard let end = cpuSeconds(pid: pid) else { return nil }
            let wall = Double(Hardware.monotonicNow() - begin) / 1e9
            return ((end - start) / wall, wall)
        }
    }
}

/// A TCP listener on 127.0.0.1 that accepts one connection and reads it to the end, counting the bytes.
final class DiscardingTCPSink: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var count = 0
    private var closed = false

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HardwareError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            Glibc.close(fd)
            throw HardwareError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in receive() }
        thread.name = "discarding-sink"
        thread.start()
    }

    var bytes: Int { lock.withLock { count } }

    private func receive() {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { Glibc.close(connection) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            lock.withLock { count += n }
        }
    }

    func close() {
        let wasClosed = lock.withLock { () -> Bool in
            defer { closed = true }
            return closed
        }
        if !wasClosed {
            shutdown(listener, Int32(SHUT_RDWR))
            Glibc.close(listener)
        }
    }
}
