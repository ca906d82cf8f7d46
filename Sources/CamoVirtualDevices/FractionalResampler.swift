/// A queue of interleaved stereo samples read out at a fractional step: Catmull-Rom (cubic Hermite) interpolation
/// between the four nearest input frames. Steps near 1 (a few hundred ppm off) are what it is for: the drift
/// between two sample clocks, not a change of rate, so no low-pass filter is needed. It also keeps the capture time
/// of the frame at its read position. A plain value.
public struct FractionalResampler: Sendable {
    /// Channels per frame.
    public static let channels = 2
    /// Input frames per second (for the capture times).
    public let sampleRate: Int

    private var samples: [Float] = []
    /// Read position in frames from the start of `samples`; at least 1 once reading began (one frame of history).
    private var position: Double = 1
    /// Capture time of `samples`' first frame (agent monotonic ns).
    private var startTime: UInt64 = 0

    /// An empty queue.
    public init(sampleRate: Int = 48_000) {
        self.sampleRate = sampleRate
    }

    /// Input frames not yet read (fractional).
    public var queuedFrames: Double { max(0, Double(samples.count / Self.channels) - position) }

    /// The capture time of the frame at the read position, when there is input.
    public var readTime: UInt64? {
        guard !samples.isEmpty else { return nil }
        return startTime &+ UInt64(max(0, position) * 1e9 / Double(sampleRate))
    }

    /// Appends interleaved stereo samples whose first frame was captured at `firstSampleTime`. When the queue is
    /// empty the new samples start it (with one frame of silence as history).
    public mutating func append(_ interleaved: [Float], firstSampleTime: UInt64) {
        if samples.isEmpty {
            samples = [0, 0]
            position = 1
            startTime = firstSampleTime &- UInt64(1e9 / Double(sampleRate))
        }
        samples.append(contentsOf: interleaved)
    }

    /// Reads up to `frames` output frames at `step` input frames per output frame into `output` (appended,
    /// interleaved), and returns how many were produced: fewer when the input runs out (an interpolation needs
    /// two input frames past the read position).
    @discardableResult
    public mutating func read(frames: Int, step: Double, into output: inout [Float]) -> Int {
        let inputFrames = samples.count / Self.channels
        var produced = 0
        samples.withUnsafeBufferPointer { s in
            while produced < frames {
                let index = Int(position)
                guard index + 2 < inputFrames else { break }
                let t = Float(position - Double(index))
                for channel in 0..<Self.channels {
                    let p0 = s[(index - 1) * 2 + channel], p1 = s[index * 2 + channel]
                    let p2 = s[(index + 1) * 2 + channel], p3 = s[(index + 2) * 2 + channel]
                    // Catmull-Rom: passes through p1 at t = 0 and p2 at t = 1.
                    let a = -0.5 * p0 + 1.5 * p1 - 1.5 * p2 + 0.5 * p3
                    let b = p0 - 2.5 * p1 + 2 * p2 - 0.5 * p3
                    let c = -0.5 * p0 + 0.5 * p2
                    output.append(((a * t + b) * t + c) * t + p1)
                }
                position += step
                produced += 1
            }
        }
        compact()
        return produced
    }

    /// Drops `frames` input frames at the read position (a buffer grown too long is cut back in one step).
    public mutating func skip(frames: Double) {
        position += max(0, min(frames, queuedFrames))
        compact()
    }

    /// Empties the queue.
    public mutating func removeAll() {
        samples.removeAll(keepingCapacity: true)
        position = 1
    }

    /// Drops what lies before the read position's history frame once that is a good part of the storage.
    private mutating func compact() {
        let drop = Int(position) - 1
        guard drop > 0, drop * Self.channels >= 4_096 || drop * Self.channels * 2 >= samples.count else { return }
        let remove = min(drop, samples.count / Self.channels)
        samples.removeFirst(remove * Self.channels)
        position -= Double(remove)
        startTime &+= UInt64(Double(remove) * 1e9 / Double(sampleRate))
    }
}
