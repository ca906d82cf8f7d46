import CamoVirtualDevices
import Testing

@Suite("Virtual camera feed: frames as they come, RECONNECTING while the agent is away")
struct VirtualCameraFeedTests {
    static let ms: UInt64 = 1_000_000

    @Test("Before the first session the device gets filler at 30 fps, from the first tick")
    func fillerBeforeTheFirstSession() {
        var feed = VirtualCameraFeed()
        var fillers = 0
        // Ticks every 10 ms for one second.
        for t in stride(from: UInt64(0), through: 1_000 * Self.ms, by: Int(10 * Self.ms)) where feed.tick(now: t) == .filler {
            fillers += 1
        }
        #expect(feed.state == .connecting)
        #expect((30...31).contains(fillers), "filler frames in one second: \(fillers)")
        #expect(feed.fillerWritten == UInt64(fillers))
    }

    @Test("Frames arriving every 33 ms are written and no filler comes between them, even with 200 ms of jitter")
    func framesAndNoFillerWhileStreaming() {
        var feed = VirtualCameraFeed()
        var t: UInt64 = 0
        for i in 0..<90 {
            // One late frame (200 ms) stays under the 250 ms stall.
            t += i == 45 ? 200 * Self.ms : 33 * Self.ms
            #expect(feed.tick(now: t - Self.ms) == nil || i == 0)
            #expect(feed.frameArrived(now: t) == .frame)
        }
        #expect(feed.state == .streaming)
        #expect(feed.framesWritten == 90)
        #expect(feed.interruptions == 0)
    }

    @Test("A stall of 250 ms turns the feed to reconnecting with filler at 30 fps; the next frame ends it")
    func stallThenBack() {
        var feed = VirtualCameraFeed()
        _ = feed.frameArrived(now: 0)
        #expect(feed.tick(now: 249 * Self.ms) == nil)
        #expect(feed.tick(now: 250 * Self.ms) == .filler)
        #expect(feed.state == .reconnecting)
        #expect(feed.interruptions == 1)
        #expect(feed.tick(now: 260 * Self.ms) == nil, "the next filler waits a frame interval")
        var fillers = 1
        for t in stride(from: 270 * Self.ms, through: 1_250 * Self.ms, by: Int(10 * Self.ms)) where feed.tick(now: t) == .filler { fillers += 1 }
        #expect((30...32).contains(fillers), "filler in the first second away: \(fillers)")
        #expect(feed.frameArrived(now: 1_260 * Self.ms) == .frame)
        #expect(feed.state == .streaming)
        #expect(feed.tick(now: 1_270 * Self.ms) == nil, "no filler once frames are back")
    }

    @Test("A lost session shows filler at the next tick, without waiting for the stall")
    func lostSessionIsImmediate() {
        var feed = VirtualCameraFeed()
        _ = feed.frameArrived(now: 0)
        feed.sessionLost(now: 10 * Self.ms)
        #expect(feed.state == .reconnecting)
        #expect(feed.tick(now: 10 * Self.ms) == .filler)
        #expect(feed.interruptions == 1)
        // Losing it again while away is not another interruption.
        feed.sessionLost(now: 20 * Self.ms)
        #expect(feed.interruptions == 1)
    }

    @Test("After a long pause (a suspended process) filler resumes from now instead of catching up")
    func noCatchUpAfterAPause() {
        var feed = VirtualCameraFeed()
        #expect(feed.tick(now: 0) == .filler)
        #expect(feed.tick(now: 10_000 * Self.ms) == .filler)
        #expect(feed.tick(now: 10_001 * Self.ms) == nil)
        #expect(feed.tick(now: 10_034 * Self.ms) == .filler)
    }
}
