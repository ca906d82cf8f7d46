import CamoVirtualDevices
import Testing

@Suite("Feed figures: fps, kbit/s and latency over the last second")
struct FeedFiguresTests {
    @Test("30 frames of 10 kB in a second with the agent's clock 5 s ahead and 40 ms of latency")
    func oneSecond() {
        var figures = FeedFigures()
        let offset: Int64 = 5_000_000_000
        figures.clockSample(offsetNanos: offset + 1_000_000, roundTripNanos: 9_000_000)
        figures.clockSample(offsetNanos: offset, roundTripNanos: 1_000_000)
        for i in 0..<30 {
            let received = UInt64(i) * 33_333_333 + 1_000
            let captured = received + UInt64(offset) - 40_000_000
            figures.frame(bytes: 10_000, captureTime: captured, receivedAt: received, isNew: true)
        }
        #expect(figures.last == nil, "no whole window yet")
        figures.roll(now: 1_000_001_000)
        let last = figures.last
        #expect(last?.framesPerSecond == 30)
        #expect(last?.kbitPerSecond == 2_400)
        #expect(last.flatMap(\.latencyMs).map { abs($0 - 40) < 0.001 } == true, "\(String(describing: last))")
    }

    @Test("Repeats count toward the bitrate, not the frame rate; a silent second shows 0 fps")
    func repeatsAndSilence() {
        var figures = FeedFigures()
        figures.frame(bytes: 1_000, captureTime: 0, receivedAt: 0, isNew: true)
        figures.frame(bytes: 1_000, captureTime: 0, receivedAt: 10, isNew: false)
        figures.roll(now: 1_000_000_000)
        #expect(figures.last?.framesPerSecond == 1)
        #expect(figures.last?.kbitPerSecond == 16)
        #expect(figures.last?.latencyMs == nil, "no clock sample yet")
        figures.roll(now: 3_500_000_000)
        #expect(figures.last == FeedFigures.Snapshot(framesPerSecond: 0, kbitPerSecond: 0, latencyMs: nil))
    }
}
