import CamoEvents
import CamoMedia
import Testing

@Suite("Smoke (T3) and CO (T4) alarm patterns from audio")
struct AlarmPatternDetectorTests {
    static let start: UInt64 = 2_000_000_000_000

    static func detect(_ mono: [Float], chunkFrames: Int = 1024) -> [AlarmDetection] {
        var detector = AlarmPatternDetector()
        return TestSignals.chunks(mono, chunkFrames: chunkFrames, start: start).flatMap { detector.process($0) }
    }

    /// Seconds after the start of the signal.
    static func seconds(_ time: UInt64) -> Double { Double(time - start) / 1e9 }

    @Test("T3 at 3.1 kHz, 520 Hz and 4 kHz with noise 20 dB down: a smoke alarm when the second cycle starts, every cycle after", arguments: [3100.0, 520.0, 4000.0])
    func t3(frequency: Double) {
        var signals = TestSignals(seed: UInt64(frequency))
        // Three cycles and the start of a fourth, from 0.237 s.
        let detections = Self.detect(signals.alarm(t3: true, frequency: frequency, seconds: 12.6))
        #expect(detections.map(\.pattern) == [.t3, .t3, .t3])
        #expect(detections.allSatisfy { $0.trigger == .smokeAlarm })
        // Cycles start at 0.237, 4.237, 8.237, 12.237 s; each is confirmed as the next starts, 40 ms in.
        let times = detections.map { Self.seconds($0.time) }
        for (time, expected) in zip(times, [4.237, 8.237, 12.237]) {
            #expect(abs(time - expected) < 0.03, "detected at \(time) s, the cycle starts at \(expected) s")
        }
        #expect(abs(Self.seconds(detections[0].cycleStart) - 0.237) < 0.03)
        #expect(detections.allSatisfy { abs(Double($0.frequency) - frequency) <= 100 })
    }

    @Test("T4 at 3 kHz: a CO alarm when the second cycle starts")
    func t4() {
        var signals = TestSignals(seed: 4)
        let detections = Self.detect(signals.alarm(t3: false, frequency: 3000, seconds: 12))
        #expect(detections.map(\.pattern) == [.t4, .t4])
        #expect(detections.allSatisfy { $0.trigger == .coAlarm })
        // Cycles of 5.7 s from 0.237 s.
        #expect(abs(Self.seconds(detections[0].time) - 5.937) < 0.03)
        #expect(abs(Self.seconds(detections[1].time) - 11.637) < 0.03)
    }

    @Test("chunk sizes and stereo layout do not matter; a gap in time forgets the tones")
    func chunkingAndGaps() {
        var signals = TestSignals(seed: 5)
        let mono = signals.alarm(t3: true, frequency: 3100, seconds: 8.6)
        let reference = Self.detect(mono)
        #expect(reference.count == 2)
        #expect(Self.detect(mono, chunkFrames: 480) == reference)
        #expect(Self.detect(mono, chunkFrames: 777) == reference)

        // The same signal with a 1 s hole in the capture times after 2 s: the first cycle is cut, so the first
        // detection can only come from the cycle after.
        var detector = AlarmPatternDetector()
        var detections: [AlarmDetection] = []
        for chunk in TestSignals.chunks(mono, chunkFrames: 1024, start: Self.start) {
            var shifted = chunk
            if chunk.firstSampleTime >= Self.start + 2_000_000_000 { shifted.firstSampleTime += 1_000_000_000 }
            detections += detector.process(shifted)
        }
        #expect(detections.count == 1)
        #expect(detections.first.map { Self.seconds($0.time) > 9 } == true)
    }

