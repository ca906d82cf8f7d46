import CamoVirtualDevices
import Foundation
import Testing

@Suite("Fractional resampler: Catmull-Rom between input frames, with the read position's capture time")
struct FractionalResamplerTests {
    static func sine(frames: Int, frequency: Double, offset: Int = 0) -> [Float] {
        var out = [Float]()
        for n in 0..<frames {
            let v = Float(0.5 * sin(2 * Double.pi * frequency * Double(n + offset) / 48_000))
            out.append(v)
            out.append(-v)
        }
        return out
    }

    @Test("At step 1 the output is the input, sample for sample, and the capture time advances 1/48000 s a frame")
    func unitStepIsIdentity() {
        var resampler = FractionalResampler()
        let input = Self.sine(frames: 4_800, frequency: 997)
        resampler.append(input, firstSampleTime: 1_000_000_000)
        #expect(resampler.readTime == 1_000_000_000)
        var output: [Float] = []
        let produced = resampler.read(frames: 4_000, step: 1, into: &output)
        #expect(produced == 4_000)
        #expect(zip(output, input.prefix(8_000)).allSatisfy { abs($0 - $1) < 1e-6 })
        let time = Double(resampler.readTime ?? 0)
        let want: Double = 1e9 + 4_000 * 1e9 / 48_000
        #expect(abs(time - want) < 2, "read time \(time)")
    }

    @Test("At a step 500 ppm fast a 1 kHz sine comes out as the same sine sampled 500 ppm further apart (error < 1e-3)")
    func fractionalStepInterpolates() {
        var resampler = FractionalResampler()
        resampler.append(Self.sine(frames: 48_000, frequency: 1_000), firstSampleTime: 0)
        let step = 1.0005
        var output: [Float] = []
        // Read in periods, as the microphone does, so state carries across calls and compaction.
        for _ in 0..<90 { resampler.read(frames: 480, step: step, into: &output) }
        #expect(output.count == 90 * 480 * 2)
        var worst: Float = 0
        for n in 0..<(output.count / 2) {
            let want = Float(0.5 * sin(2 * Double.pi * 1_000 * Double(n) * step / 48_000))
            worst = max(worst, abs(output[2 * n] - want), abs(output[2 * n + 1] + want))
        }
        #expect(worst < 1e-3, "largest error \(worst)")
        #expect(abs(resampler.queuedFrames - (48_000 - 90 * 480 * step)) < 2, "queued \(resampler.queuedFrames)")
    }

    @Test("It stops two frames short of the end, and goes on seamlessly when more input is appended")
    func runsOutAndResumes() {
        var resampler = FractionalResampler()
        let input = Self.sine(frames: 1_000, frequency: 440)
        resampler.append(Array(input.prefix(1_000)), firstSampleTime: 0)  // 500 frames
        var output: [Float] = []
        let first = resampler.read(frames: 600, step: 1, into: &output)
        #expect(first == 498)
        resampler.append(Array(input.suffix(1_000)), firstSampleTime: 500 * 1_000_000_000 / 48_000)
        let second = resampler.read(frames: 400, step: 1, into: &output)
        #expect(second == 400)
        #expect(zip(output, input).allSatisfy { abs($0 - $1) < 1e-6 }, "the join is seamless")
    }

    @Test("skip drops input at the read position and moves the capture time with it; removeAll empties")
    func skipAndRemove() {
        var resampler = FractionalResampler()
        resampler.append(Self.sine(frames: 9_600, frequency: 440), firstSampleTime: 0)
        resampler.skip(frames: 4_800)
        #expect(abs(resampler.queuedFrames - 4_800) < 1)
        let time = Double(resampler.readTime ?? 0)
        #expect(abs(time - 1e8) < 2)
        resampler.skip(frames: 1e9)
        #expect(resampler.queuedFrames == 0)
        resampler.removeAll()
        #expect(resampler.readTime == nil)
    }
}
