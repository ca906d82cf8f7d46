import ArgumentParser
import CamoDiscovery
import CamoQR
import CamoStorage
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
            // The secret is in the image and the text: owner-only, like every state file.
            if let png { try AtomicFile.write(code.pngData(), to: png, permissions: 0o600) }
        } catch {
            FileHandle.standardError.write(Data("camo-studio: cannot draw the QR code: \(error)\n".utf8))
            throw ExitCode.failure
        }
        print(text)
        if let payloadFile { try AtomicFile.write(Array((text + "\n").utf8), to: payloadFile, permissions: 0o600) }
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

    /// Waits for the agent's pairing window and pairs. A service that does not answer, refuses, or fails the
    /// handshake does not end the wait: another (a live record after a stale one, the real agent beside a
    /// fake service naming this studio) may still come. At the code's expiry the last failure is reported.
    private func pairWhenReady(
        payload: PairingPayload, identity: StudioIdentity, studioName: String, deadline: Date, logger: Logger
    ) async throws -> PairedAgent {
        var lastFailure: Error?
        func attempt(_ address: HostPort) async -> PairedAgent? {
            do {
                return try await StudioPairing.pair(
                    host: address.host, port: address.port, payload: payload, identity: identity, studioName: studioName, logger: logger)
            } catch {
                if case .connectFailed = error {} else {
                    FileHandle.standardError.write(Data("Pairing at \(address) failed: \(error); still waiting.\n".utf8))
                }
                lastFailure = error
                return nil
            }
        }
        if let connect, let address = HostPort(parsing: connect) {
            // No mDNS: the window may not be open yet, so the address is tried again until the code expires.
            while Date() < deadline {
                if let agent = await attempt(address) { return agent }
                try await Task.sleep(for: .milliseconds(250))
            }
            throw lastFailure ?? StudioClientError.handshakeTimeout
        }
        let browser = AvahiBrowser(type: CamoServiceType.pairing, logger: logger)
        try browser.start()
        defer { browser.stop() }
        // When each address may be tried again: a refused connection (a record a closed window left in the
        // mDNS cache) after a second, so a window reopened on the same port is found; a refusal or a failed
        // handshake after five.
        var retryAt: [String: Date] = [:]
        while Date() < deadline {
            for service in browser.discovered where service.txt["studio"] == identity.id {
                for address in AgentLookup.addresses(of: service) {
                    let key = "\(service.name) \(address)"
                    if let next = retryAt[key], Date() < next { continue }
                    if let agent = await attempt(address) { return agent }
                    let connectFailed = if case .connectFailed? = lastFailure as? StudioClientError { true } else { false }
                    retryAt[key] = Date().addingTimeInterval(connectFailed ? 1 : 5)
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw lastFailure ?? StudioClientError.handshakeTimeout
    }
}

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
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
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
