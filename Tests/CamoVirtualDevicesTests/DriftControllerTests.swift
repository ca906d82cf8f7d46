import CamoVirtualDevices
import Testing

@Suite("Drift controller: the microphone's fill held at its target, the clocks' difference measured")
struct DriftControllerTests {
    /// A simulated hour-like run: input arrives at 48 kHz·(1 + drift) in `packet`-frame bursts, the device plays
    /// 480 frames a period; returns the controller and the largest distance of the fill from the target after the
    /// first `settle` seconds.
    static func simulate(driftPPM: Double, seconds: Double, packet: Int = 480, settle: Double = 60) -> (DriftController, worst: Double, fill: Double) {
        var controller = DriftController(targetFrames: 2_880)
        var fill = 2_880.0
        var arrived = 0.0, pending = 0.0
        var step = 1.0
        var worst = 0.0
        let periods = Int(seconds * 100)
        for period in 0..<periods {
            // Input for this 10 ms, delivered in whole packets.
            pending += 480 * (1 + driftPPM / 1e6)
            while pending >= Double(packet) {
                fill += Double(packet)
                pending -= Double(packet)
                arrived += Double(packet)
            }
            step = controller.step(fill: Int(fill), elapsedFrames: 480)
            fill -= 480 * step
            if Double(period) / 100 > settle { worst = max(worst, abs(fill - 2_880)) }
        }
        return (controller, worst, fill)
    }

    @Test("An agent 300 ppm fast: over ten minutes the drift reads +300 ppm (±25) and the fill stays within 2 packets of its target", arguments: [480, 1_024, 2_048])
    func fastAgent(packet: Int) {
        let (controller, worst, _) = Self.simulate(driftPPM: 300, seconds: 600, packet: packet)
        #expect(abs(controller.driftPPM - 300) < 25, "drift \(controller.driftPPM)")
        #expect(worst < Double(2 * packet + 480), "fill off by \(worst) frames")
    }

    @Test("An agent 120 ppm slow over an hour: the drift reads -120 ppm and the fill never wanders (no gap, no growing delay)")
    func slowAgentForAnHour() {
        let (controller, worst, fill) = Self.simulate(driftPPM: -120, seconds: 3_600)
        #expect(abs(controller.driftPPM + 120) < 10, "drift \(controller.driftPPM)")
        #expect(worst < 1_500, "fill off by \(worst) frames")
        #expect(abs(fill - 2_880) < 1_000, "fill at the end \(fill)")
    }

    @Test("A drift beyond the limit (1 %) is not followed: the correction stops at 0.5 %")
    func limited() {
        let (controller, _, _) = Self.simulate(driftPPM: 10_000, seconds: 120)
        #expect(controller.driftPPM <= 5_000 + 1e-9 && controller.driftPPM > 4_000, "drift \(controller.driftPPM)")
        #expect(abs(controller.correction) <= 0.005 + 1e-12)
    }

    @Test("restart forgets the filtered fill and keeps the integral term and the mean")
    func restartKeepsDrift() {
        var (controller, _, _) = Self.simulate(driftPPM: 200, seconds: 300)
        let learnt = controller.driftPPM, integral = controller.integral
        controller.restart()
        #expect(controller.filteredFill == nil)
        #expect(controller.driftPPM == learnt && controller.integral == integral)
        #expect(controller.correction == integral)
    }
}
