import CamoDiscovery
import CamoMedia
import CamoProducerKit
import CamoQR
import CamoUSB
import CamoWire
import Dispatch
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
        watchUSBLinks(publisher)
        return publisher
    }

    /// Once a second, tells the publisher which interfaces are USB gadget links (it then adds `link=usb` on them).
    /// The timer lives as long as the process (the publisher is stopped only when the agent exits).
    private static func watchUSBLinks(_ publisher: AvahiPublisher) {
        let classifier = LinkClassifier()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "camo.usb-links"))
        timer.schedule(deadline: .now(), repeating: .seconds(1), leeway: .milliseconds(100))
        timer.setEventHandler {
            let interfaces = classifier.interfaces()
            publisher.setUSBInterfaces(
                interfaces.filter(\.isGadget).map { Int32($0.index) }, allInterfaces: interfaces.map { Int32($0.index) })
        }
        timer.resume()
        usbWatch = timer
    }

    /// Written once, at start, before any other thread looks at it.
    nonisolated(unsafe) private static var usbWatch: (any DispatchSourceTimer)?

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
