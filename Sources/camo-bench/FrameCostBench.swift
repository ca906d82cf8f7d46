import CamoMedia
import Foundation

/// The cost of one frame in the agent (issue #14): its CPU and peak RSS while one studio takes the synthetic
/// pattern in bgra and jpeg at 720p and 1080p on loopback, with the pattern's own cost (rendered in this process at the
/// same size) shown apart; beside another agent binary in the same run when one is given (the figures before a change).
enum FrameCostBench {
    struct Result {
        var rows: [StreamBench.Row]
        var before: [StreamBench.Row]
        /// The synthetic pattern's own share of a core at 30 fps, per size.
        var patternShare: [String: Double]

        var json: [String: Any] {
            ["rows": rows.map(\.json), "before": before.map(\.json), "patternCoreShareAt30fps": patternShare]
        }
    }

    static let sizes = ["1280x720", "1920x1080"]

    static func run(seconds: Int, beforeAgent: String?) throws -> Result {
        var pattern: [String: Double] = [:]
        for size in sizes {
            let parts = size.split(separator: "x").compactMap { Int($0) }
            let videoSize = VideoSize(width: parts[0], height: parts[1])
            var buffer: [UInt8] = []
            TestPattern.render(frameNumber: 1, size: videoSize, into: &buffer)
            var best = Double.infinity
            for round in 0..<5 {
                let start = H264Bench.cpuSeconds()
                for n in 0..<12 { TestPattern.render(frameNumber: UInt64(round * 12 + n), size: videoSize, into: &buffer) }
                best = min(best, (H264Bench.cpuSeconds() - start) / 12)
            }
            pattern[size] = best * 30
        }
        let rows = try StreamBench.run(seconds: seconds, codecs: ["bgra", "jpeg"], sizes: sizes)
        let before = try beforeAgent.map { try StreamBench.run(seconds: seconds, codecs: ["bgra", "jpeg"], sizes: sizes, agentPath: $0) } ?? []
        return Result(rows: rows, before: before, patternShare: pattern)
    }

    static func print(_ result: Result, seconds: Int, beforeAgent: String?) {
        Swift.print("The cost of one frame: the synthetic pattern to one studio on loopback, \(seconds) s each (CPU: 1 = one core):")
        for row in result.rows {
            let before = result.before.first { $0.codec == row.codec && $0.size == row.size }
            var line = String(format: "  %-9@ %-4@ agent %5.1f %% of a core, peak RSS %5.1f MB, %3d frames",
                              row.size as NSString, row.codec as NSString, row.agentCPUShare * 100, row.agentPeakRSSMB ?? .nan, row.frames)
            if let before {
                line += String(format: "  (before: %5.1f %%, %5.1f MB)", before.agentCPUShare * 100, before.agentPeakRSSMB ?? .nan)
            }
            Swift.print(line)
        }
        for size in sizes {
            Swift.print(String(format: "  of which the synthetic pattern at %@: %4.1f %% of a core (rendered here, 30 fps)",
                               size as NSString, (result.patternShare[size] ?? .nan) * 100))
        }
        if let beforeAgent { Swift.print("  before: \(beforeAgent)") }
    }
}
