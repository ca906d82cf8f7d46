#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The synthetic sound: a 1 kHz sine on the left, 2 kHz on the right, at -12 dBFS, and a click
/// (48 samples at 0.9 on both channels) at the start of every second.
///
/// Each sample is a pure function of its absolute index `s` (see ``sample(at:channel:)``),
/// computed in `Double` from `s mod 48000`, so the phase never drifts however long it runs.
public struct ToneGenerator: Sendable {
    /// Sine amplitude, 10^(-12/20) (about 0.251).
    public static let amplitude = Float(pow(10.0, -12.0 / 20.0))
    /// Click length in samples at the start of each second.
    public static let clickLength = 48
    /// Click value on both channels.
    public static let clickLevel: Float = 0.9
    /// Sine frequencies in Hz: left, right.
    public static let frequencies: [Int] = [1_000, 2_000]

    /// Absolute index of the next sample frame ``render(frames:)`` produces.
    public private(set) var nextSampleIndex: UInt64

    /// Creates a generator whose first sample frame is `startIndex`.
    public init(startIndex: UInt64 = 0) {
        nextSampleIndex = startIndex
    }

    /// Creates a generator starting at sample frame 0.
    public init() {
        self.init(startIndex: 0)
    }

    /// The next `frames` sample frames, interleaved left/right.
    public mutating func render(frames: Int) -> [Float] {
        guard frames > 0 else { return [] }
        var samples = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let index = nextSampleIndex + UInt64(frame)
            samples[2 * frame] = Self.sample(at: index, channel: 0)
            samples[2 * frame + 1] = Self.sample(at: index, channel: 1)
        }
        nextSampleIndex += UInt64(frames)
        return samples
    }

    /// The exact value of sample frame `s` on `channel` (0 = left 1 kHz, 1 = right 2 kHz).
    public static func sample(at s: UInt64, channel: Int) -> Float {
        let withinSecond = s % UInt64(MediaContract.sampleRate)
        if withinSecond < UInt64(clickLength) { return clickLevel }
        let table = periods[channel == 0 ? 0 : 1]
        return table[Int(withinSecond % UInt64(table.count))]
    }

    /// The sine value at `withinSecond` samples into a second: the definition ``sample(at:channel:)`` follows.
    static func sine(frequency: Int, withinSecond: UInt64) -> Float {
        let rate = UInt64(MediaContract.sampleRate)
        let phase = Double((UInt64(frequency) * withinSecond) % rate) / Double(rate)
        return Float(Double(amplitude) * sin(2 * Double.pi * phase))
    }

    /// One period of each channel's sine, computed once: 1 kHz and 2 kHz repeat every 48 and 24 samples at
    /// 48 kHz, so a table gives the same values as ``sine(frequency:withinSecond:)`` without a `sin` per sample
    /// (which costs real CPU under emulation, where the hardware tests run).
    static let periods: [[Float]] = frequencies.map { frequency in
        var a = MediaContract.sampleRate, b = frequency
        while b != 0 { (a, b) = (b, a % b) }
        let period = MediaContract.sampleRate / a  // the rate over gcd(rate, frequency)
        return (0..<period).map { sine(frequency: frequency, withinSecond: UInt64($0)) }
    }
}
