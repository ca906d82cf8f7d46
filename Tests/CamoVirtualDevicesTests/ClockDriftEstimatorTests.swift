import CamoVirtualDevices
import Testing

@Suite("Clock drift estimator: the agent's capture times fitted against their arrival")
struct ClockDriftEstimatorTests {
    /// Packets every 10 ms for `seconds` from an agent whose clock runs `ppm` fast, arriving late by a pseudo-random
    /// 0…`jitterMs` (a fixed sequence, so the test is exact).
    static func fit(ppm: Double, seconds: Int, jitterMs: Double) -> ClockDriftEstimator {
        var estimator = ClockDriftEstimator()
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for k in 0..<(seconds * 100) {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let jitter = Double(seed >> 33) / Double(1 << 31) * jitterMs * 1e6
            let local = 5_000_000_000 + UInt64(Double(k) * 1e7 + jitter)
            let remote = 900_000_000_000 + UInt64(Double(k) * 1e7 * (1 + ppm / 1e6))
            estimator.add(local: local, remote: remote)
        }
        return estimator
    }

    @Test("+250 ppm with 0–40 ms of arrival jitter over 10 minutes reads +250 ppm within 5", arguments: [250.0, -80.0, 0.0])
    func measures(ppm: Double) throws {
        let drift = try #require(Self.fit(ppm: ppm, seconds: 600, jitterMs: 40).driftPPM)
        #expect(abs(drift - ppm) < 5, "measured \(drift) ppm for \(ppm)")
    }

    @Test("Nothing is reported before the fit spans 20 s; reset starts again")
    func needsSpan() {
        var estimator = Self.fit(ppm: 100, seconds: 19, jitterMs: 0)
        #expect(estimator.driftPPM == nil)
        #expect(estimator.spanSeconds > 18.9)
        estimator = Self.fit(ppm: 100, seconds: 21, jitterMs: 0)
        let drift = estimator.driftPPM ?? 0
        #expect(abs(drift - 100) < 0.5, "\(drift)")
        estimator.reset()
        #expect(estimator.driftPPM == nil && estimator.spanSeconds == 0)
    }
}
