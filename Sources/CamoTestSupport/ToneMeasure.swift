import Foundation

/// Measurements of tones in recorded or synthesized audio, for tests that check a sound is what it should be.
public enum ToneMeasure {
    /// The power of `frequency` in `samples` (Goertzel's algorithm, over the whole slice), normalized so that a sine
    /// of amplitude A at that frequency scores about A²/4, whatever the slice's length (other frequencies score near 0).
    public static func goertzel(_ samples: ArraySlice<Float>, frequency: Double, rate: Double) -> Double {
        let w = 2 * Double.pi * frequency / rate
        let coefficient = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        for x in samples {
            let s0 = Double(x) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        let n = Double(max(samples.count, 1))
        return power / (n * n)
    }

    /// The frequency of a tone from its rising zero crossings (interpolated between samples): the number of whole
    /// periods between the first and the last crossing over the time between them; nil with fewer than 3 crossings.
    public static func zeroCrossingFrequency(_ samples: ArraySlice<Float>, rate: Double) -> Double? {
        var first: Double?
        var last = 0.0
        var periods = -1
        var previous: Float?
        for (offset, x) in samples.enumerated() {
            if let p = previous, p < 0, x >= 0 {
                let crossing = Double(offset - 1) + Double(-p) / Double(x - p)
                if first == nil { first = crossing }
                last = crossing
                periods += 1
            }
            previous = x
        }
        guard let first, periods >= 2, last > first else { return nil }
        return Double(periods) * rate / (last - first)
    }

    /// One channel of interleaved audio.
    public static func channel(_ interleaved: [Float], _ index: Int, of channels: Int) -> [Float] {
        stride(from: index, to: interleaved.count, by: channels).map { interleaved[$0] }
    }
}
