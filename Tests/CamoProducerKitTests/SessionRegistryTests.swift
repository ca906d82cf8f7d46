import CamoWire
import Foundation
import Testing

@testable import CamoProducerKit

@Suite("The controller's session registry (no sockets)")
struct SessionRegistryTests {
    static func connection(_ name: String, pausedByStudio: Bool = false) -> CamoConnection {
        CamoConnection(
            id: UUID(), studioId: name, name: name, address: "127.0.0.1:1", link: .loopback, since: Date(timeIntervalSince1970: 0),
            codec: .bgra, videoSize: .hd720, audioSamplesRequired: 1024, pausedByStudio: pausedByStudio,
            statistics: SessionStatistics())
    }

    @Test func handshakeSlotsAreLimitedAndNeverNegative() {
        var registry = SessionRegistry<String>(maxSessions: 2, maxPendingHandshakes: 2)
        // (Mutating calls outside #expect: the macro cannot call them.)
        let granted = [registry.reserveHandshake(), registry.reserveHandshake(), registry.reserveHandshake()]
        #expect(granted == [true, true, false], "a third connection in its handshake is refused")
        registry.releaseHandshake()
        let again = registry.reserveHandshake()
        #expect(again, "a released slot is free again")
        for _ in 0..<5 { registry.releaseHandshake() }
        #expect(registry.pendingHandshakes == 0)
    }

    @Test func sessionsAreLimitedAndKeepTheirOrder() {
        var registry = SessionRegistry<String>(maxSessions: 2, maxPendingHandshakes: 8)
        let first = registry.admit("a")
        let second = registry.admit("b")
        #expect(first == nil && second == nil)
        let refusal = registry.admit("c")
        #expect(refusal?.code == .tooManyConnections)
        #expect(refusal?.reason == "The agent already serves 2 studios; close one and try again.")
        registry.remove { $0 == "a" }
        #expect(registry.sessions == ["b"], "b is the primary now")
        let third = registry.admit("c")
        #expect(third == nil)
        #expect(registry.sessions == ["b", "c"])
        _ = registry.reserveHandshake()
        let removed = registry.removeAll()
        #expect(removed == ["b", "c"])
        #expect(registry.sessions.isEmpty && registry.pendingHandshakes == 0)
    }

    static func state(_ registry: SessionRegistry<CamoConnection?>, running: Bool, paused: Bool) -> CamoControllerState? {
        registry.state(running: running, paused: paused, connection: { $0 })
    }

    @Test func theStateFollowsThePrimaryAndThePrivacySwitch() {
        var registry = SessionRegistry<CamoConnection?>(maxSessions: 4, maxPendingHandshakes: 4)
        #expect(Self.state(registry, running: false, paused: false) == nil)
        #expect(Self.state(registry, running: true, paused: false) == .notConnected)
        // A session admitted but without its connection yet does not count.
        _ = registry.admit(nil)
        #expect(Self.state(registry, running: true, paused: false) == .notConnected)
        let first = Self.connection("first", pausedByStudio: true)
        let second = Self.connection("second")
        _ = registry.admit(first)
        _ = registry.admit(second)
        #expect(Self.state(registry, running: true, paused: false) == .paused(first), "the primary studio paused itself")
        registry.remove { $0?.name == "first" }
        #expect(Self.state(registry, running: true, paused: false) == .active(second))
        #expect(Self.state(registry, running: true, paused: true) == .paused(second), "the privacy switch pauses everyone")
    }
}
