import CamoMedia
@testable import CamoProducerKit
import CamoTestSupport
import CamoWire
import Testing

/// A session's deadlines run on the controller's injected clock: with a manual clock that stands still, a peer
/// that stalls stays connected however long it waits in real time, and it is ended as soon as the clock passes
/// the deadline, long before the deadline's time would pass in real time.
@Suite("Session deadlines follow the injected clock", .timeLimit(.minutes(1)))
struct ClockDeadlineTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aStalledHandshakeEndsWhenTheClockPassesTheDeadline() async throws {
        let clock = ManualClock()
        let controller = ControllerTests.makeController(clock: clock) { $0.handshakeDeadlineSeconds = 30 }
        try await controller.start()
        let port = try #require(controller.port)
        await clock.waitForSleepers(1)  // the pacer
        let closed = Latch()
        let preamble = Preamble(versionMajor: 1, versionMinor: 0, pattern: .xx, initiatorId: "").encoded()
        let peer = Task {
            defer { closed.set() }
            return try await RawPeer.exchange(port: port, send: preamble)
        }
        await clock.waitForSleepers(2)  // and the connection's handshake deadline
        #expect(!(await closed.wait(seconds: 0.2)), "the clock stands still, so the deadline has not passed")
        clock.advance(to: 30 * Self.second - 1)
        #expect(!(await closed.wait(seconds: 0.1)), "one nanosecond before the deadline")
        clock.advance(to: 30 * Self.second)
        #expect(await closed.wait(seconds: 5), "closed right after the clock passed the deadline")
        let reply = try await peer.value
        #expect(reply.closed)
        #expect(reply.unauthenticatedError?.code == WireErrorCode.handshakeTimeout.rawValue, "got \(reply.bytes)")
        await controller.stop()
    }

    @Test func aStudioThatFallsSilentEndsWhenTheClockPassesTheKeepaliveTimeout() async throws {
        let clock = ManualClock()
        let controller = ControllerTests.makeController(clock: clock) { $0.keepaliveTimeoutSeconds = 20 }
        try await controller.start()
        let port = try #require(controller.port)
        // A studio that sends its hello and then nothing at all: no pings, no pongs.
        let admitted = Latch()
        let closed = Latch()
        let pinged = Latch()
        let wire = SessionSpecTests.raw(.xx, preambleId: "silent")
        let studio = Task {
            defer { closed.set() }
            return try await RawStudio.converse(port: port, wire: wire, seconds: 30) { wire, event in
                if case .message(.agentHello) = event { admitted.set() }
                if case .message(.ping) = event { pinged.set() }
                return try RawStudio.sendHello(RawStudio.hello(id: "silent"))(&wire, event)
            }
        }
        #expect(await admitted.wait())
        await clock.waitForSleepers(2)  // the pacer and the session's keepalive
        #expect(!(await closed.wait(seconds: 0.2)), "the clock stands still, so the studio is not silent for long")
        // One jump to exactly the timeout: the keepalive runs once, pings, and keeps the session.
        clock.advance(to: 20 * Self.second)
        // The keepalive's run at 20 s pings; wait for that ping to arrive before moving the clock on, or on a
        // loaded machine the run may only happen after the next jump, see 21 s, and close without pinging.
        #expect(await pinged.wait(seconds: 10), "the keepalive did not ping at 20 s")
        #expect(!(await closed.wait(seconds: 0.2)), "silent for exactly the timeout is still in time")
        #expect(controller.connections.count == 1)
        clock.advance(by: Self.second)
        #expect(await closed.wait(seconds: 5), "ended right after the clock passed the timeout")
        let talk = try await studio.value
        #expect(talk.closed)
        #expect(talk.peerError?.code == .keepaliveTimeout, "\(talk.events)")
        let pings = talk.events.filter { if case .message(.ping) = $0 { true } else { false } }
        #expect(pings.count == 1, "one keepalive run for the jump to 20 s, none while the clock stood still: \(talk.events)")
        #expect(controller.connections.isEmpty)
        await controller.stop()
    }
}
