import CamoDiscovery
import CamoMedia
import CamoProducerKit
import CamoQR
import CamoWire
import Logging

/// Wires the Avahi publisher to the controller: `_camo._tcp` while the agent runs, `_camopairing._tcp` while a
/// pairing window is open. Avahi trouble never stops the agent: sessions and `--connect` work without it.
enum Advertisement {
    /// Starts publishing; nil when the publisher cannot even start (logged).
    static func start(
        name: String, port: Int, identity: AgentIdentity, description: AgentDescription, controller: CamoController,
        logger: Logger
    ) -> AvahiPublisher? {
        let publisher = AvahiPublisher(name: name, logger: logger)
        do {
            try publisher.start()
            try publisher.setAgentService(port: port, txt: [
                ("v", "\(WireLimits.versionMajor)"), ("id", identity.id), ("name", name),
                ("model", description.model), ("sw", description.softwareVersion),
            ])
        } catch {
            logger.warning(
                "mDNS publishing is off: studios must connect with --connect HOST:PORT", metadata: ["error": "\(error)"])
            publisher.stop()
            return nil
        }
        controller.advertiser = PairingPublication(publisher: publisher, agentId: identity.id, logger: logger)
        return publisher
    }

    /// Finds the QR codes in a frame with libzbar (for `pair --scan`).
    static let qrDecoder: @Sendable (VideoFrame) -> [String] = { frame in
        QRScanner().scan(frame)
    }
}

/// Publishes `_camopairing._tcp` for the controller's pairing window.
struct PairingPublication: PairingAdvertiser {
    let publisher: AvahiPublisher
    let agentId: String
    let logger: Logger

    func pairingWindowOpened(port: Int, studioId: String) {
        do {
            try publisher.setPairingService(port: port, txt: [("v", "\(WireLimits.versionMajor)"), ("id", agentId), ("studio", studioId)])
        } catch {
            logger.warning("Could not publish _camopairing._tcp; the studio must connect to the pairing port directly", metadata: ["port": "\(port)", "error": "\(error)"])
        }
    }

    func pairingWindowClosed() {
        publisher.removePairingService()
    }
}
