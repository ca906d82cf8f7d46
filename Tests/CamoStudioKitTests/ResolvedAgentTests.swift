import CamoStudioKit
import Foundation
import Logging
import Testing

@Suite("Resolving a paired agent for record --agent (mDNS faked)")
struct ResolvedAgentTests {
    private let logger: Logger = {
        var logger = Logger(label: "test.resolve")
        logger.logLevel = .critical   // quiet: the found agent is logged at info
        return logger
    }()
    private let desk = PairedAgent(id: "agent-1", name: "Desk", publicKey: Array(repeating: 1, count: 32), pairedAt: Date(timeIntervalSince1970: 0))

    private func paired(_ idOrName: String) -> PairedAgent? {
        idOrName == desk.id || idOrName == desk.name ? desk : nil
    }

    private var route: AgentRoute {
        let records = [Records.agent("agent-1", name: "Desk cam", usb: true, addresses: ["10.55.0.1"]),
                       Records.agent("agent-1", name: "Desk cam", addresses: ["192.0.2.1"])]
        return AgentRoutes.merge(records)[0]
    }

    @Test("--connect is used as it is, without mDNS")
    func connect() async throws {
        let address = HostPort(host: "192.0.2.7", port: 7000)
        let resolved = try await ResolvedAgent.resolve("Desk", connect: address, paired: paired, logger: logger) { _, _, _ in
            Issue.record("mDNS was asked")
            return nil
        }
        #expect(resolved == ResolvedAgent(agent: desk, address: address, candidates: [address]))
    }

    @Test("Found with mDNS by id: the address that answered, every address the route has")
    func found() async throws {
        var asked: [String] = []
        let route = route
        let resolved = try await ResolvedAgent.resolve("agent-1", connect: nil, paired: paired, logger: logger) { id, name, seconds in
            asked.append("\(id ?? "-") \(name) \(seconds)")
            return (route, route.networkCandidates[0])
        }
        #expect(asked == ["agent-1 Desk 5.0"])
        #expect(resolved.address == HostPort(host: "192.0.2.1", port: 7000))
        #expect(resolved.candidates.map(\.description) == ["10.55.0.1:7000", "192.0.2.1:7000"])
    }

    @Test("A name only mDNS knows is looked up first, then the agent by its id")
    func byServiceName() async throws {
        var asked: [String] = []
        let route = route
        let resolved = try await ResolvedAgent.resolve("Desk cam", connect: nil, paired: paired, logger: logger) { id, name, seconds in
            asked.append("\(id ?? "-") \(name) \(seconds)")
            return (route, route.usbCandidates[0])
        }
        #expect(asked == ["- Desk cam 3.0", "agent-1 Desk 5.0"])
        #expect(resolved.agent == desk)
        #expect(resolved.address == HostPort(host: "10.55.0.1", port: 7000))
    }

    @Test("Not paired; mDNS failing; not found")
    func failures() async {
        await #expect {
            _ = try await ResolvedAgent.resolve("Nobody", connect: HostPort(host: "192.0.2.7", port: 7000), paired: paired, logger: logger) { _, _, _ in nil }
        } throws: { error in
            guard case AgentResolutionError.notPaired("Nobody") = error else { return false }
            return true
        }
        await #expect {
            _ = try await ResolvedAgent.resolve("Nobody", connect: nil, paired: paired, logger: logger) { _, _, _ in nil }
        } throws: { error in
            guard case AgentResolutionError.notPaired = error else { return false }
            return true
        }
        await #expect {
            _ = try await ResolvedAgent.resolve("Desk", connect: nil, paired: paired, logger: logger) { _, _, _ in
                throw CancellationError()
            }
        } throws: { error in
            guard case AgentResolutionError.lookupFailed(let agent, let underlying) = error else { return false }
            return agent == desk && underlying is CancellationError
        }
        await #expect {
            _ = try await ResolvedAgent.resolve("Desk", connect: nil, paired: paired, logger: logger) { _, _, _ in nil }
        } throws: { error in
            guard case AgentResolutionError.notFound(let agent, let seconds) = error else { return false }
            return agent == desk && seconds == 5
        }
    }
}
