import ArgumentParser
import CamoQR
import CamoStorage
import CamoStudioKit
import CamoWire
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

        let agent: PairedAgent
        do {
            agent = try await PairingRetry.pairWhenReady(
                payload: payload, identity: studio.identity, studioName: studioName, connect: connect.flatMap(HostPort.init(parsing:)),
                lifetime: .seconds(lifetime), logger: logger
            ) { address, error in
                FileHandle.standardError.write(Data("Pairing at \(address) failed: \(error); still waiting.\n".utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("camo-studio: not paired: \(error)\(connectHint(error, command: "pair"))\n".utf8))
            throw ExitCode.failure
        }
        try studio.add(agent)
        print("Paired with agent \(agent.name) (\(agent.id)).")
    }
}
