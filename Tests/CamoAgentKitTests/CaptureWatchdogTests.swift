import CamoAgentKit
import Testing

@Suite("The capture watchdog")
struct CaptureWatchdogTests {
    let second: UInt64 = 1_000_000_000

    @Test func fedWhileFramesArriveStoppedWhenTheyStopAndFedAgainWhenTheyReturn() {
        var watchdog = CaptureWatchdog(intervalNanos: 10 * second)
        #expect(watchdog.decide(now: 1 * second, lastFrame: nil, cameraLost: false) == .stall, "no frame yet is no capture")
        #expect(watchdog.decide(now: 2 * second, lastFrame: 2 * second, cameraLost: false) == .feedAgain)
        #expect(watchdog.decide(now: 11 * second, lastFrame: 2 * second, cameraLost: false) == .feed, "9 s since the last frame")
        #expect(watchdog.decide(now: 12 * second, lastFrame: 2 * second, cameraLost: false) == .stall, "a whole interval without a frame")
        #expect(watchdog.decide(now: 13 * second, lastFrame: 2 * second, cameraLost: false) == .stillStalled)
        #expect(watchdog.decide(now: 14 * second, lastFrame: 14 * second, cameraLost: false) == .feedAgain)
        #expect(watchdog.decide(now: 15 * second, lastFrame: 14 * second, cameraLost: false) == .feed)
    }

    @Test func aLostCameraIsWaitingNotStuck() {
        var watchdog = CaptureWatchdog(intervalNanos: 10 * second)
        #expect(watchdog.decide(now: 100 * second, lastFrame: 1 * second, cameraLost: true) == .feed)
        #expect(watchdog.decide(now: 200 * second, lastFrame: 1 * second, cameraLost: false) == .stall)
    }
}