    @Test("times within ±10 % are accepted: a slow and a fast T3 sounder; 20 % off is refused")
    func tolerance() {
        var signals = TestSignals(seed: 9)
        // 10 % long tones, 10 % short gaps, 10 % long pause.
        let slow = signals.tone(frequency: 3100, amplitude: 0.5, gate: TestSignals.gate(on: [0.55, 0.55, 0.55], off: [0.45, 0.45, 1.65], seconds: 9))
        #expect(Self.detect(slow).map(\.pattern) == [.t3, .t3])
        let fast = signals.tone(frequency: 3100, amplitude: 0.5, gate: TestSignals.gate(on: [0.45, 0.45, 0.45], off: [0.55, 0.55, 1.35], seconds: 8))
        #expect(Self.detect(fast).map(\.pattern) == [.t3, .t3])
        let t4Slow = signals.tone(frequency: 3000, amplitude: 0.5, gate: TestSignals.gate(on: [0.11, 0.11, 0.11, 0.11], off: [0.09, 0.09, 0.09, 5.5], seconds: 13))
        #expect(Self.detect(t4Slow).map(\.pattern) == [.t4, .t4])
        let tooSlow = signals.tone(frequency: 3100, amplitude: 0.5, gate: TestSignals.gate(on: [0.6, 0.6, 0.6], off: [0.5, 0.5, 1.5], seconds: 30))
        #expect(Self.detect(tooSlow).isEmpty)
        let t4TooLong = signals.tone(frequency: 3000, amplitude: 0.5, gate: TestSignals.gate(on: [0.14, 0.14, 0.14, 0.14], off: [0.1, 0.1, 0.1, 5], seconds: 30))
        #expect(Self.detect(t4TooLong).isEmpty)
    }

    @Test("a quieter alarm in more noise (10 dB down) is still heard")
    func noisier() {
        var signals = TestSignals(seed: 10)
        #expect(Self.detect(signals.alarm(t3: true, frequency: 3100, seconds: 8.6, noiseDB: -10)).map(\.pattern) == [.t3, .t3])
        #expect(Self.detect(signals.alarm(t3: false, frequency: 3000, seconds: 12, noiseDB: -10)).map(\.pattern) == [.t4, .t4])
    }

    @Test("wrong timing is not an alarm: 0.7 s tones, a 0.5 s on/off beeper without pauses, a 3 s pause")
    func wrongTiming() {
        var signals = TestSignals(seed: 6)
        let long = signals.tone(frequency: 3100, amplitude: 0.5, gate: TestSignals.gate(on: [0.7, 0.7, 0.7], off: [0.5, 0.5, 1.5], seconds: 30))
        #expect(Self.detect(long).isEmpty)
        let beeper = signals.tone(frequency: 1000, amplitude: 0.5, gate: TestSignals.gate(on: [0.5], off: [0.5], seconds: 30))
        #expect(Self.detect(beeper).isEmpty)
        let slow = signals.tone(frequency: 3100, amplitude: 0.5, gate: TestSignals.gate(on: [0.5, 0.5, 0.5], off: [0.5, 0.5, 3], seconds: 30))
        #expect(Self.detect(slow).isEmpty)
        // Changing frequency from tone to tone (a three-note chime in the T3 rhythm) is not one sounder either.
        var chime = [Float]()
        for _ in 0..<6 {
            for frequency in [1000.0, 1500.0, 2000.0] {
                chime += signals.tone(frequency: frequency, amplitude: 0.5, gate: [Bool](repeating: true, count: 24_000))
                chime += [Float](repeating: 0, count: frequency == 2000 ? 72_000 : 24_000)
            }
        }
        #expect(Self.detect(chime).isEmpty)
    }

    @Test("60 s each of speech, music, white noise and a continuous tone: no alarm", arguments: ["speech", "music", "music with rests", "noise", "tone"])
    func negatives(kind: String) {
        var signals = TestSignals(seed: 11)
        let seconds = 60.0
        let mono: [Float]
        switch kind {
        case "speech": mono = signals.speech(seconds: seconds)
        case "music": mono = signals.music(seconds: seconds, rests: false)
        case "music with rests": mono = signals.music(seconds: seconds, rests: true)
        case "noise":
            var noise = [Float](repeating: 0, count: Int(seconds * 48_000))
            signals.addNoise(&noise, rms: 0.2)
            mono = noise
        default:
            var tone = signals.tone(frequency: 3100, amplitude: 0.5, gate: [Bool](repeating: true, count: Int(seconds * 48_000)))
            signals.addNoise(&tone, rms: 0.035)
            mono = tone
        }
        var detector = AlarmPatternDetector()
        let falsePositives = TestSignals.chunks(mono, start: Self.start).flatMap { detector.process($0) }
        #expect(falsePositives.isEmpty, "\(falsePositives.count) false positives")
        #expect(detector.framesAnalyzed == 6_000)
        // What the pattern stage had to reject: noise holds no tone at all, the others do.
        switch kind {
        case "noise": #expect(detector.toneFrames == 0)
        case "tone": #expect(detector.toneFrames > 5_900 && detector.tonesHeard == 0)
        default: #expect(detector.tonesHeard > 20, "\(detector.toneFrames) tone frames, \(detector.tonesHeard) tones")
        }
    }
}
