import CEvdev
import Glibc

/// A key of an input device (`/dev/input/eventN`) as a button: its key-down and key-up events (`struct
/// input_event`, EV_KEY with value 1 and 0; autorepeat is ignored), stamped on CLOCK_MONOTONIC (asked for with
/// EVIOCSCLOCKID; a device that refuses has its wall-clock stamps moved onto the monotonic clock). The thin layer
/// over the kernel interface; one thread uses it at a time, and ``close()`` closes the descriptor.
final class EvdevKey: @unchecked Sendable {  // Used by one thread at a time (see above); it holds only a descriptor.
    private var fd: Int32
    let path: String
    /// nil: any key.
    let keyCode: UInt16?
    /// Whether the device stamps events with CLOCK_MONOTONIC; otherwise with CLOCK_REALTIME.
    let monotonicStamps: Bool
    /// The device's name, for messages.
    let deviceName: String

    /// Opens the device and checks it has the key.
    init(path: String, keyCode: UInt16?) throws(DoorbellError) {
        self.path = path
        self.keyCode = keyCode
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let reason = switch code {
            case ENOENT: "it does not exist"
            case EACCES, EPERM: "permission denied"
            default: GPIOLine.errorText(code)
            }
            throw .inputUnavailable(path, reason: reason)
        }
        if let keyCode {
            let has = camo_evdev_has_key(fd, UInt32(keyCode))
            guard has == 1 else {
                Glibc.close(fd)
                throw .inputUnavailable(path, reason: has < 0 ? "it is not an input event device (\(GPIOLine.errorText(-has)))" : "it has no key with code \(keyCode)")
            }
        } else {
            guard camo_evdev_has_key(fd, 0) >= 0 else {
                let reason = "it is not an input event device (\(GPIOLine.errorText(errno)))"
                Glibc.close(fd)
                throw .inputUnavailable(path, reason: reason)
            }
        }
        monotonicStamps = camo_evdev_use_monotonic_clock(fd) == 0
        var name = [CChar](repeating: 0, count: 256)
        deviceName = camo_evdev_name(fd, &name, Int32(name.count)) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : path
    }

    /// Waits up to `timeout` ns for key events and returns them as edges (none on timeout).
    /// - Throws: ``DoorbellError/inputFailed(_:reason:)`` when the device went away.
    func waitEdges(timeout: UInt64) throws(DoorbellError) -> [ButtonEdge] {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(min(timeout / 1_000_000 + (timeout % 1_000_000 > 0 ? 1 : 0), 60_000)))
        if ready == 0 || (ready < 0 && errno == EINTR) { return [] }
        guard ready > 0 else { throw .inputFailed(path, reason: GPIOLine.errorText(errno)) }
        if poller.revents & Int16(POLLIN) == 0 {
            throw .inputFailed(path, reason: poller.revents & Int16(POLLHUP) != 0 ? "the device hung up" : "the device reported an error")
        }
        let size = Int(camo_evdev_event_size())
        var buffer = [UInt8](repeating: 0, count: size * 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else {
            if errno == EAGAIN || errno == EINTR { return [] }
            throw .inputFailed(path, reason: errno == ENODEV ? "it was unplugged" : GPIOLine.errorText(errno))
        }
        let now = MonotonicTime.now()
        let offset = monotonicStamps ? 0 : Int64(bitPattern: Self.realtimeNow() &- now)
        return buffer.withUnsafeBytes { bytes -> [ButtonEdge] in
            var edges: [ButtonEdge] = []
            for index in 0..<(count / size) {
                let base = bytes.baseAddress
                guard camo_evdev_event_type(base, Int32(index)) == camo_evdev_key_type() else { continue }
                let code = camo_evdev_event_code(base, Int32(index))
                let value = camo_evdev_event_value(base, Int32(index))
                guard keyCode.map({ $0 == code }) ?? true, value == 0 || value == 1 else { continue }
                let stamp = UInt64(bitPattern: Int64(bitPattern: camo_evdev_event_ns(base, Int32(index))) &- offset)
                edges.append(ButtonEdge(time: MonotonicTime.plausible(stamp, now: now), pressed: value == 1))
            }
            return edges
        }
    }

    /// Closes the device; idempotent.
    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    deinit { close() }

    private static func realtimeNow() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
