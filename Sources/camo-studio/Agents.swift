import ArgumentParser
import CamoCommandLine
import CamoStudioKit
import Foundation
import Logging

/// `camo-studio agents`: the agents mDNS finds, once each however many links they are seen on, marking the
/// paired ones and how each can be reached.
struct Agents: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the agents on the network (_camo._tcp), marking paired ones.",
        discussion: """
            Each agent is listed once. LINK says how it can be reached: usb (its USB network-gadget link, TXT \
            link=usb), network, or usb+network (`record --agent` then prefers the cable). ADDRESS lists the addresses \
            in the order the studio tries them: USB first, IPv4 before IPv6.
            """)
    @Option(help: "Seconds to listen.") var seconds: Double = 2
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var state: StudioStateOptions
    @OptionGroup var logging: LoggingOptions

    struct Row: Codable {
        var id: String
        var name: String
        /// `usb`, `network` or `usb+network`.
        var link: String
        /// Hosts in the order the studio tries them (USB first; IPv4 before IPv6).
        var addresses: [String]
        /// The port of the first address.
        var port: Int
        /// Every address as HOST:PORT, in the same order.
        var endpoints: [String]
        var version: String?
        var paired: Bool
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        let studio = try state.open(logger: logger)
        let routes: [AgentRoute]
        do {
            routes = try await AgentLookup.agents(seconds: seconds, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\(connectHint(error))\n".utf8))
            throw ExitCode.failure
        }
        let paired = Set(studio.pairedAgents.map(\.id))
        let rows = routes.map { route in
            let candidates = route.candidates
            return Row(id: route.id ?? "?", name: route.name, link: route.link.rawValue, addresses: candidates.map(\.host),
                       port: candidates.first?.port ?? 0, endpoints: candidates.map(\.description),
                       version: route.txt["sw"], paired: route.id.map(paired.contains) ?? false)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            return
        }
        var table = [["ID", "NAME", "LINK", "ADDRESS", "PORT", "PAIRED"]]
        for row in rows {
            let ports = Set(row.endpoints.compactMap { HostPort(parsing: $0)?.port })
            table.append([row.id, row.name, row.link, row.addresses.joined(separator: ","),
                          ports.count > 1 ? ports.sorted().map(String.init).joined(separator: ",") : "\(row.port)",
                          row.paired ? "yes" : "no"])
        }
        print(TextTable.render(table))
    }
}
