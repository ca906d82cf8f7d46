/// Decides when a USB gadget link needs a nudge to get the kernel's f_ncm moving again.
///
/// The kernel's CDC-NCM gadget packs outgoing frames into a transfer block (NTB) and flushes a part-filled one from
/// a timer it arms only when it starts a block. A disconnect cancels the timer but keeps the part-filled block, and
/// a flush that finds every USB request busy gives up without re-arming it. Either way the block is stranded: every
/// later frame (ARP replies, SYN-ACKs) joins it and nothing leaves until it holds 31 frames (6.1) or 16 KiB, which
/// takes seconds of the studio's retries (Docs/USB.md, section 8). A burst of 33 tiny frames fills any stranded
/// block, so the gadget sends it at once.
///
/// This struct only decides, from the interface's counters sampled every 100 ms or so; the caller sends. It asks
/// for a nudge
/// - when the carrier comes up (the cable plugged in, the UDC bound, or first seen up), also when it went down and
///   up between two samples (`carrier_up_count` moved): a block kept across the disconnect goes out before the
///   studio even asks;
/// - when frames from the studio's end have gone unanswered for ``patience`` (give or take a sample): the received
///   count moved while the sent count (counted per completed USB transfer) stood still. After such a nudge the next
///   waits for another frame from the studio's end and for ``minimumGap``, whatever the sent count does meanwhile
///   (the nudge's own transfers move it), so one-way chatter (router solicitations, mDNS queries nobody answers)
///   costs at most a burst per ``minimumGap``.
///
/// It cannot see a stall whose first unanswered frame arrives in the same sample as the last transfers before the
/// strand complete; the studio's next retry shows it.
///
/// A plain value with no I/O and no clock of its own: the caller passes the time of each sample.
public struct GadgetStallDetector: Sendable {
    /// One sample of an interface: its carrier and its packet counters (`/sys/class/net/<name>/…`).
    public struct Reading: Sendable, Equatable {
        /// Whether the link is up (a host has configured the gadget).
        public var carrier: Bool
        /// `carrier_up_count`: how often the carrier has come up (0 where the kernel has no such file).
        public var carrierUps: UInt64
        /// `statistics/rx_packets`.
        public var receivedPackets: UInt64
        /// `statistics/tx_packets` (the gadget counts one per completed USB transfer).
        public var sentPackets: UInt64

        /// A sample.
        public init(carrier: Bool, carrierUps: UInt64 = 0, receivedPackets: UInt64, sentPackets: UInt64) {
            self.carrier = carrier
            self.carrierUps = carrierUps
            self.receivedPackets = receivedPackets
            self.sentPackets = sentPackets
        }
    }

    /// Why a nudge is due.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The carrier came up.
        case carrierUp
        /// Frames from the studio's end went unanswered for this long (nanoseconds).
        case unanswered(nanoseconds: UInt64)

        public var description: String {
            switch self {
            case .carrierUp: "the link came up"
            case .unanswered(let nanoseconds): "frames from the studio's end went unanswered for \(nanoseconds / 1_000_000) ms"
            }
        }
    }

    /// How long frames from the studio's end may go unanswered before a nudge, in nanoseconds (the gadget's own
    /// flush timer is 300 µs, so a healthy link answers long before).
    public var patience: UInt64
    /// The least time between two nudges of one interface, in nanoseconds.
    public var minimumGap: UInt64

    private struct Link {
        var carrier: Bool
        var carrierUps: UInt64 = 0
        var received: UInt64
        var sent: UInt64
        /// When the first unanswered frame was seen (sent count unchanged since).
        var unansweredSince: UInt64?
        /// The received count and time at the last nudge for unanswered frames.
        var nudgedAt: (received: UInt64, time: UInt64)?
    }

    private var links: [String: Link] = [:]

    /// A detector; the defaults suit sampling every 100 ms.
    public init(patience: UInt64 = 200_000_000, minimumGap: UInt64 = 500_000_000) {
        self.patience = patience
        self.minimumGap = minimumGap
    }

    /// Takes one sample of every gadget interface present at `now` (nanoseconds, any monotonic clock) and returns
    /// the interfaces to nudge now, with the reason. Interfaces missing from `readings` are forgotten.
    public mutating func observe(_ readings: [String: Reading], now: UInt64) -> [(interface: String, reason: Reason)] {
        links = links.filter { readings[$0.key] != nil }
        var due: [(interface: String, reason: Reason)] = []
        for (name, reading) in readings.sorted(by: { $0.key < $1.key }) {
            guard reading.carrier else {
                links[name] = Link(
                    carrier: false, carrierUps: reading.carrierUps, received: reading.receivedPackets, sent: reading.sentPackets)
                continue
            }
            guard var link = links[name], link.carrier, link.carrierUps == reading.carrierUps else {
                links[name] = Link(
                    carrier: true, carrierUps: reading.carrierUps, received: reading.receivedPackets, sent: reading.sentPackets)
                due.append((name, .carrierUp))
                continue
            }
            if reading.sentPackets != link.sent {
                // The gadget sends: no stall now. The last nudge's time and count stay, so the gap still holds.
                link.unansweredSince = nil
            } else if reading.receivedPackets != link.received, link.unansweredSince == nil {
                link.unansweredSince = now
            }
            link.received = reading.receivedPackets
            link.sent = reading.sentPackets
            if let since = link.unansweredSince, now >= since + patience {
                let heardSince = link.nudgedAt.map { reading.receivedPackets != $0.received && now >= $0.time + minimumGap } ?? true
                if heardSince {
                    link.nudgedAt = (reading.receivedPackets, now)
                    due.append((name, .unanswered(nanoseconds: now - since)))
                }
            }
            links[name] = link
        }
        return due
    }
}
