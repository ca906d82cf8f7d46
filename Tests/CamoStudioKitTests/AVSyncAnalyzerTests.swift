import CamoStudioKit
import Testing

@Suite("A/V sync analyzer")
struct AVSyncAnalyzerTests {
    /// Interleaved stereo: a 0.25 tone-like pattern with a 48-sample click of 0.9 starting at `clickAt`.
    private func packet(frames: Int, clickAt: Int?) -> [Float] {
        (0..<frames).flatMap { i -> [Float] in
            if let clickAt, i >= clickAt && i < clickAt + 48 { return [0.9, 0.9] }
            let tone: Float = i % 2 == 0 ? 0.25 : -0.25
            return [tone, tone]
        }
    }

    @Test("click time is firstSampleTime + index·1e9/48000")
    func clickTime() {
        var analyzer = AVSyncAnalyzer()
        analyzer.addAudio(firstSampleTime: 1_000_000_000, interleaved: packet(frames: 1024, clickAt: 480))
        #expect(analyzer.clickTimes == [1_000_000_000 + 480 * 1_000_000_000 / 48_000])
        #expect(analyzer.clickTimes == [1_010_000_000])
    }

    @Test("a click spanning two packets counts once; the next click counts again")
    func clickAcrossPackets() {
        var analyzer = AVSyncAnalyzer()
        analyzer.addAudio(firstSampleTime: 0, interleaved: packet(frames: 100, clickAt: 80))   // samples 80..99 loud
        analyzer.addAudio(firstSampleTime: 100 * 1_000_000_000 / 48_000, interleaved: packet(frames: 100, clickAt: -20)) // 0..27 loud
        #expect(analyzer.clickTimes.count == 1)
        analyzer.addAudio(firstSampleTime: 48_000 * 1_000_000_000 / 48_000, interleaved: packet(frames: 64, clickAt: 0))
        #expect(analyzer.clickTimes == [80 * 1_000_000_000 / 48_000, 1_000_000_000])
    }

    @Test("only the left channel and only |x| > 0.8 make a click")
    func threshold() {
        var analyzer = AVSyncAnalyzer()
        analyzer.addAudio(firstSampleTime: 0, interleaved: [0.8, 0.0, 0.0, 0.95, -0.81, 0.0])
        #expect(analyzer.clickTimes == [2 * 1_000_000_000 / 48_000])
    }

    @Test("little-endian bytes decode like floats")
    func bytesInput() {
        var a = AVSyncAnalyzer(), b = AVSyncAnalyzer()
        let samples = packet(frames: 256, clickAt: 100)
        a.addAudio(firstSampleTime: 5, interleaved: samples)
        b.addAudio(firstSampleTime: 5, float32LittleEndian: littleEndianBytes(samples))
        #expect(a.clickTimes == b.clickTimes)
        #expect(AVSyncAnalyzer.floats(fromLittleEndian: littleEndianBytes(samples)) == samples)
    }

    @Test("offset is the mean of click − flash over pairs within 500 ms")
    func offsetMean() {
        var analyzer = AVSyncAnalyzer()
        let second: UInt64 = 1_000_000_000
        // Flashes at 10 s, 11 s, 12 s, 13 s; clicks 20 ms late, 40 ms late, 10 ms early; none near 13 s.
        for s in 10...13 { analyzer.addFlash(captureTime: UInt64(s) * second) }
        analyzer.addFlash(captureTime: 13 * second)   // a repeat of the same frame counts once
        #expect(analyzer.flashTimes.count == 4)
        let clicks: [UInt64] = [10 * second + 20_000_000, 11 * second + 40_000_000, 12 * second - 10_000_000, 13 * second + 600_000_000]
        let pairs = AVSyncAnalyzer.match(flashTimes: analyzer.flashTimes, clickTimes: clicks)
        #expect(pairs.map(\.offsetNanos) == [20_000_000, 40_000_000, -10_000_000])
        #expect(abs((AVSyncAnalyzer.meanOffsetMs(pairs) ?? .nan) - 50.0 / 3.0) < 1e-9)
    }

    @Test("nearest click wins, and no clicks or no pairs means no offset")
    func nearestAndEmpty() {
        let pairs = AVSyncAnalyzer.match(flashTimes: [1_000_000_000], clickTimes: [700_000_000, 1_100_000_000, 1_050_000_000])
        #expect(pairs == [AVSyncPair(flashTime: 1_000_000_000, clickTime: 1_050_000_000)])
        #expect(AVSyncAnalyzer.match(flashTimes: [1_000_000_000], clickTimes: []).isEmpty)
        #expect(AVSyncAnalyzer.match(flashTimes: [1_000_000_000], clickTimes: [1_500_000_001]).isEmpty)
        #expect(AVSyncAnalyzer.match(flashTimes: [1_000_000_000], clickTimes: [500_000_000]).count == 1)
        #expect(AVSyncAnalyzer().offsetMs == nil)
    }

    @Test("end to end over synthetic packets: audio 30 ms behind video")
    func syntheticStream() {
        var analyzer = AVSyncAnalyzer()
        let base: UInt64 = 5_000_000_000
        let lag: UInt64 = 30_000_000
        // 3 s of audio in 1024-frame packets whose sample s is at base + lag + s·1e9/48000; click each 48000 samples.
        var s = 0
        while s < 3 * 48_000 {
            let frames = 1024
            let clickIndex = (48_000 - s % 48_000) % 48_000
            let first = base + lag + UInt64(s) * 1_000_000_000 / 48_000
            analyzer.addAudio(firstSampleTime: first, interleaved: packet(frames: frames, clickAt: clickIndex < frames ? clickIndex : nil))
            s += frames
        }
        for k in 0..<3 { analyzer.addFlash(captureTime: base + UInt64(k) * 1_000_000_000) }
        #expect(analyzer.pairs.count == 3)
        let offset = analyzer.offsetMs ?? .nan
        #expect(abs(offset - 30) < 0.05)
    }
}
