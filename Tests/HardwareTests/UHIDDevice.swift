import Foundation

#if canImport(Glibc)
import Glibc
#endif

// A HID device made from user space through /dev/uhid (the kernel's uhid module, CONFIG_UHID, a module in Debian's
// kernel): the kernel treats it as a device plugged in, binds its HID drivers to it, and hands us what they send
// to it. The host-part hardware tests use it for real kernel LED and power-supply class devices, since Debian's
// kernel builds neither uleds (CONFIG_LEDS_USER) nor test_power (CONFIG_TEST_POWER).
//
// struct uhid_event (linux/uhid.h) is packed: a u32 type, then the request. Offsets below are from its start.

/// One uhid device; destroyed (unplugged) by ``destroy()`` or when it goes away.
final class UHIDDevice {
    /// sizeof(struct uhid_event) on x86-64 and arm64 (checked against linux/uhid.h with offsetof: create2's
    /// rd_data at 280, output's size at 4100, input2's data at 6).
    static let eventSize = 4380

    enum EventType: UInt32 {
        case destroy = 1, start = 2, stop = 3, open = 4, close = 5, output = 6
        case getReport = 9, getReportReply = 10, create2 = 11, input2 = 12, setReport = 13, setReportReply = 14
    }

    /// An event the kernel sent: its type and the bytes after the type.
    struct Event {
        var type: UInt32
        var body: [UInt8]

        /// For ``EventType/output``: the report's bytes (uhid_output_req: data[4096], u16 size).
        var outputReport: [UInt8]? {
            guard type == EventType.output.rawValue, body.count >= 4099 else { return nil }
            let size = Int(body[4096]) | Int(body[4097]) << 8
            return Array(body[0..<min(size, 4096)])
        }
    }

    private let fd: Int32
    private var destroyed = false

    /// Creates a device (UHID_CREATE2) with the report descriptor `descriptor`. `bus` 3 is BUS_USB (drivers that
    /// match USB ids, such as hid-led, want it). The kernel adds the device asynchronously: wait for what its
    /// drivers create.
    init(name: String, uniq: String, bus: UInt16 = 3, vendor: UInt32, product: UInt32, descriptor: [UInt8]) throws {
        fd = open("/dev/uhid", O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw HardwareError("cannot open /dev/uhid: \(String(cString: strerror(errno))) (is the uhid module loaded?)") }
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(EventType.create2.rawValue, at: 0, in: &event)
        Self.put(bytes: Array(name.utf8.prefix(127)), at: 4, in: &event)  // name[128]
        Self.put(bytes: Array("camo-test/uhid".utf8), at: 132, in: &event)  // phys[64]
        Self.put(bytes: Array(uniq.utf8.prefix(63)), at: 196, in: &event)  // uniq[64]
        Self.put16(UInt16(descriptor.count), at: 260, in: &event)
        Self.put16(bus, at: 262, in: &event)
        Self.put(vendor, at: 264, in: &event)
        Self.put(product, at: 268, in: &event)
        Self.put(1, at: 272, in: &event)  // version
        Self.put(0, at: 276, in: &event)  // country
        Self.put(bytes: descriptor, at: 280, in: &event)
        do {
            try send(event)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        destroy()
    }

    /// Unplugs the device (UHID_DESTROY) and closes /dev/uhid; its LEDs and power supplies go away.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(EventType.destroy.rawValue, at: 0, in: &event)
        try? send(event)
        close(fd)
    }

    /// Sends an input report (UHID_INPUT2), as the device would.
    func sendInput(_ report: [UInt8]) throws {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(EventType.input2.rawValue, at: 0, in: &event)
        Self.put16(UInt16(report.count), at: 4, in: &event)
        Self.put(bytes: report, at: 6, in: &event)
        try send(event)
    }

    /// The next event within `timeout` seconds, or nil. Report requests (GET_REPORT, SET_REPORT) are answered at
    /// once with an error (EIO), so the kernel never waits for us; they are returned too.
    func nextEvent(timeout: Double) throws -> Event? {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: Self.eventSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count >= 4 {
                let type = UInt32(buffer[0]) | UInt32(buffer[1]) << 8 | UInt32(buffer[2]) << 16 | UInt32(buffer[3]) << 24
                let event = Event(type: type, body: Array(buffer[4..<count]))
                try answer(event)
                return event
            }
            guard count < 0, errno == EAGAIN || errno == EINTR else {
                throw HardwareError("read /dev/uhid: \(count < 0 ? String(cString: strerror(errno)) : "short event of \(count) bytes")")
            }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(min(left, 1) * 1000) + 1)
        }
    }

    /// Reads events until an output report for which `matches` holds; nil after `timeout` seconds. `seen` gets
    /// every output report read, for failure messages.
    func waitForOutput(timeout: Double, seen: inout [[UInt8]], _ matches: ([UInt8]) -> Bool) throws -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            guard let event = try nextEvent(timeout: deadline.timeIntervalSinceNow) else { return nil }
            guard let report = event.outputReport else { continue }
            seen.append(report)
            if matches(report) { return report }
        }
        return nil
    }

    // MARK: Bytes

    private func answer(_ event: Event) throws {
        let reply: EventType
        switch event.type {
        case EventType.getReport.rawValue: reply = .getReportReply
        case EventType.setReport.rawValue: reply = .setReportReply
        default: return
        }
        var out = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put(reply.rawValue, at: 0, in: &out)
        Self.put(bytes: Array(event.body.prefix(4)), at: 4, in: &out)  // the request's id
        Self.put16(UInt16(EIO), at: 8, in: &out)  // err
        try send(out)
    }

    private func send(_ event: [UInt8]) throws {
        let written = event.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == event.count else {
            throw HardwareError("write /dev/uhid: \(written < 0 ? String(cString: strerror(errno)) : "short write \(written)")")
        }
    }

    private static func put(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }

    private static func put16(_ value: UInt16, at offset: Int, in bytes: inout [UInt8]) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    private static func put(bytes source: [UInt8], at offset: Int, in bytes: inout [UInt8]) {
        bytes.replaceSubrange(offset..<(offset + source.count), with: source)
    }
}

/// Kernel modules for the host-part hardware tests (in the VM, as root).
enum KernelModule {
    /// `modprobe NAME`; throws with modprobe's words when it fails (not in this kernel, say).
    static func load(_ name: String) throws {
        let result = try shell("modprobe \(name) 2>&1")
        guard result.status == 0 else { throw HardwareError("modprobe \(name) failed: \(result.stdout)\(result.stderr)") }
    }

    /// Whether this kernel has the module NAME (`modinfo -n`), loaded or not.
    static func exists(_ name: String) -> Bool {
        (try? shell("modinfo -n \(name) >/dev/null 2>&1"))?.status == 0
    }

    /// `rmmod NAME` when it is loaded; failures are ignored (another test may still use it).
    static func unload(_ name: String) {
        let module = name.replacingOccurrences(of: "-", with: "_")
        _ = try? shell("grep -q '^\(module) ' /proc/modules && rmmod \(module) 2>&1")
    }
}
