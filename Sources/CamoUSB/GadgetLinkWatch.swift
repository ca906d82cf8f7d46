import Dispatch
import Foundation
import Logging

/// Keeps the agent's end of the USB cable moving: samples every gadget interface's carrier and packet counters
/// ten times a second and sends a ``GadgetLinkNudge`` when ``GadgetStallDetector`` finds the kernel's f_ncm stuck.
///
/// Costs a few sysfs reads per sample, and nothing on a machine without a gadget interface.
public final class GadgetLinkWatch: @unchecked Sendable {
    /// Sends a nudge out of an interface; returns 0 or an errno.
    public typealias Sender = @Sendable (_ interface: String) -> Int32

    private let classifier: LinkClassifier
    private let send: Sender
    private let logger: Logger
    private let queue = DispatchQueue(label: "camo.gadget-link-watch")
    // Touched only on `queue` (or by a caller of `sample(now:)` that owns the watch, as tests do).
    private var detector: GadgetStallDetector
    private var failing: Set<String> = []
    private var timer: (any DispatchSourceTimer)?

    /// A watch over the gadget interfaces `classifier` finds, nudging with `send`.
    public init(classifier: LinkClassifier = LinkClassifier(), detector: GadgetStallDetector = GadgetStallDetector(),
                logger: Logger, send: @escaping Sender = GadgetLinkNudge.send(interface:)) {
        self.classifier = classifier
        self.detector = detector
        self.logger = logger
        self.send = send
    }

    /// Starts sampling every `interval`.
    public func start(interval: DispatchTimeInterval = .milliseconds(100)) {
        queue.sync {
            guard timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(20))
            timer.setEventHandler { [weak self] in
                self?.sample(now: DispatchTime.now().uptimeNanoseconds)
            }
            timer.resume()
            self.timer = timer
        }
    }

    /// Stops sampling.
    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    /// Takes one sample at `now` (nanoseconds, monotonic) and sends the nudges due; returns them.
    @discardableResult
    public func sample(now: UInt64) -> [(interface: String, reason: GadgetStallDetector.Reason)] {
        var readings: [String: GadgetStallDetector.Reading] = [:]
        for name in classifier.gadgetInterfaces() {
            readings[name] = reading(name)
        }
        let due = detector.observe(readings, now: now)
        for (interface, reason) in due {
            let error = send(interface)
            if error == 0 {
                failing.remove(interface)
                switch reason {
                case .carrierUp: logger.debug("USB link up; nudged its transfer queue", metadata: ["interface": "\(interface)"])
                case .unanswered:
                    logger.info(
                        "The USB link stopped sending (the kernel's f_ncm stranded a transfer block); nudged it",
                        metadata: ["interface": "\(interface)", "why": "\(reason)"])
                }
            } else if failing.insert(interface).inserted {
                logger.warning(
                    "Could not nudge the USB link; if studios cannot connect over the cable, pull it and plug it in again",
                    metadata: ["interface": "\(interface)", "error": "\(String(cString: strerror(error)))"])
            }
        }
        return due
    }

    /// The carrier and counters of `name`; the carrier reads as down when sysfs refuses it (an interface that is
    /// administratively down).
    private func reading(_ name: String) -> GadgetStallDetector.Reading {
        let base = classifier.netClass + "/" + name + "/"
        func number(_ file: String) -> UInt64 {
            classifier.filesystem.read(base + file).flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        }
        return GadgetStallDetector.Reading(
            carrier: classifier.filesystem.read(base + "carrier") == "1",
            receivedPackets: number("statistics/rx_packets"), sentPackets: number("statistics/tx_packets"))
    }
}
