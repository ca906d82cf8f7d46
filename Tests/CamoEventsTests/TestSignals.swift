import CamoMedia
import CamoTestSupport
import Foundation

/// Synthetic microphone signals (mono at 48 kHz) and their delivery as stereo chunks.
struct TestSignals {
    static let rate = 48_000.0
    var generator: SeededGenerator

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    /// Uniform in 0..<1.
    mutating func uniform() -> Double {
        Double(generator.next() >> 11) / Double(1 << 53)
    }

    /// Standard normal (Box-Muller).
    mutating func gaussian() -> Double {
        let u = max(uniform(), 1e-12), v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    /// A gate: on/off intervals (s) repeated from `offset` for `seconds`; true where a tone sounds.
    static func gate(on: [Double], off: [Double], seconds: Double, offset: Double = 0) -> [Bool] {
        let count = Int(seconds * rate)
        var gate = [Bool](repeating: false, count: count)
        var t = offset
        while t < seconds {
            for (onTime, offTime) in zip(on, off) {
                let start = Int(t * rate), end = min(Int((t + onTime) * rate), count)
                if start < end { for i in start..<end { gate[i] = true } }
                t += onTime + offTime
            }
        }
        return gate
    }

    /// A sine of `frequency` Hz and `amplitude` where `gate` is true, with 2 ms ramps at each edge (as a sounder's
    /// piezo rings up and down).
    mutating func tone(frequency: Double, amplitude: Double, gate: [Bool]) -> [Float] {
        var samples = [Float](repeating: 0, count: gate.count)
        let ramp = 0.002 * Self.rate
        var envelope = 0.0
        let phase = uniform() * 2 * Double.pi
        for i in gate.indices {
            envelope = gate[i] ? min(envelope + 1 / ramp, 1) : max(envelope - 1 / ramp, 0)
            if envelope > 0 {
                samples[i] = Float(amplitude * envelope * sin(2 * Double.pi * frequency * Double(i) / Self.rate + phase))
            }
        }
        return samples
    }

    /// White gaussian noise with this RMS added to `samples`.
    mutating func addNoise(_ samples: inout [Float], rms: Double) {
        for i in samples.indices { samples[i] += Float(rms * gaussian()) }
    }

    /// An alarm pattern at `frequency`: amplitude 0.5 (RMS 0.35, -9 dBFS) with white noise 20 dB below it, starting
    /// `offset` s in.
    mutating func alarm(t3: Bool, frequency: Double, seconds: Double, offset: Double = 0.237, noiseDB: Double = -20) -> [Float] {
        let gate = t3
            ? Self.gate(on: [0.5, 0.5, 0.5], off: [0.5, 0.5, 1.5], seconds: seconds, offset: offset)
            : Self.gate(on: [0.1, 0.1, 0.1, 0.1], off: [0.1, 0.1, 0.1, 5], seconds: seconds, offset: offset)
        var samples = tone(frequency: frequency, amplitude: 0.5, gate: gate)
        addNoise(&samples, rms: 0.5 / 2.0.squareRoot() * pow(10, noiseDB / 20))
        return samples
    }

    /// Speech-like: a voiced source (harmonics of a pitch gliding between 90 and 260 Hz, the strongest near a
    /// formant that also moves), in syllables of 80...350 ms separated by 30...400 ms, with a little noise.
    mutating func speech(seconds: Double) -> [Float] {
        let count = Int(seconds * Self.rate)
        var samples = [Float](repeating: 0, count: count)
        var i = 0
        var phases = [Double](repeating: 0, count: 30)
        while i < count {
            let syllable = Int((0.08 + 0.27 * uniform()) * Self.rate)
            let startPitch = 90 + 170 * uniform(), endPitch = 90 + 170 * uniform()
            let formant1 = 300 + 700 * uniform(), formant2 = 900 + 1600 * uniform()
            let loudness = 0.1 + 0.3 * uniform()
            for j in 0..<syllable where i + j < count {
                let progress = Double(j) / Double(syllable)
                let pitch = startPitch + (endPitch - startPitch) * progress
                let envelope = sin(Double.pi * progress)
                var value = 0.0
                for h in 1..<30 {
                    let frequency = pitch * Double(h)
                    if frequency > 5000 { break }
                    phases[h] += 2 * Double.pi * frequency / Self.rate
                    let weight = exp(-pow((frequency - formant1) / 150, 2)) + 0.5 * exp(-pow((frequency - formant2) / 200, 2)) + 0.05
                    value += weight * sin(phases[h]) / Double(h).squareRoot()
                }
                samples[i + j] = Float(loudness * envelope * value)
            }
            i += syllable + Int((0.03 + 0.37 * uniform()) * Self.rate)
        }
        addNoise(&samples, rms: 0.003)
        return samples
    }

    /// Music-like: a melody of pure-ish notes (fundamental and a weak octave) from a scale spanning 523...3136 Hz,
    /// each lasting 0.2...0.8 s, back to back (`rests` false) or separated by 0...0.6 s rests.
    mutating func music(seconds: Double, rests: Bool) -> [Float] {
        let scale = [523.25, 587.33, 659.25, 698.46, 783.99, 880.0, 987.77, 1046.5, 1318.5, 1568.0, 2093.0, 2637.0, 3136.0]
        let count = Int(seconds * Self.rate)
        var samples = [Float](repeating: 0, count: count)
        var i = 0
        while i < count {
            let note = scale[Int(uniform() * Double(scale.count)) % scale.count]
            let length = Int((0.2 + 0.6 * uniform()) * Self.rate)
            let phase = uniform() * 2 * Double.pi
            for j in 0..<length where i + j < count {
                let t = Double(j) / Self.rate
                let envelope = min(1, t / 0.01) * min(1, Double(length - j) / (0.01 * Self.rate))
                samples[i + j] = Float(0.3 * envelope * (sin(2 * Double.pi * note * t + phase) + 0.2 * sin(4 * Double.pi * note * t)))
            }
            i += length + (rests ? Int(0.6 * uniform() * Self.rate) : 0)
        }
        addNoise(&samples, rms: 0.003)
        return samples
    }

    /// The mono samples as stereo chunks of `chunkFrames` frames, the first at `start` ns.
    static func chunks(_ mono: [Float], chunkFrames: Int = 1024, start: UInt64 = 2_000_000_000_000) -> [AudioChunk] {
        var chunks: [AudioChunk] = []
        var i = 0
        while i < mono.count {
            let end = min(i + chunkFrames, mono.count)
            var stereo = [Float](repeating: 0, count: 2 * (end - i))
            for j in i..<end {
                stereo[2 * (j - i)] = mono[j]
                stereo[2 * (j - i) + 1] = mono[j]
            }
            chunks.append(AudioChunk(samples: stereo, firstSampleTime: start + UInt64(i) * 1_000_000_000 / 48_000))
            i = end
        }
        return chunks
    }
}
