import CamoDiscovery
import CamoStudioKit
import Logging
import Synchronization
import Testing

@Suite("Agent candidates for reconnecting: mDNS's view each round, else the addresses last known")
struct AgentCandidatesTests {
    private let logger = Logger(label: "test.candidates")
    private let known = [HostPort(host: "192.0.2.9", port: 7000)]
    private let usb = Records.agent("a", usb: true, addresses: ["10.55.0.1", "fe80::1%4"])
    private let network = Records.agent("a", addresses: ["2001:db8::1", "192.0.2.1"])

    /// The sources an ``AgentCandidates`` made.
    private final class Made: Sendable {
        private let sources = Mutex<[FakeRecordSource]>([])
        func add(_ source: FakeRecordSource) { sources.withLock { $0.append(source) } }
        var all: [FakeRecordSource] { sources.withLock { $0 } }
    }

    /// Candidates over sources made by `make`, with the sources made.
    private func candidates(clock: VirtualClock, _ make: @escaping @Sendable () -> FakeRecordSource) -> (AgentCandidates, Made) {
        let made = Made()
        let candidates = AgentCandidates(agentId: "a", known: known, logger: logger, clock: clock) {
            let source = make()
            made.add(source)
            return source
        }
        return (candidates, made)
    }

    @Test("The cable first, then the network; IPv4 before IPv6 within each")
    func ordering() async {
        let clock = VirtualClock()
        let (lookup, _) = candidates(clock: clock) { [usb, network] in FakeRecordSource(clock: clock, records: [network, usb]) }
        let found = await lookup.candidates()
        #expect(found.map(\.description) == ["10.55.0.1:7000", "[fe80::1%4]:7000", "192.0.2.1:7000", "[2001:db8::1]:7000"])
        // A fresh browser: the agent's other records got their moment.
        #expect(clock.elapsed == AgentCandidates.settleTime)
    }

    @Test("A record that comes during the settling moment is included")
    func lateRecord() async {
        let clock = VirtualClock()
        let (lookup, _) = candidates(clock: clock) { [usb, network] in
            FakeRecordSource(clock: clock) { time in time >= .milliseconds(100) ? [network, usb] : [network] }
        }
        #expect(await lookup.candidates().first == HostPort(host: "10.55.0.1", port: 7000))
    }

    @Test("Without mDNS the addresses last known are used, and mDNS is tried again next round")
    func noDiscovery() async {
        let clock = VirtualClock()
        let (lookup, made) = candidates(clock: clock) { FakeRecordSource(clock: clock, startError: .daemonNotRunning) { _ in [] } }
        #expect(await lookup.candidates() == known)
        #expect(await lookup.candidates() == known)
        #expect(made.all.count == 2)
        #expect(clock.elapsed == .zero)
    }

    @Test("When the agent's records go, its addresses last seen on mDNS are used")
    func lastKnownFollowsDiscovery() async {
        let clock = VirtualClock()
        let (lookup, made) = candidates(clock: clock) { [network] in
            // Shown for a moment only: gone before the settling moment ends.
            FakeRecordSource(clock: clock) { time in time < .milliseconds(100) ? [network] : [] }
        }
        let first = await lookup.candidates()
        #expect(first.map(\.description) == ["192.0.2.1:7000", "[2001:db8::1]:7000"])
        let start = clock.elapsed
        #expect(await lookup.candidates() == first)
        // A running browser gets the shorter wait, and is kept.
        #expect(clock.elapsed - start >= AgentCandidates.runningWait)
        #expect(clock.elapsed - start < AgentCandidates.runningWait + AgentCandidates.pollInterval)
        #expect(made.all.count == 1)
    }

    @Test("A fresh browser that shows nothing within its wait gives the known addresses")
    func freshWaitEnds() async {
        let clock = VirtualClock()
        let (lookup, _) = candidates(clock: clock) { [usb] in
            FakeRecordSource(clock: clock) { time in time > AgentCandidates.freshWait ? [usb] : [] }
        }
        #expect(await lookup.candidates() == known)
        #expect(clock.elapsed >= AgentCandidates.freshWait)
    }

    @Test("A browser that failed is stopped and replaced; stop() stops the running one")
    func failedBrowserReplaced() async throws {
        let clock = VirtualClock()
        let (lookup, made) = candidates(clock: clock) { [network] in FakeRecordSource(clock: clock, records: [network]) }
        _ = await lookup.candidates()
        let first = try #require(made.all.first)
        first.fail(.daemonGone)
        _ = await lookup.candidates()
        let sources = made.all
        #expect(sources.count == 2)
        #expect(first.stopCount == 1)
        lookup.stop()
        #expect(sources.last?.stopCount == 1)
        lookup.stop()
        #expect(sources.last?.stopCount == 1)
    }
}
