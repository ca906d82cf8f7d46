import ArgumentParser
import CamoDiscovery
import CamoQR
import CamoStudioKit
import CamoWire
import CamoCommandLine
import Foundation
import Logging

/// `camo-studio pair`: makes a pairing code, shows it as a QR code, waits for the agent's pairing window
/// (`_camopairing._tcp` naming this studio), pairs, and stores the agent.
struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pair with an agent: shows a QR code to hold up to the agent's camera (or a code to paste into `camo-agent pair`).",
        discussion: """
            Prints the QR code (Unicode half blocks) and the code as text, then waits until the agent opens its \
            pairing window for this studio (found with mDNS as _camopairing._tcp, or at --connect HOST:PORT), \
            runs Noise XXpsk3 with the code's secret, and stores the agent's key. Exit status 0 when paired.
            """)

    @Option(help: "The studio name the agent stores (default: this machine's host name).") var name: String?
    @Option(help: "Write the code (one line of text) to this file.") var payloadFile: String?
    @Option(help: "Write the QR code as a PNG image to this file.") var png: String?
    @Option(help: "Seconds the code stays valid (at most 600).") var lifetime: Int = 300
    @Option(help: "The agent's pairing port as HOST:PORT, instead of finding it with mDNS.") var connect: String?
    @Flag(help: "Do not print the QR code in the terminal (the code text is still printed).") var noQR = false
    @OptionGroup var state: StudioStateOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard (10...Int(PairingPayload.maxLifetime)).contains(lifetime) else { throw ValidationError("--lifetime must be 10...600 seconds") }
        if let connect, HostPort(parsing: connect) == nil { throw ValidationError("--connect must be HOST:PORT, got '\(connect)'") }
        if let name { guard !name.isEmpty, name.utf8.count <= PairingPayload.maxNameBytes else { throw ValidationError("--name must be 1...64 bytes") } }
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        let studio = try state.open(logger: logger)
        let studioName = String((name ?? ProcessInfo.processInfo.hostName).utf8.prefix(PairingPayload.maxNameBytes)) ?? "camo-studio"
        let now = UInt64(Date().timeIntervalSince1970)
        let payload = PairingPayload.generate(studioId: studio.identity.id, studioName: studioName, lifetime: UInt64(lifetime), now: now)
        let text = payload.uri
        do {
            let code = try QRCode(text)
            if !noQR { print(code.terminalText()) }
            if let png { try Data(code.pngData()).write(to: URL(fileURLWithPath: png)) }
        } catch {
            FileHandle.standardError.write(Data("camo-studio: cannot draw the QR code: \(error)\n".utf8))
            throw ExitCode.failure
        }
        print(text)
        if let payloadFile { try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: payloadFile)) }
        FileHandle.standardError.write(Data("Hold this code up to the agent's camera (camo-agent pair --scan), or run `camo-agent pair` with it. Waiting up to \(lifetime) s...\n".utf8))

        let deadline = Date().addingTimeInterval(Double(lifetime))
        let agent: PairedAgent
        do {
            agent = try await pairWhenReady(payload: payload, identity: studio.identity, studioName: studioName, deadline: deadline, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: not paired: \(error)\n".utf8))
            throw ExitCode.failure
        }
        try studio.add(agent)
        print("Paired with agent \(agent.name) (\(agent.id)).")
    }

    /// Waits for the agent's pairing window and pairs.
    private func pairWhenReady(
        payload: PairingPayload, identity: StudioIdentity, studioName: String, deadline: Date, logger: Logger
    ) async throws -> PairedAgent {
        if let connect, let address = HostPort(parsing: connect) {
            // No mDNS: the window may not be open yet, so a refused TCP connection is retried.
            while true {
                do {
                    return try await StudioPairing.pair(
                        host: address.host, port: address.port, payload: payload, identity: identity, studioName: studioName, logger: logger)
                } catch StudioClientError.connectFailed(let why) {
                    guard Date() < deadline else { throw StudioClientError.connectFailed("no pairing window opened at \(address) before the code expired (\(why))") }
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
        }
        let browser = AvahiBrowser(type: CamoServiceType.pairing, logger: logger)
        try browser.start()
        defer { browser.stop() }
        var tried: Set<String> = []
        while Date() < deadline {
            for service in browser.discovered where service.txt["studio"] == identity.id {
                let key = "\(service.name) \(service.port)"
                guard !tried.contains(key) else { continue }
                tried.insert(key)
                for address in AgentLookup.addresses(of: service) {
                    do {
                        return try await StudioPairing.pair(
                            host: address.host, port: address.port, payload: payload, identity: identity, studioName: studioName, logger: logger)
                    } catch StudioClientError.connectFailed(let why) {
                        // A record a closed window left in the mDNS cache a moment ago: wait for a live one.
                        logger.info("The pairing service did not answer; waiting for another", metadata: ["address": "\(address)", "error": "\(why)"])
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StudioClientError.handshakeTimeout
    }
}

/// `camo-studio agents`: the agents mDNS finds, marking the paired ones.
struct Agents: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the agents on the network (_camo._tcp), marking paired ones.")
    @Option(help: "Seconds to listen.") var seconds: Double = 2
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var state: StudioStateOptions
    @OptionGroup var logging: LoggingOptions

    struct Row: Codable {
        var id: String
        var name: String
        var addresses: [String]
        var port: Int
        var version: String?
        var paired: Bool
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        let studio = try state.open(logger: logger)
        let services: [DiscoveredService]
        do {
            services = try await AgentLookup.agents(seconds: seconds, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
        let paired = Set(studio.pairedAgents.map(\.id))
        let rows = services.map { service in
            Row(id: service.txt["id"] ?? "?", name: service.name, addresses: service.addresses, port: service.port,
                version: service.txt["sw"], paired: paired.contains(service.txt["id"] ?? ""))
        }.sorted { $0.name < $1.name }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            return
        }
        var table = [["ID", "NAME", "ADDRESS", "PORT", "PAIRED"]]
        for row in rows { table.append([row.id, row.name, row.addresses.joined(separator: ","), "\(row.port)", row.paired ? "yes" : "no"]) }
        print(TextTable.render(table))
    }
}
