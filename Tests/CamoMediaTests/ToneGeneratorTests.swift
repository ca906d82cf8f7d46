@testable import CamoMedia
import Foundation
import Testing

@Suite("ToneGenerator: 1 kHz left, 2 kHz right, a click each second")
struct ToneGeneratorTests {
    @Test func amplitudeIsMinus12dBFS() {
        #expect(abs(Double(ToneGenerator.amplitude) - pow(10, -12.0 / 20)) < 1e-7)
        #expect(ToneGenerator.clickLength == 48)
    }

    @Test func clickAtTheStartOfEverySecond() {
        for second: UInt64 in [0, 1, 2, 3600] {
            for offset: UInt64 in [0, 1, 47] {
                #expect(ToneGenerator.sample(at: second * 48_000 + offset, channel: 0) == 0.9)
                #expect(ToneGenerator.sample(at: second * 48_000 + offset, channel: 1) == 0.9)
            }
            #expect(ToneGenerator.sample(at: second * 48_000 + 48, channel: 0) != 0.9)
        }
    }

    @Test func sinesHaveTheRightFrequencyAndNoDrift() {
        let amplitude = Double(ToneGenerator.amplitude)
        // 1 kHz left: period 48 samples; quarter period (12) is the peak. 2 kHz right: peak at 6.
        #expect(abs(Double(ToneGenerator.sample(at: 60, channel: 0)) - amplitude) < 1e-6)
        #expect(abs(Double(ToneGenerator.sample(at: 54, channel: 1)) - amplitude) < 1e-6)
        #expect(abs(Double(ToneGenerator.sample(at: 72, channel: 0))) < 1e-6)
        // A day later (outside the click) the phase is exactly the same.
        let day: UInt64 = 86_400 * 48_000
        for s: UInt64 in [100, 1000, 47_999] {
            #expect(ToneGenerator.sample(at: day + s, channel: 0) == ToneGenerator.sample(at: s, channel: 0))
            #expect(ToneGenerator.sample(at: day + s, channel: 1) == ToneGenerator.sample(at: s, channel: 1))
            let expected = amplitude * sin(2 * Double.pi * 1000 * Double(s) / 48_000)
            #expect(abs(Double(ToneGenerator.sample(at: s, channel: 0)) - expected) < 1e-6)
        }
    }

    @Test("the one-period tables give exactly the sine's definition at every sample of a second")
    func tablesMatchTheDefinition() {
        #expect(ToneGenerator.periods.map(\.count) == [48, 24])
        for channel in 0..<2 {
            let frequency = ToneGenerator.frequencies[channel]
            var mismatches = 0
            for s in UInt64(ToneGenerator.clickLength)..<48_000 {
                let expected = ToneGenerator.sine(frequency: frequency, withinSecond: s)
                if ToneGenerator.sample(at: s, channel: channel) != expected { mismatches += 1 }
                if ToneGenerator.sample(at: 1_000_000 * 48_000 + s, channel: channel) != expected { mismatches += 1 }
            }
            #expect(mismatches == 0, "channel \(channel): \(mismatches) samples differ from the definition")
        }
    }

    @Test func renderContinuesAcrossCallsAndMatchesSampleAt() {
        var generator = ToneGenerator()
        var rendered: [Float] = []
        for count in [1, 479, 480, 7, 48_000] { rendered += generator.render(frames: count) }
        #expect(generator.nextSampleIndex == 48_967)
        #expect(rendered.count == 48_967 * 2)
        for s in 0..<48_967 {
            if rendered[2 * s] != ToneGenerator.sample(at: UInt64(s), channel: 0)
                || rendered[2 * s + 1] != ToneGenerator.sample(at: UInt64(s), channel: 1)
            {
                Issue.record("sample \(s) differs")
                break
            }
        }
        #expect(generator.render(frames: 0).isEmpty)
    }
}
