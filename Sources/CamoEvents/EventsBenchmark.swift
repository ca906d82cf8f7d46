import CamoMedia
import Foundation

/// Workloads for camo-bench: each runs a detector over synthetic input and measures it with the caller's clock
/// (ns; no clock of its own, so the module stays free of time). Not run by the tests: a unit test never times code.
public enum EventsBenchmark {
    /// What one workload cost.
    public struct Result: Sendable, Hashable {
        /// The workload.
        public var name: String
        /// Frames (motion) or 10 ms audio frames (audio) processed.
        public var iterations: Int
        /// Wall time of the timed loop, ns.
        public var nanoseconds: UInt64
        /// The share of one core the workload takes in real time (30 fps video, or real-time 48 kHz audio).
        public var coreShare: Double

        /// Nanoseconds per iteration.
        public var nanosecondsPerIteration: Double { Double(nanoseconds) / Double(max(iterations, 1)) }
    }

    /// The motion detector (grid and comparison) on `frames` frames of `size`: the test pattern held still, with
    /// a block moving across it; 8 distinct frames are rendered before timing. The core share assumes 30 fps.
    public static func motion(size: VideoSize = .hd720, frames: Int = 300, clock: () -> UInt64) -> Result {
        let still = TestPattern.frame(number: 1, size: size, captureTime: 0)
        let pictures = (0..<8).map { i -> VideoFrame in
            // Drawn in a local array: VideoFrame.data has a didSet, so writing through the frame copies it.
            var data = still.data
            let blockWidth = size.width / 10, blockHeight = size.height / 10
            let left = (size.width / 8) * i
            for row in (size.height / 4)..<(size.height / 4 + blockHeight) {
                for column in left..<min(left + blockWidth, size.width) {
                    let offset = row * still.bytesPerRow + 4 * column
                    data[offset] = 0
                    data[offset + 1] = 0
                    data[offset + 2] = 0
                }
            }
            return VideoFrame(width: still.width, height: still.height, bytesPerRow: still.bytesPerRow, data: data, captureTime: 0)
        }
        var detector = MotionDetector()
        var motionFrames = 0
        let start = clock()
        for i in 0..<frames {
            let time = UInt64(i) * 33_333_333
            if detector.process(pictures[i % pictures.count], now: time).isMotion { motionFrames += 1 }
        }
        let elapsed = clock() - start
        precondition(motionFrames > 0, "the benchmark's moving block was never motion")
        return Result(
            name: "motion \(size) (64x36 grid)", iterations: frames, nanoseconds: elapsed,
            coreShare: Double(elapsed) / Double(frames) * 30 / 1e9)
    }

    /// The alarm-pattern detector on `seconds` of a T3 alarm at 3.1 kHz with noise, in 1024-frame stereo chunks.
    public static func alarm(seconds: Int = 20, clock: () -> UInt64) -> Result {
        let chunks = audio(seconds: seconds, alarm: true)
        var detector = AlarmPatternDetector()
        var detections = 0
        let start = clock()
        for chunk in chunks { detections += detector.process(chunk).count }
        let elapsed = clock() - start
        precondition(detections > 0, "the benchmark's alarm was not heard")
        return Result(
            name: "alarm pattern (48 kHz stereo)", iterations: detector.framesAnalyzed, nanoseconds: elapsed,
            coreShare: Double(elapsed) / (Double(seconds) * 1e9))
    }

    /// The sound-level detector on `seconds` of noise, in 1024-frame stereo chunks.
    public static func soundLevel(seconds: Int = 20, clock: () -> UInt64) -> Result {
        let chunks = audio(seconds: seconds, alarm: false)
        var detector = SoundLevelDetector()
        var windows = 0
        let start = clock()
        for chunk in chunks { windows += detector.process(chunk).count }
        let elapsed = clock() - start
        return Result(
            name: "sound level (48 kHz stereo)", iterations: windows * 10, nanoseconds: elapsed,
            coreShare: Double(elapsed) / (Double(seconds) * 1e9))
    }

    /// Noise (a 32-bit LCG, uniform ±0.05), with a T3 pattern at 3.1 kHz (amplitude 0.5) when `alarm`.
    static func audio(seconds: Int, alarm: Bool) -> [AudioChunk] {
        let total = seconds * 48_000
        var state: UInt32 = 12_345
        var chunks: [AudioChunk] = []
        var frame = 0
        while frame < total {
            let count = min(1_024, total - frame)
            var samples = [Float](repeating: 0, count: 2 * count)
            for i in 0..<count {
                state = state &* 1_664_525 &+ 1_013_904_223
                var value = (Float(state >> 8) / Float(1 << 24) - 0.5) * 0.1
                let t = Double(frame + i) / 48_000
                let phase = t.truncatingRemainder(dividingBy: 4)
                if alarm && phase < 2.5 && phase.truncatingRemainder(dividingBy: 1) < 0.5 {
                    value += Float(0.5 * sin(2 * Double.pi * 3_100 * t))
                }
                samples[2 * i] = value
                samples[2 * i + 1] = value
            }
            chunks.append(AudioChunk(samples: samples, firstSampleTime: UInt64(frame) * 1_000_000_000 / 48_000))
            frame += count
        }
        return chunks
    }
}
