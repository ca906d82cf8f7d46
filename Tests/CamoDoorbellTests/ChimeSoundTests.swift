import CamoDoorbell
import CamoTestSupport
import Testing

/// The built-in sounds, measured: each note's frequency by zero crossings and by a Goertzel filter against the
/// sound's other notes.
@Suite("Chime sounds: names, lengths and the notes' frequencies")
struct ChimeSoundTests {
    static let rate = Double(ChimeSound.sampleRate)

    @Test("Four sounds with lower-case names, each at most 3 s of 48 kHz interleaved stereo, both channels the same")
    func shapes() {
        #expect(ChimeSound.allCases.map(\.rawValue) == ["dingdong", "westminster", "triple", "buzz"])
        #expect(ChimeSound.standard == .dingDong)
        #expect(ChimeSound(named: "Westminster") == .westminster)
        #expect(ChimeSound(named: "bell") == nil)
        for sound in ChimeSound.allCases {
            let samples = sound.samples()
            #expect(sound.duration <= 3, "\(sound)")
            #expect(samples.count == Int((sound.duration * Self.rate).rounded(.up)) * 2, "\(sound)")
            #expect(samples.count % 2 == 0)
            let left = ToneMeasure.channel(samples, 0, of: 2), right = ToneMeasure.channel(samples, 1, of: 2)
            #expect(left == right, "\(sound): the channels differ")
            let peak = samples.map { abs($0) }.max() ?? 0
            #expect(peak > 0.25 && peak < 0.7, "\(sound): peak \(peak)")
            #expect(abs(left.last ?? 1) < 0.01, "\(sound): it must end faded out")
            // The notes follow each other without overlapping.
            for (a, b) in zip(sound.notes, sound.notes.dropFirst()) { #expect(a.start + a.length <= b.start + 1e-9, "\(sound)") }
        }
    }

    @Test("Each note sounds at its frequency: zero crossings within 0.5 %, and its Goertzel power far above the other notes'",
          arguments: ChimeSound.allCases)
    func noteFrequencies(sound: ChimeSound) throws {
        let left = ToneMeasure.channel(sound.samples(), 0, of: 2)
        for note in sound.notes {
            // The middle of the note: past its attack, before its end.
            let from = Int((note.start + 0.02) * Self.rate), to = Int((note.start + note.length * 0.7) * Self.rate)
            let window = left[from..<to]
            let measured = try #require(ToneMeasure.zeroCrossingFrequency(window, rate: Self.rate), "\(sound) \(note)")
            #expect(abs(measured - note.frequency) / note.frequency < 0.005, "\(sound): note \(note.frequency) Hz measured \(measured) Hz")
            let own = ToneMeasure.goertzel(window, frequency: note.frequency, rate: Self.rate)
            for other in Set(sound.notes.map(\.frequency)) where other != note.frequency {
                let theirs = ToneMeasure.goertzel(window, frequency: other, rate: Self.rate)
                #expect(own > 100 * theirs, "\(sound): at \(note.frequency) Hz the note's power \(own) is not 20 dB over \(other) Hz's \(theirs)")
            }
            // A semitone away on either side is far weaker too (the tone is where it should be, not near it).
            for detuned in [note.frequency * 0.944, note.frequency * 1.059] {
                #expect(own > 30 * ToneMeasure.goertzel(window, frequency: detuned, rate: Self.rate), "\(sound): \(note.frequency) Hz vs \(detuned) Hz")
            }
        }
    }

    @Test("The documented notes: ding-dong is E5 then C5, Westminster E5 C5 D5 G4, triple C5 E5 G5, buzz 220 Hz twice")
    func documentedNotes() {
        #expect(ChimeSound.dingDong.notes.map(\.frequency) == [659.25, 523.25])
        #expect(ChimeSound.westminster.notes.map(\.frequency) == [659.25, 523.25, 587.33, 392.00])
        #expect(ChimeSound.triple.notes.map(\.frequency) == [523.25, 659.25, 783.99])
        #expect(ChimeSound.buzz.notes.map(\.frequency) == [220, 220])
    }

    @Test("Silence between the buzzer's bursts")
    func buzzGap() {
        let left = ToneMeasure.channel(ChimeSound.buzz.samples(), 0, of: 2)
        let gap = left[Int(0.42 * Self.rate)..<Int(0.53 * Self.rate)]
        #expect(gap.allSatisfy { $0 == 0 })
    }
}
