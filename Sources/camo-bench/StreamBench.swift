import Foundation

/// The agent's CPU for a 1280x720 stream of the test pattern to one studio on loopback, in each codec, and the
/// capture→decoded latency the studio measured: camo-agent and camo-studio from this program's own folder (build
/// them first, release for figures worth comparing).
enum StreamBench {
    struct Row {
        var codec: String
        var size: String = "1280x720"
        var agentCPUShare: Double
        /// The agent's peak resident memory (VmHWM) at the end of the run, in MB.
        var agentPeakRSSMB: Double?
        var frames: Int
        var megabitsPerSecond: Double
        var receiveP50: Double?
        var decodedP50: Double?
        var decodedP99: Double?

        var json: [String: Any] {
            var object: [String: Any] = ["codec": codec, "size": size, "agentCPUShare": agentCPUShare, "frames": frames, "mbps": megabitsPerSecond]
            object["agentPeakRSSMB"] = agentPeakRSSMB
            object["captureToReceiveP50Ms"] = receiveP50
            object["captureToDecodedP50Ms"] = decodedP50
            object["captureToDecodedP99Ms"] = decodedP99
            return object
        }
    }

    /// CPU seconds of process `pid` (user + system), from /proc.
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The peak resident memory of process `pid` (VmHWM), in MB.
    static func peakRSSMB(pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    /// One studio per codec and size in turn, each against a fresh agent (`agentPath`, else the camo-agent beside this
    /// program: another build's agent gives the figures before a change in the same run).
    static func run(
        seconds duration: Int, codecs: [String] = ["bgra", "jpeg", "h264"], sizes: [String] = ["1280x720"], agentPath: String? = nil
    ) throws -> [Row] {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
        let agentPath = agentPath ?? folder + "/camo-agent"
        let studioPath = folder + "/camo-studio"
        guard FileManager.default.isExecutableFile(atPath: agentPath), FileManager.default.isExecutableFile(atPath: studioPath) else {
            throw BenchError("camo-agent and camo-studio must sit beside camo-bench in \(folder): build them (swift build -c release)")
        }
        var rows: [Row] = []
        for size in sizes {
        for codec in codecs {
            let directory = NSTemporaryDirectory() + "camo-bench-stream-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let agent = Process()
            agent.executableURL = URL(fileURLWithPath: agentPath)
            agent.arguments = [
                "run", "--camera", "test", "--microphone", "test", "--port", "0", "--allow-unpaired", "--no-mdns",
                "--state-dir", directory + "/state",
            ]
            let agentOut = Pipe()
            agent.standardOutput = agentOut
            agent.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try agent.run()
            defer {
                agent.terminate()
                agent.waitUntilExit()
            }
            // The first line is port=N.
            var line = Data()
            while let byte = try agentOut.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) {
                line.append(byte)
            }
            guard let port = Int(String(decoding: line, as: UTF8.self).replacingOccurrences(of: "port=", with: "")) else {
                throw BenchError("camo-agent did not say its port: \(String(decoding: line, as: UTF8.self))")
            }
            let studio = Process()
            studio.executableURL = URL(fileURLWithPath: studioPath)
            studio.arguments = [
                "record", "--connect", "127.0.0.1:\(port)", "--seconds", "\(duration)", "--size", size, "--codec", codec,
                "--no-video-file", "--out", directory + "/rec",
            ]
            let studioOut = Pipe()
            studio.standardOutput = studioOut
            studio.standardError = FileHandle(forWritingAtPath: "/dev/null")
            // A second of warm-up (the first studio sets the capture size), then the measured recording.
            Thread.sleep(forTimeInterval: 1)
            let before = cpuSeconds(pid: agent.processIdentifier) ?? 0
            let start = seconds()
            try studio.run()
            let output = studioOut.fileHandleForReading.readDataToEndOfFile()
            studio.waitUntilExit()
            let wall = seconds() - start
            let cpu = (cpuSeconds(pid: agent.processIdentifier) ?? before) - before
            let peak = peakRSSMB(pid: agent.processIdentifier)
            guard studio.terminationStatus == 0,
                let last = String(decoding: output, as: UTF8.self).split(separator: "\n").last,
                let summary = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
            else { throw BenchError("camo-studio record --codec \(codec) failed") }
            let transport = summary["transport"] as? [String: Any] ?? [:]
            let receive = transport["captureToReceiveMs"] as? [String: Any]
            let decoded = transport["captureToDecodedMs"] as? [String: Any]
            rows.append(Row(
                codec: codec, size: size, agentCPUShare: cpu / wall, agentPeakRSSMB: peak, frames: summary["frames"] as? Int ?? 0,
                megabitsPerSecond: (transport["meanBitrateKbps"] as? Double ?? 0) / 1000,
                receiveP50: receive?["p50"] as? Double, decodedP50: decoded?["p50"] as? Double, decodedP99: decoded?["p99"] as? Double))
        }
        }
        return rows
    }

    static func print(_ rows: [Row], seconds: Int) {
        Swift.print("1280x720 test pattern to one studio on loopback, \(seconds) s per codec (agent CPU, 1 = one core; latency ms):")
        for row in rows {
            func ms(_ value: Double?) -> String { value.map { String(format: "%6.1f", $0) } ?? "     -" }
            Swift.print(String(
                format: "  %-5@ agent %5.1f %% of a core, %3d frames, %7.1f Mb/s; capture→receive p50 %@, capture→decoded p50 %@ p99 %@",
                row.codec as NSString, row.agentCPUShare * 100, row.frames, row.megabitsPerSecond, ms(row.receiveP50) as NSString,
                ms(row.decodedP50) as NSString, ms(row.decodedP99) as NSString))
        }
    }
}
