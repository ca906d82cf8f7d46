import CamoSystem
import Dispatch
import Foundation
import Logging
import Synchronization

/// Keeps the agent's end of the USB cable moving: samples every gadget interface's carrier and packet counters
/// ten times a second and sends a ``GadgetLinkNudge`` when ``GadgetStallDetector`` finds the kernel's f_ncm stuck.
///
/// Which interfaces are gadgets is looked up once a second (a listing of `/sys/class/net` and a `uevent` read per
/// interface); the counters are read only while there is one (four small sysfs reads per gadget interface).
public final class GadgetLinkWatch: Sendable {
    /// Sends a nudge out of an interface; returns 0 or an errno.
    public typealias Sender = @Sendable (_ interface: String) -> Int32

    private struct State {
        var detector: GadgetStallDetector
        var gadgets: [String] = []
        var gadgetsListedAt: UInt64?
        /// Interfaces whose last nudge failed (warned once until one succeeds).
        var failing: Set<String> = []
        /// When each interface's last nudge for unanswered frames was logged at info (the rest go to debug).
        var loggedAt: [String: UInt64] = [:]
    }

    private let classifier: LinkClassifier
    private let send: Sender
    private let logger: Logger
    private let queue = DispatchQueue(label: "camo.gadget-link-watch")
    private let state: Mutex<State>
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    /// A watch over the gadget interfaces `classifier` finds, nudging with `send`.
    public init(classifier: LinkClassifier = LinkClassifier(), detector: GadgetStallDetector = GadgetStallDetector(),
                logger: Logger, send: @escaping Sender = GadgetLinkNudge.send(interface:)) {
        self.classifier = classifier
        self.state = Mutex(State(detector: detector))
        self.logger = logger
        self.send = send
    }

    deinit {
        timer.withLock { $0?.cancel() }
    }

    /// Starts sampling every `interval`.
    public func start(interval: DispatchTimeInterval = .milliseconds(100)) {
        timer.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(20))
            source.setEventHandler { [weak self] in
                self?.sample(now: DispatchTime.now().uptimeNanoseconds)
            }
            source.resume()
            timer = source
        }
    }

    /// Stops sampling.
    public func stop() {
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }

    /// Takes one sample at `now` (nanoseconds, monotonic) and sends the nudges due; returns them.
    @discardableResult
    public func sample(now: UInt64) -> [(interface: String, reason: GadgetStallDetector.Reason)] {
        state.withLock { state in
            if state.gadgetsListedAt.map({ now >= $0 + 1_000_000_000 || now < $0 }) ?? true {
                state.gadgets = classifier.gadgetInterfaces()
                state.gadgetsListedAt = now
            }
            var readings: [String: GadgetStallDetector.Reading] = [:]
            for name in state.gadgets {
                readings[name] = reading(name)
            }
            let due = state.detector.observe(readings, now: now)
            for (interface, reason) in due {
                let error = send(interface)
                guard error == 0 else {
                    if state.failing.insert(interface).inserted {
                        logger.warning(
                            "Could not nudge the USB link; if studios cannot connect over the cable, pull it and plug it in again",
                            metadata: ["interface": "\(interface)", "error": "\(SystemCallError.message(error))"])
                    }
                    continue
                }
                state.failing.remove(interface)
                switch reason {
                case .carrierUp:
                    logger.debug("USB link up; sent a nudge in case the kernel kept a transfer block", metadata: ["interface": "\(interface)"])
                case .unanswered:
                    // At info at most once a minute per interface: one-way chatter can make a nudge every 500 ms.
                    let quiet = state.loggedAt[interface].map { now < $0 + 60_000_000_000 && now >= $0 } ?? false
                    if !quiet { state.loggedAt[interface] = now }
                    logger.log(
                        level: quiet ? .debug : .info,
                        "The USB link stopped sending (the kernel's f_ncm stranded a transfer block); nudged it",
                        metadata: ["interface": "\(interface)", "why": "\(reason)"])
                }
            }
            return due
        }
    }

    /// The carrier and counters of `name`; the carrier reads as down when sysfs refuses it (an interface that is
    /// administratively down).
    private func reading(_ name: String) -> GadgetStallDetector.Reading {
        let base = classifier.netClass + "/" + name + "/"
        func number(_ file: String) -> UInt64 {
            classifier.filesystem.read(base + file).flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        }
        return GadgetStallDetector.Reading(
            carrier: classifier.filesystem.read(base + "carrier") == "1", carrierUps: number("carrier_up_count"),
            receivedPackets: number("statistics/rx_packets"), sentPackets: number("statistics/tx_packets"))
    }
}
