import CamoDiscovery
import CamoUSB
import Dispatch
import Logging
import Synchronization

/// The default ``CamoAdvertiser``: publishes through avahi-daemon with an ``AvahiPublisher``.
///
/// Avahi trouble never stops the controller: with no daemon the publisher waits for one (and publishes again
/// after a daemon restart), and sessions by address work meanwhile. While the controller runs, it tells the
/// publisher once a second which interfaces are USB gadget links, so `_camo._tcp` carries `link=usb` on them.
public final class AvahiAdvertiser: CamoAdvertiser {
    /// `@unchecked Sendable`: a Dispatch timer is thread-safe to resume and cancel from any thread.
    private struct Timer: @unchecked Sendable {
        let source: any DispatchSourceTimer
    }

    private struct State {
        var usbWatch: Timer?
    }

    /// The publisher; its ``AvahiPublisher/status`` and ``AvahiPublisher/statusUpdates()`` say whether the
    /// services are announced.
    public let publisher: AvahiPublisher
    private let logger: Logger
    private let state = Mutex(State())

    /// An advertiser that publishes under `name`.
    public init(name: String, logger: Logger) {
        publisher = AvahiPublisher(name: name, logger: logger)
        self.logger = logger
    }

    deinit {
        state.withLock { $0.usbWatch?.source.cancel() }
    }

    public func controllerStarted(port: Int, txt: [(String, String)]) {
        do {
            try publisher.setAgentService(port: port, txt: txt)
            try publisher.start()
        } catch {
            logger.warning(
                "mDNS publishing is off: studios must connect by this machine's address and port \(port)",
                metadata: ["error": "\(error)"])
            publisher.stop()
            return
        }
        let classifier = LinkClassifier()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "camo.advertiser.usb-links"))
        timer.schedule(deadline: .now(), repeating: .seconds(1), leeway: .milliseconds(100))
        timer.setEventHandler { [publisher] in
            let interfaces = classifier.interfaces()
            publisher.setUSBInterfaces(
                interfaces.filter(\.isGadget).map { Int32($0.index) }, allInterfaces: interfaces.map { Int32($0.index) })
        }
        let box = Timer(source: timer)
        let previous = state.withLock { state in
            defer { state.usbWatch = box }
            return state.usbWatch
        }
        previous?.source.cancel()
        timer.resume()
    }

    public func controllerStopped() {
        let timer = state.withLock { state in
            defer { state.usbWatch = nil }
            return state.usbWatch
        }
        timer?.source.cancel()
        publisher.removePairingService()
        publisher.removeAgentService()
        publisher.stop()
    }

    public func pairingWindowOpened(port: Int, txt: [(String, String)]) {
        do {
            try publisher.setPairingService(port: port, txt: txt)
        } catch {
            logger.warning(
                "Could not publish _camopairing._tcp; the studio must connect to the pairing port directly",
                metadata: ["port": "\(port)", "error": "\(error)"])
        }
    }

    public func pairingWindowClosed() {
        publisher.removePairingService()
    }
}
