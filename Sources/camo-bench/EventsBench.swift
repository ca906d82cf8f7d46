import CamoEvents
import CamoMedia
import Foundation

/// The event detectors' cost (motion per frame at 720p and 1080p, the audio detectors per second of audio), beside
/// the YUYV BT.601 → BGRA conversion every captured frame already pays at the same size (ours, the same run). The
/// detectors are ``EventsBenchmark``'s workloads, timed on this host's monotonic clock.
enum EventsBench {
    struct Result {
        var motion: [(result: EventsBenchmark.Result, conversionMs: Double)]
        var audio: [EventsBenchmark.Result]

        var json: [String: Any] {
            [
                "motion": motion.map { row in
                    [
                        "name": row.result.name, "msPerFrame": row.result.nanosecondsPerIteration / 1e6,
                        "coreShareAt30fps": row.result.coreShare, "yuyvConversionMsPerFrame": row.conversionMs,
                        "motionOverConversion": row.result.nanosecondsPerIteration / 1e6 / row.conversionMs,
                    ] as [String: Any]
                },
                "audio": audio.map { row in
                    ["name": row.name, "msPerSecondOfAudio": row.coreShare * 1_000, "coreShare": row.coreShare] as [String: Any]
                },
            ]
        }
    }

    static func run(frames: Int, audioSeconds: Int) throws -> Result {
        let clock = { DispatchTime.now().uptimeNanoseconds }
        var motion: [(EventsBenchmark.Result, Double)] = []
        for size in ConversionBench.sizes {
            let bgra = TestPattern.frame(number: 42, size: size, captureTime: 0).data
            let conversion = try ConversionBench.yuyv(size: size, bgra: bgra, frames: frames, colorimetry: .bt601Limited)
            // Twice: the first run warms the caches and the allocator; the second is reported.
            _ = EventsBenchmark.motion(size: size, frames: min(frames, 30), clock: clock)
            motion.append((EventsBenchmark.motion(size: size, frames: frames, clock: clock), conversion.oursMs))
        }
        let audio = [
            EventsBenchmark.alarm(seconds: audioSeconds, clock: clock),
            EventsBenchmark.soundLevel(seconds: audioSeconds, clock: clock),
        ]
        return Result(motion: motion, audio: audio)
    }

    static func print(_ result: Result, frames: Int, audioSeconds: Int) {
        Swift.print("Event detectors (one thread; motion over \(frames) frames of the test pattern with a moving block, audio over \(audioSeconds) s of noise with a T3 alarm):")
        Swift.print("  motion               size        ms/frame  core share at 30 fps  YUYV→BGRA ms/frame  motion/conversion")
        for row in result.motion {
            let size = ConversionBench.sizes.first { row.result.name.contains($0.description) }?.description ?? ""
            Swift.print(
                "  grid 64x36 + compare " + size.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + String(format: "  %8.3f  %19.2f%%  %18.3f  %16.2fx", row.result.nanosecondsPerIteration / 1e6, row.result.coreShare * 100,
                             row.conversionMs, row.result.nanosecondsPerIteration / 1e6 / row.conversionMs))
        }
        Swift.print("  target: motion under 2 % of a core at 30 fps")
        Swift.print("  audio                              ms per second of audio  core share")
        for row in result.audio {
            Swift.print("  " + row.name.padding(toLength: 33, withPad: " ", startingAt: 0) + String(format: "  %22.3f  %9.3f%%", row.coreShare * 1_000, row.coreShare * 100))
        }
    }
}
