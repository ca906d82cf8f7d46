import Foundation

/// Finds the dominant narrowband tone in 10 ms of 16 kHz mono audio: a Goertzel filter bank at 500, 550, ...,
/// 4000 Hz (71 filters) over the Hann-windowed frame.
///
/// A frame holds a tone when
/// - the strongest filter's tone is at least ``minimumLevelDBFS`` (-60 dBFS as a sine's RMS), and
/// - it carries at least ``minimumShare`` (40 %) of the frame's whole power (all frequencies: noise, rumble and
///   the other harmonics of a voice all count against it), and
/// - it stands at least ``minimumContrast`` (20 dB) above the mean of the filters more than 250 Hz away (the
///   Hann window's main lobe is ±200 Hz at 10 ms).
///
/// A pure tone scores a share of about 0.9 to 1 (less between filters) and a contrast beyond 40 dB; white noise a
/// share of a few % and a contrast under 10 dB.
struct ToneBank: Sendable {
    /// Samples per frame: 10 ms at 16 kHz.
    static let frameLength = 160
    static let sampleRate: Float = 16_000
    static let lowestFrequency: Float = 500
    static let frequencyStep: Float = 50
    static let filterCount = 71
    static let minimumLevelDBFS: Float = -60
    static let minimumShare: Float = 0.4
    static let minimumContrast: Float = 100  // 20 dB, as a power ratio
    /// Filters on either side of the peak left out of the contrast's reference (250 Hz).
    static let mainLobeFilters = 5

    /// What one frame holds.
    struct Result: Sendable, Hashable {
        /// Whether a tone dominates.
        var isTone: Bool
        /// The strongest filter, 0...70.
        var filter: Int
        /// The tone's level, dBFS of a sine's RMS.
        var levelDBFS: Float
        /// The tone's share of the frame's power.
        var share: Float
        /// Peak power over the mean of the filters away from it.
        var contrast: Float

        var frequency: Float { ToneBank.lowestFrequency + Float(filter) * ToneBank.frequencyStep }
    }

    private let window: [Float]
    private let coefficients: [Float]
    /// Sum of the window: a sine of amplitude A gives a Goertzel magnitude of A × windowSum / 2.
    private let windowSum: Float

    init() {
        let n = Self.frameLength
        var window = [Float](repeating: 0, count: n)
        for i in 0..<n {
            window[i] = 0.5 - 0.5 * Float(cos(2 * Double.pi * (Double(i) + 0.5) / Double(n)))
        }
        self.window = window
        windowSum = window.reduce(0, +)
        coefficients = (0..<Self.filterCount).map { k in
            let frequency = Double(Self.lowestFrequency + Float(k) * Self.frequencyStep)
            return Float(2 * cos(2 * Double.pi * frequency / Double(Self.sampleRate)))
        }
    }

    /// Analyzes one frame of ``frameLength`` samples.
    func analyze(_ samples: UnsafeBufferPointer<Float>) -> Result {
        let n = Self.frameLength
        precondition(samples.count >= n, "ToneBank: \(samples.count) samples, \(n) needed")
        var windowed = [Float](repeating: 0, count: n)
        var energy: Float = 0
        for i in 0..<n {
            windowed[i] = samples[i] * window[i]
            energy += samples[i] * samples[i]
        }
        let meanSquare = energy / Float(n)
        var powers = [Float](repeating: 0, count: Self.filterCount)
        windowed.withUnsafeBufferPointer { x in
            for k in 0..<Self.filterCount {
                let c = coefficients[k]
                var s1: Float = 0, s2: Float = 0
                for i in 0..<n {
                    let s = x[i] + c * s1 - s2
                    s2 = s1
                    s1 = s
                }
                powers[k] = max(s1 * s1 + s2 * s2 - c * s1 * s2, 0)
            }
        }
        var peak = 0
        for k in 1..<Self.filterCount where powers[k] > powers[peak] { peak = k }
        // Amplitude of the sine that would give this peak, then its mean square.
        let amplitude = 2 * powers[peak].squareRoot() / windowSum
        let toneMeanSquare = amplitude * amplitude / 2
        let levelDBFS = toneMeanSquare > 0 ? 10 * Float(log10(Double(toneMeanSquare))) : -120
        let share = meanSquare > 0 ? min(toneMeanSquare / meanSquare, 1) : 0
        var rest: Float = 0
        var restCount = 0
        for k in 0..<Self.filterCount where abs(k - peak) > Self.mainLobeFilters {
            rest += powers[k]
            restCount += 1
        }
        let restMean = restCount > 0 ? rest / Float(restCount) : 0
        let contrast = restMean > 0 ? powers[peak] / restMean : (powers[peak] > 0 ? .infinity : 0)
        let isTone = levelDBFS >= Self.minimumLevelDBFS && share >= Self.minimumShare && contrast >= Self.minimumContrast
        return Result(isTone: isTone, filter: peak, levelDBFS: levelDBFS, share: share, contrast: contrast)
    }
}
