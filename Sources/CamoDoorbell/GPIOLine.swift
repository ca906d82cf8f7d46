import CGPIOD
import Glibc

/// A GPIO line requested through libgpiod v1: as a button (both edges as events) or as an output. The thin layer
/// over the C library: nothing else in the module touches its pointers. One thread uses a line at a time (the
/// button's watcher, or the chime's queue), and ``close()`` releases it.
final class GPIOLine: @unchecked Sendable {  // Used by one thread at a time (see above); libgpiod's handles are plain memory.
    private let chip: OpaquePointer
    private let line: OpaquePointer
    private var closed = false
    /// `gpiochip0:3 "doorbell"`, for messages.
    let label: String

    private init(_ address: GPIOLineAddress) throws(DoorbellError) {
        switch address {
        case .named(let name):
            errno = 0
            guard let line = gpiod_line_find(name) else {
                if errno == 0 || errno == ENOENT { throw .lineNotFound(name) }
                throw .chipUnavailable("(the chips searched for '\(name)')", reason: Self.errorText(errno))
            }
            self.line = line
            guard let chip = gpiod_line_get_chip(line) else {
                gpiod_line_close_chip(line)
                throw .lineNotFound(name)
            }
            self.chip = chip
        case .chip(let name, let offset):
            guard let chip = gpiod_chip_open_lookup(name) else {
                throw .chipUnavailable(name, reason: errno == ENOENT || errno == ENODEV ? "there is no such chip" : Self.errorText(errno))
            }
            let count = Int(gpiod_chip_num_lines(chip))
            guard Int(offset) < count, let line = gpiod_chip_get_line(chip, offset) else {
                gpiod_chip_close(chip)
                throw .noSuchOffset(name, offset: offset, lines: count)
            }
            self.chip = chip
            self.line = line
        }
        let chipName = gpiod_chip_name(chip).map { String(cString: $0) } ?? "gpiochip?"
        let lineName = gpiod_line_name(line).map { " \"\(String(cString: $0))\"" } ?? ""
        label = "\(chipName):\(gpiod_line_offset(line))\(lineName)"
    }

    /// The line as a button: both edges reported as events, active low (pressed = low level) when `activeLow`.
    static func input(_ address: GPIOLineAddress, activeLow: Bool, consumer: String) throws(DoorbellError) -> GPIOLine {
        let gpio = try GPIOLine(address)
        let flags = activeLow ? camo_gpiod_flag_active_low() : 0
        guard gpiod_line_request_both_edges_events_flags(gpio.line, consumer, flags) == 0 else {
            let reason = gpio.requestFailure(errno)
            gpio.close()
            throw .lineUnavailable(gpio.label, reason: reason)
        }
        return gpio
    }

    /// The line as an output, driven to `active` (high) or not (low) at once.
    static func output(_ address: GPIOLineAddress, consumer: String, active: Bool = false) throws(DoorbellError) -> GPIOLine {
        let gpio = try GPIOLine(address)
        guard gpiod_line_request_output(gpio.line, consumer, active ? 1 : 0) == 0 else {
            let reason = gpio.requestFailure(errno)
            gpio.close()
            throw .lineUnavailable(gpio.label, reason: reason)
        }
        return gpio
    }

    /// Why a request failed: who holds the line when it is busy.
    private func requestFailure(_ code: Int32) -> String {
        guard code == EBUSY else { return Self.errorText(code) }
        _ = gpiod_line_update(line)
        let holder = gpiod_line_consumer(line).map { String(cString: $0) }
        return "it is in use" + (holder.map { " by \"\($0)\"" } ?? "")
    }

    /// The line's logical value (true: active, i.e. a pressed button or a ringing chime).
    func isActive() throws(DoorbellError) -> Bool {
        let value = gpiod_line_get_value(line)
        guard value >= 0 else { throw .lineFailed(label, reason: Self.errorText(errno)) }
        return value == 1
    }

    /// Drives an output line active or inactive.
    func set(active: Bool) throws(DoorbellError) {
        guard gpiod_line_set_value(line, active ? 1 : 0) == 0 else { throw .lineFailed(label, reason: Self.errorText(errno)) }
    }

    /// Waits up to `timeout` ns for edges and returns them (none on timeout), with their kernel timestamps.
    /// - Throws: ``DoorbellError/lineFailed(_:reason:)`` when the line went away.
    func waitEdges(timeout: UInt64) throws(DoorbellError) -> [ButtonEdge] {
        let ready = camo_gpiod_wait(line, timeout)
        if ready == 0 || (ready < 0 && errno == EINTR) { return [] }
        guard ready > 0 else { throw .lineFailed(label, reason: Self.errorText(errno)) }
        var events = [gpiod_line_event](repeating: gpiod_line_event(), count: 16)
        let count = events.withUnsafeMutableBufferPointer { gpiod_line_event_read_multiple(line, $0.baseAddress, UInt32($0.count)) }
        guard count >= 0 else {
            if errno == EAGAIN || errno == EINTR { return [] }
            throw .lineFailed(label, reason: Self.errorText(errno))
        }
        let now = MonotonicTime.now()
        return events.prefix(Int(count)).map { event in
            withUnsafePointer(to: event) { pointer in
                ButtonEdge(time: MonotonicTime.plausible(camo_gpiod_event_ns(pointer), now: now), pressed: camo_gpiod_event_is_rising(pointer) != 0)
            }
        }
    }

    /// Releases the line and closes its chip; idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        gpiod_line_release(line)
        gpiod_chip_close(chip)
    }

    deinit { close() }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code)) + " (errno \(code))"
    }
}
