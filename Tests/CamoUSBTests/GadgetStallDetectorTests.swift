import CamoUSB
import Foundation
import Logging
import Synchronization
import Testing

/// The f_ncm strand detector on made-up counter samples (100 ms apart), and the watch that feeds it from sysfs.
@Suite("GadgetStallDetector and GadgetLinkWatch")
struct GadgetStallDetectorTests {
    private static let ms: UInt64 = 1_000_000

    private func up(_ received: UInt64, _ sent: UInt64) -> GadgetStallDetector.Reading {
        .init(carrier: true, receivedPackets: received, sentPackets: sent)
    }

    @Test("A nudge when the carrier comes up, and none while the link is down or answering")
    func carrierUp() {
        var detector = GadgetStallDetector()
        #expect(detector.observe(["usb0": .init(carrier: false, receivedPackets: 0, sentPackets: 0)], now: 0).isEmpty)
        let first = detector.observe(["usb0": up(0, 0)], now: 100 * Self.ms)
        #expect(first.map(\.interface) == ["usb0"] && first.first?.reason == .carrierUp)
        // The peer asks and the gadget answers in every sample: healthy, nothing to do.
        for step in 2...20 {
            let due = detector.observe(["usb0": up(UInt64(step) * 5, UInt64(step) * 3)], now: UInt64(step) * 100 * Self.ms)
            #expect(due.isEmpty, "a link that answers needs no nudge (sample \(step))")
        }
        // Down, then up again: another carrier-up nudge.
        #expect(detector.observe(["usb0": .init(carrier: false, receivedPackets: 100, sentPackets: 60)], now: 2_100 * Self.ms).isEmpty)
        #expect(detector.observe(["usb0": up(100, 60)], now: 2_200 * Self.ms).map(\.reason) == [.carrierUp])
    }

