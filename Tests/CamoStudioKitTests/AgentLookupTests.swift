import CamoDiscovery
import CamoStudioKit
import Testing

@Suite("Agent lookup: records from services, matching, and waiting for an agent (without avahi-daemon)")
struct AgentLookupTests {
    private func service(_ name: String, addresses: [String], port: Int = 7000, txt: [String: String] = [:], interface: Int = 2) -> DiscoveredService {
        DiscoveredService(name: name, type: CamoServiceType.agent, domain: "local", hostName: "agent.local",
                          addresses: addresses, port: port, txt: txt, interfaceIndex: interface)
    }

    @Test("A record keeps what the studio needs of a service")
    func record() {
        let record = AgentLookup.record(service("Desk", addresses: ["192.0.2.1", "fe80::1"], port: 7001, txt: ["id": "a"], interface: 3))
        #expect(record == AgentRecord(name: "Desk", addresses: ["192.0.2.1", "fe80::1"], port: 7001, txt: ["id": "a"], interfaceIndex: 3))
    }

    @Test("A service's addresses: IPv4 first, each in the order seen, with the service's port")
    func addresses() {
        let addresses = AgentLookup.addresses(of: service("Desk", addresses: ["2001:db8::1", "192.0.2.1", "fe80::2", "198.51.100.1"], port: 7002))
        #expect(addresses.map(\.description) == ["192.0.2.1:7002", "198.51.100.1:7002", "[2001:db8::1]:7002", "[fe80::2]:7002"])
    }

    @Test("Matching by id takes every record of that agent, the cable first, and no other agent")
    func matchingById() {
        let records = [
            Records.agent("a", addresses: ["192.0.2.1"]),
            Records.agent("a", usb: true, addresses: ["10.55.0.1"]),
            Records.agent("b", name: "Other", addresses: ["192.0.2.2"]),
        ]
        let routes = AgentLookup.matching(records, agentId: "a", name: "ignored")
        #expect(routes.count == 1)
        #expect(routes.first?.candidates.map(\.description) == ["10.55.0.1:7000", "192.0.2.1:7000"])
        #expect(routes.first?.link == .usbAndNetwork)
        #expect(AgentLookup.matching(records, agentId: "c", name: "Desk").isEmpty)
    }

    @Test("Matching without an id takes the agent by service name or by TXT id")
    func matchingByName() {
        let records = [
            Records.agent("a", name: "Desk", addresses: ["192.0.2.1"]),
            Records.agent("b", name: "Other", addresses: ["192.0.2.2"]),
        ]
        #expect(AgentLookup.matching(records, agentId: nil, name: "Desk").map(\.id) == ["a"])
        #expect(AgentLookup.matching(records, agentId: nil, name: "b").map(\.id) == ["b"])
        #expect(AgentLookup.matching(records, agentId: nil, name: "Nobody").isEmpty)
    }

    @Test("Finding waits for the agent's other records, so the cable seen a moment later is chosen")
    func findSettles() async throws {
        let clock = VirtualClock()
        let source = FakeRecordSource(clock: clock) { time in
            var records = [Records.agent("a", addresses: ["192.0.2.1"])]
            if time >= .milliseconds(100) { records.append(Records.agent("a", usb: true, addresses: ["10.55.0.1"])) }
            return records
        }
        let found = try await AgentLookup.find(in: source, agentId: "a", name: "Desk", seconds: 5, clock: clock) { _ in true }
        #expect(found?.1 == HostPort(host: "10.55.0.1", port: 7000))
        #expect(found?.0.link == .usbAndNetwork)
        #expect(clock.elapsed == AgentLookup.settleTime)
        #expect(source.startCount == 1 && source.stopCount == 1)
    }

    @Test("Finding skips an address that does not answer (a stale record) for the next one")
    func findSkipsDeadAddress() async throws {
        let clock = VirtualClock()
        let source = FakeRecordSource(clock: clock, records: [
            Records.agent("a", addresses: ["192.0.2.1"]), Records.agent("a", usb: true, addresses: ["10.55.0.1"]),
        ])
        let found = try await AgentLookup.find(in: source, agentId: "a", name: "Desk", seconds: 5, clock: clock) {
            $0.host != "10.55.0.1"
        }
        #expect(found?.1 == HostPort(host: "192.0.2.1", port: 7000))
    }

    @Test("Finding gives up after its seconds when the agent does not answer")
    func findTimesOut() async throws {
        let clock = VirtualClock()
        let source = FakeRecordSource(clock: clock, records: [Records.agent("a", addresses: ["192.0.2.1"])])
        let found = try await AgentLookup.find(in: source, agentId: "a", name: "Desk", seconds: 2, clock: clock) { _ in false }
        #expect(found == nil)
        #expect(clock.elapsed >= .seconds(2))
        #expect(clock.elapsed < .seconds(2) + AgentLookup.pollInterval + AgentLookup.settleTime)
        #expect(source.stopCount == 1)
    }

    @Test("Finding and listing throw when mDNS cannot be used")
    func discoveryErrors() async throws {
        let clock = VirtualClock()
        let broken = FakeRecordSource(clock: clock, startError: .daemonNotRunning) { _ in [] }
        await #expect(throws: DiscoveryError.daemonNotRunning) {
            _ = try await AgentLookup.find(in: broken, agentId: "a", name: "Desk", seconds: 1, clock: clock) { _ in true }
        }
        await #expect(throws: DiscoveryError.daemonNotRunning) {
            _ = try await AgentLookup.agents(in: broken, seconds: 1, clock: clock)
        }
        let gone = FakeRecordSource(clock: clock, records: [Records.agent("a", addresses: ["192.0.2.1"])])
        gone.fail(.daemonGone)
        await #expect(throws: DiscoveryError.daemonGone) {
            _ = try await AgentLookup.agents(in: gone, seconds: 1, clock: clock)
        }
    }

    @Test("Listing shows each agent once after listening for its seconds")
    func agents() async throws {
        let clock = VirtualClock()
        let source = FakeRecordSource(clock: clock, records: [
            Records.agent("b", name: "Zed", addresses: ["192.0.2.2"]),
            Records.agent("a", name: "Desk", addresses: ["192.0.2.1"]),
            Records.agent("a", name: "Desk", usb: true, addresses: ["10.55.0.1"]),
        ])
        let routes = try await AgentLookup.agents(in: source, seconds: 1.5, clock: clock)
        #expect(routes.map(\.name) == ["Desk", "Zed"])
        #expect(routes.first?.link == .usbAndNetwork)
        #expect(clock.elapsed == .milliseconds(1500))
        #expect(source.stopCount == 1)
    }
}
