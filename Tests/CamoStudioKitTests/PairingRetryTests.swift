import CamoDiscovery
import CamoStudioKit
import Foundation
import Testing

@Suite("Pairing retry: what is tried, how often, and what is reported (a fake attempt, a virtual clock)")
struct PairingRetryTests {
    private let agent = PairedAgent(id: "agent-1", name: "Desk", publicKey: Array(repeating: 7, count: 32), pairedAt: Date(timeIntervalSince1970: 0))
    private let address = HostPort(host: "192.0.2.1", port: 7100)

    private func window(_ name: String, studio: String, addresses: [String], port: Int = 7100) -> DiscoveredService {
        DiscoveredService(name: name, type: CamoServiceType.pairing, domain: "local", hostName: "agent.local",
                          addresses: addresses, port: port, txt: ["studio": studio], interfaceIndex: 2)
    }

    @Test("An address given directly is tried every 250 ms until the window opens; refused connections are not reported")
    func directUntilOpen() async throws {
        let clock = VirtualClock()
        var tries: [Duration] = []
        var reported = 0
        let paired = try await PairingRetry.pair(at: address, within: .seconds(10), clock: clock, attempt: { (_: HostPort) async throws(StudioClientError) -> PairedAgent in
            tries.append(clock.elapsed)
            if tries.count < 4 { throw .connectFailed("refused") }
            return agent
        }, onFailure: { _, _ in reported += 1 })
        #expect(paired == agent)
        #expect(tries == [.zero, .milliseconds(250), .milliseconds(500), .milliseconds(750)])
        #expect(reported == 0)
    }

    @Test("When the code expires, the last failure is thrown; refusals are reported with their address")
    func directExpires() async {
        let clock = VirtualClock()
        var tries = 0
        var reported: [String] = []
        await #expect(throws: StudioClientError.agentRefused(code: 3, reason: "closed")) {
            _ = try await PairingRetry.pair(at: address, within: .seconds(1), clock: clock, attempt: { (_: HostPort) async throws(StudioClientError) -> PairedAgent in
                tries += 1
                throw .agentRefused(code: 3, reason: "closed")
            }, onFailure: { address, _ in reported.append(address.description) })
        }
        #expect(tries == 4)
        #expect(reported == Array(repeating: "192.0.2.1:7100", count: 4))
        #expect(clock.elapsed == .seconds(1))
    }

    @Test("Nothing tried: a handshake timeout")
    func nothingTried() async {
        let clock = VirtualClock()
        await #expect(throws: StudioClientError.handshakeTimeout) {
            _ = try await PairingRetry.pair(studioId: "me", services: { [] }, within: .seconds(2), clock: clock,
                                            attempt: { (_: HostPort) async throws(StudioClientError) -> PairedAgent in agent })
        }
        #expect(clock.elapsed == .seconds(2))
    }

    @Test("Only windows naming this studio are tried, IPv4 first")
    func onlyThisStudio() async throws {
        let clock = VirtualClock()
        var tried: [String] = []
        let services = [
            window("Other", studio: "someone-else", addresses: ["192.0.2.50"]),
            window("Desk", studio: "me", addresses: ["2001:db8::1", "192.0.2.1"]),
        ]
        let paired = try await PairingRetry.pair(studioId: "me", services: { services }, within: .seconds(5), clock: clock,
                                                 attempt: { (address: HostPort) async throws(StudioClientError) -> PairedAgent in
            tried.append(address.description)
            if address.host.contains(":") { return agent }
            throw .connectFailed("refused")
        })
        #expect(paired == agent)
        #expect(tried == ["192.0.2.1:7100", "[2001:db8::1]:7100"])
    }

    @Test("A failed connection is tried again after a second, a refusal after five; the others meanwhile")
    func retrySchedule() async {
        let clock = VirtualClock()
        var tries: [String: [Duration]] = [:]
        var reported: [String] = []
        let services = [
            window("Stale", studio: "me", addresses: ["192.0.2.1"]),
            window("Fake", studio: "me", addresses: ["192.0.2.2"]),
        ]
        await #expect(throws: StudioClientError.self) {
            _ = try await PairingRetry.pair(studioId: "me", services: { services }, within: .milliseconds(10_500), clock: clock,
                                            attempt: { (address: HostPort) async throws(StudioClientError) -> PairedAgent in
                tries[address.host, default: []].append(clock.elapsed)
                if address.host == "192.0.2.1" { throw .connectFailed("refused") }
                throw .agentRefused(code: 3, reason: "not this studio's code")
            }, onFailure: { address, _ in reported.append(address.host) })
        }
        #expect(tries["192.0.2.1"] == (0...10).map { Duration.seconds($0) })
        #expect(tries["192.0.2.2"] == [.zero, .seconds(5), .seconds(10)])
        #expect(reported == ["192.0.2.2", "192.0.2.2", "192.0.2.2"])
    }

    @Test("A window that appears later is paired with; the failure before it does not end the wait")
    func laterWindow() async throws {
        let clock = VirtualClock()
        let paired = try await PairingRetry.pair(studioId: "me", services: {
            var services = [window("Fake", studio: "me", addresses: ["192.0.2.2"])]
            if clock.elapsed >= .seconds(3) { services.append(window("Desk", studio: "me", addresses: ["192.0.2.1"])) }
            return services
        }, within: .seconds(10), clock: clock, attempt: { (address: HostPort) async throws(StudioClientError) -> PairedAgent in
            if address.host == "192.0.2.1" { return agent }
            throw .sessionEnded(.protocolError(code: 1, reason: "handshake failed"))
        })
        #expect(paired == agent)
        #expect(clock.elapsed == .seconds(3))
    }
}