    @Test("Frames unanswered for the patience get a nudge; the next waits for another frame and the gap, even when the nudge's own transfers move the sent count")
    func unanswered() {
        var detector = GadgetStallDetector(patience: 200 * Self.ms, minimumGap: 500 * Self.ms)
        _ = detector.observe(["usb0": up(10, 10)], now: 0)
        // An ARP request arrives at 100 ms; the reply is stranded (sent stays 10).
        #expect(detector.observe(["usb0": up(11, 10)], now: 100 * Self.ms).isEmpty)
        #expect(detector.observe(["usb0": up(11, 10)], now: 200 * Self.ms).isEmpty, "not yet: 100 ms unanswered")
        let due = detector.observe(["usb0": up(11, 10)], now: 300 * Self.ms)
        #expect(due.map(\.interface) == ["usb0"] && due.first?.reason == .unanswered(nanoseconds: 200 * Self.ms))
        // The nudge did not help and the studio's end says nothing more: no second nudge.
        for step in 4...12 {
            #expect(detector.observe(["usb0": up(11, 10)], now: UInt64(step) * 100 * Self.ms).isEmpty,
                    "no new frame from the studio's end, no new nudge (sample \(step))")
        }
        // It retries at 1.3 s, still unanswered since 100 ms and past the gap: nudged again at once.
        #expect(detector.observe(["usb0": up(12, 10)], now: 1_300 * Self.ms).count == 1)
        #expect(detector.observe(["usb0": up(12, 10)], now: 1_400 * Self.ms).isEmpty)
        // That nudge's own transfers complete (sent moves), and one-way chatter goes on, a frame every 100 ms:
        // the gap still holds, so at most one nudge per 500 ms.
        var nudges = 0
        var sent: UInt64 = 12
        for step in 15...45 {
            let due = detector.observe(["usb0": up(UInt64(step), sent)], now: UInt64(step) * 100 * Self.ms)
            nudges += due.count
            if !due.isEmpty { sent += 2 }  // the next sample sees the nudge's transfers
        }
        #expect(nudges >= 4 && nudges <= 6, "3 s of chatter: one nudge per 500-700 ms, got \(nudges)")
        // The gadget answers again: the stall is over; a later unanswered frame starts a new count.
        #expect(detector.observe(["usb0": up(46, 30)], now: 4_600 * Self.ms).isEmpty)
        #expect(detector.observe(["usb0": up(47, 30)], now: 4_700 * Self.ms).isEmpty)
        #expect(detector.observe(["usb0": up(47, 30)], now: 4_800 * Self.ms).isEmpty)
        #expect(detector.observe(["usb0": up(47, 30)], now: 4_900 * Self.ms).count == 1)
    }

    @Test("A carrier that went down and up between two samples (carrier_up_count moved) counts as coming up")
    func fastFlap() {
        var detector = GadgetStallDetector()
        let first = GadgetStallDetector.Reading(carrier: true, carrierUps: 3, receivedPackets: 5, sentPackets: 5)
        #expect(detector.observe(["usb0": first], now: 0).map(\.reason) == [.carrierUp])
        #expect(detector.observe(["usb0": first], now: 100 * Self.ms).isEmpty)
        let flapped = GadgetStallDetector.Reading(carrier: true, carrierUps: 4, receivedPackets: 0, sentPackets: 0)
        #expect(detector.observe(["usb0": flapped], now: 200 * Self.ms).map(\.reason) == [.carrierUp])
        #expect(detector.observe(["usb0": flapped], now: 300 * Self.ms).isEmpty)
    }

    @Test("Interfaces are tracked apart and forgotten when they go")
    func severalInterfaces() {
        var detector = GadgetStallDetector(patience: 200 * Self.ms, minimumGap: 500 * Self.ms)
        #expect(detector.observe(["usb0": up(0, 0), "usb1": up(0, 0)], now: 0).map(\.interface) == ["usb0", "usb1"])
        _ = detector.observe(["usb0": up(1, 0), "usb1": up(1, 1)], now: 100 * Self.ms)
        _ = detector.observe(["usb0": up(1, 0), "usb1": up(2, 2)], now: 200 * Self.ms)
        #expect(detector.observe(["usb0": up(1, 0), "usb1": up(3, 3)], now: 300 * Self.ms).map(\.interface) == ["usb0"])
        // usb0 goes away and comes back (a new gadget): a carrier-up nudge, as for a new link.
        #expect(detector.observe(["usb1": up(4, 4)], now: 400 * Self.ms).isEmpty)
        #expect(detector.observe(["usb0": up(0, 0), "usb1": up(5, 5)], now: 500 * Self.ms).map(\.reason) == [.carrierUp])
    }

    @Test("The watch reads carrier and counters from sysfs, nudges through its sender and skips other interfaces")
    func watch() {
        let filesystem = FakeGadgetFilesystem()
        filesystem.addNetInterface("usb0", uevent: "DEVTYPE=gadget\nINTERFACE=usb0", carrier: "1")
        filesystem.addNetInterface("eth0", uevent: "INTERFACE=eth0", carrier: "1")
        for name in ["usb0", "eth0"] {
            filesystem.place("/net/\(name)/statistics", .directory)
            filesystem.setContent("/net/\(name)/statistics/rx_packets", "5")
            filesystem.setContent("/net/\(name)/statistics/tx_packets", "5")
        }
        var classifier = LinkClassifier(filesystem: filesystem, addresses: { [] }, interfaceName: { _ in nil })
        classifier.netClass = filesystem.netClass
        let sent = Mutex<[String]>([])
        let watch = GadgetLinkWatch(classifier: classifier, logger: Logger(label: "test")) { interface in
            sent.withLock { $0.append(interface) }
            return interface == "usb0" ? 0 : EPERM
        }
        #expect(watch.sample(now: 0).map(\.reason) == [.carrierUp])
        #expect(sent.withLock { $0 } == ["usb0"], "only the gadget interface is nudged")
        filesystem.setContent("/net/usb0/statistics/rx_packets", "6")
        filesystem.setContent("/net/eth0/statistics/rx_packets", "9")
        #expect(watch.sample(now: 100 * Self.ms).isEmpty)
        #expect(watch.sample(now: 200 * Self.ms).isEmpty)
        #expect(watch.sample(now: 300 * Self.ms).count == 1)
        #expect(sent.withLock { $0 } == ["usb0", "usb0"])
        // An unreadable carrier (the interface set down) counts as down: no nudge until it is up again.
        filesystem.forceRemove("/net/usb0/carrier")
        #expect(watch.sample(now: 400 * Self.ms).isEmpty)
        filesystem.setContent("/net/usb0/carrier", "1")
        #expect(watch.sample(now: 500 * Self.ms).map(\.reason) == [.carrierUp])
    }

    @Test("A real nudge: 33 datagrams out of loopback reach a socket listening there")
    func realNudge() throws {
        // Loopback has no broadcast flag, but a limited broadcast bound to it is delivered to its own listeners,
        // which is enough to see the wrapper's socket calls work; the VM's USB test shows them on the cable.
        let receiver = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(receiver >= 0)
        defer { close(receiver) }
        var on: Int32 = 1
        setsockopt(receiver, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = GadgetLinkNudge.port.bigEndian
        address.sin_addr.s_addr = INADDR_ANY
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            // Port 9 needs root; the suite runs as root in CI.
            print("SKIP realNudge: cannot bind UDP port \(GadgetLinkNudge.port) (\(String(cString: strerror(errno)))); needs root")
            return
        }
        // Bound to lo, the datagrams leave through lo: its transmit count grows by at least 33 (loopback also delivers
        // a local copy of a broadcast sent elsewhere, so receiving them alone would not show the binding).
        let sentBefore = Self.loopbackSentPackets()
        let error = GadgetLinkNudge.send(interface: "lo")
        #expect(error == 0, "sending a nudge out of lo: \(String(cString: strerror(error)))")
        if let sentBefore, let sentAfter = Self.loopbackSentPackets() {
            #expect(sentAfter >= sentBefore + UInt64(GadgetLinkNudge.datagrams), "lo sent \(sentAfter - sentBefore) packets")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(receiver, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = recv(receiver, &buffer, buffer.count, 0)
            if n <= 0 { break }
            #expect(Array(buffer[..<n]) == GadgetLinkNudge.payload)
            count += 1
        }
        #expect(count == GadgetLinkNudge.datagrams, "every datagram of the nudge should arrive")
    }

    private static func loopbackSentPackets() -> UInt64? {
        (try? String(contentsOfFile: "/sys/class/net/lo/statistics/tx_packets", encoding: .utf8))
            .flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    @Test("A nudge out of no interface or a missing one is refused with EINVAL or ENODEV, never sent elsewhere")
    func refusedNudges() {
        #expect(GadgetLinkNudge.send(interface: "") == EINVAL)
        #expect(GadgetLinkNudge.send(interface: "camonosuch0") == ENODEV)
        #expect(GadgetLinkNudge.send(interface: String(repeating: "x", count: 40)) == ENAMETOOLONG)
    }
}
