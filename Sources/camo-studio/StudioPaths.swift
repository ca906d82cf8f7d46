import ArgumentParser
import CamoDiscovery
import CamoStudioKit
import Foundation
import Logging

/// `--state-dir`: where the studio keeps its identity and its paired agents.
struct StudioStateOptions: ParsableArguments {
    @Option(name: .long, help: "The studio's state directory (its key and paired agents).")
    var stateDir: String = StudioStateOptions.defaultDirectory()

    /// `/var/lib/camo-studio` for root, else `$XDG_STATE_HOME/camo-studio` or `~/.local/state/camo-studio`.
    static func defaultDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if getuid() == 0 { return "/var/lib/camo-studio" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/camo-studio" }
        return NSHomeDirectory() + "/.local/state/camo-studio"
    }

    func open(logger: Logger) throws -> StudioState {
        do {
            return try StudioState(directory: stateDir, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: cannot use the state directory \(stateDir): \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// Finding agents with mDNS.
enum AgentLookup {
    /// The `_camo._tcp` services seen within `seconds`.
    static func agents(seconds: Double, logger: Logger) async throws -> [DiscoveredService] {
        try await AvahiBrowser.browse(type: CamoServiceType.agent, for: .milliseconds(Int(seconds * 1000)), logger: logger)
    }

    /// The address to reach `service` at: IPv4 first (link-local IPv6 needs a zone), then the others.
    static func addresses(of service: DiscoveredService) -> [HostPort] {
        let ordered = service.addresses.filter { !$0.contains(":") } + service.addresses.filter { $0.contains(":") }
        return ordered.map { HostPort(host: $0, port: service.port) }
    }

    /// Waits up to `seconds` for an agent whose TXT id is `agentId` (or, when `agentId` is nil, whose service
    /// name is `name`) at an address that accepts connections: a record an agent left a moment ago (a
    /// restart) is skipped until the fresh one arrives.
    static func find(agentId: String?, name: String, seconds: Double, logger: Logger) async throws -> (DiscoveredService, HostPort)? {
        let browser = AvahiBrowser(type: CamoServiceType.agent, logger: logger)
        try browser.start()
        defer { browser.stop() }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let matches = browser.discovered.filter { service in
                if let agentId { return service.txt["id"] == agentId }
                return service.name == name || service.txt["id"] == name
            }
            for service in matches {
                for address in addresses(of: service) where await address.acceptsConnections() {
                    return (service, address)
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
