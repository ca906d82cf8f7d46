import Foundation

/// One note of a chime: `frequency` Hz from `start` for `length` seconds (the notes of a sound never overlap).
public struct ChimeNote: Sendable, Hashable {
    /// The fundamental, Hz.
    public var frequency: Double
    /// When it starts, seconds from the start of the sound.
    public var start: Double
    /// How long it sounds, seconds (it has faded out by then).
    public var length: Double

    /// A note.
    public init(frequency: Double, start: Double, length: Double) {
        self.frequency = frequency
        self.start = start
        self.length = length
    }
}

/// The doorbell's built-in chime sounds (the settings' `installedChimeSounds`), synthesized: 48 kHz interleaved
/// stereo Float, each at most 3 s. The bells are sines with a quieter octave partial, a 5 ms attack and an
/// exponential decay; the buzzer is a band-limited square wave. Names are lower case (settings' choices are).
///
/// | name | notes (Hz) |
/// | --- | --- |
/// | `dingdong` | E5 659.25 (0.65 s), C5 523.25 (1.35 s) |
/// | `westminster` | E5 659.25, C5 523.25, D5 587.33 (0.5 s each), G4 392.00 (1.2 s): the first phrase of the Westminster quarters |
/// | `triple` | C5 523.25, E5 659.25 (0.3 s each), G5 783.99 (0.9 s): a rising major triad |
/// | `buzz` | two 0.4 s bursts of a 220 Hz (A3) square wave, 0.15 s apart |
public enum ChimeSound: String, CaseIterable, Sendable {
    /// Two tones, high then low.
    case dingDong = "dingdong"
    /// Four notes of the Westminster quarters.
    case westminster
    /// Three rising notes.
    case triple
    /// A buzzer, twice.
    case buzz

    /// Frames per second.
    public static let sampleRate = 48_000
    /// Interleaved channels (the same sound on both).
    public static let channels = 2
    /// The sound a doorbell plays until another is chosen.
    public static let standard = ChimeSound.dingDong

    /// The sound named so (a setting's value), or nil.
    public init?(named name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// A human label.
    public var label: String {
        switch self {
        case .dingDong: "Ding-dong"
        case .westminster: "Westminster"
        case .triple: "Triple"
        case .buzz: "Buzz"
        }
    }

    /// Its notes, in order.
    public var notes: [ChimeNote] {
        switch self {
        case .dingDong:
            [ChimeNote(frequency: 659.25, start: 0, length: 0.65), ChimeNote(frequency: 523.25, start: 0.65, length: 1.35)]
        case .westminster:
            [
                ChimeNote(frequency: 659.25, start: 0, length: 0.5), ChimeNote(frequency: 523.25, start: 0.5, length: 0.5),
                ChimeNote(frequency: 587.33, start: 1.0, length: 0.5), ChimeNote(frequency: 392.00, start: 1.5, length: 1.2),
            ]
        case .triple:
            [
                ChimeNote(frequency: 523.25, start: 0, length: 0.3), ChimeNote(frequency: 659.25, start: 0.3, length: 0.3),
                ChimeNote(frequency: 783.99, start: 0.6, length: 0.9),
            ]
        case .buzz:
            [ChimeNote(frequency: 220, start: 0, length: 0.4), ChimeNote(frequency: 220, start: 0.55, length: 0.4)]
        }
    }

    /// How long it lasts, seconds.
    public var duration: Double {
        notes.map { $0.start + $0.length }.max() ?? 0
    }

    /// The sound: `duration` seconds of 48 kHz interleaved stereo, peak below 0.65.
    public func samples() -> [Float] {
        let rate = Double(Self.sampleRate)
        let frames = Int((duration * rate).rounded(.up))
        var mono = [Float](repeating: 0, count: frames)
        for note in notes {
            let first = Int((note.start * rate).rounded())
            let count = min(Int((note.length * rate).rounded()), frames - first)
            let w = 2 * Double.pi * note.frequency / rate
            let attack = 0.005 * rate, release = 0.01 * rate
            for i in 0..<count {
                let t = Double(i)
                // A 5 ms rise, a 10 ms fall at the end, and (for the bells) a decay to a tenth over the note.
                var envelope = min(1, t / attack, Double(count - i) / release)
                let value: Double
                switch self {
                case .buzz:
                    // Odd harmonics up to the 9th: a square wave without aliasing; it crosses zero only once a half period.
                    value = 0.3 * stride(from: 1.0, through: 9.0, by: 2.0).reduce(0) { $0 + sin($1 * w * t) / $1 } * 4 / Double.pi
                default:
                    envelope *= exp(-2.3 * t / Double(count))
                    // A quarter-strength octave in phase: a bell's brightness, and still one zero crossing a half period.
                    value = 0.5 * sin(w * t) + 0.125 * sin(2 * w * t)
                }
                mono[first + i] = Float(value * envelope)
            }
        }
        var interleaved = [Float](repeating: 0, count: frames * Self.channels)
        for (i, sample) in mono.enumerated() {
            interleaved[2 * i] = sample
            interleaved[2 * i + 1] = sample
        }
        return interleaved
    }
}
