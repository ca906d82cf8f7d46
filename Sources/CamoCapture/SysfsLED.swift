import CamoSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The three steps of a status light (the camera model's `statusLightBrightness`, without `auto`).
public enum LEDLevel: String, Sendable, Equatable, Codable, CaseIterable {
    /// A third of the LED's maximum brightness (at least 1).
    case low
    /// Two thirds of the maximum (at least 1).
    case medium
    /// The maximum.
    case high
}

/// Why an LED could not be opened, read or set.
public enum SysfsLEDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No LED directory at `path`; `available` lists the LEDs that exist (sorted).
    case notFound(path: String, available: [String])
    /// An attribute could not be read or did not hold a number.
    case unreadable(path: String, reason: String)
    /// A brightness outside `0...maximum` was asked for; nothing was written.
    case outOfRange(path: String, value: Int, maximum: Int)
    /// Writing an attribute failed (`EACCES` when the agent's user may not write it).
    case writeFailed(SystemCallError)

    /// What went wrong and, for a refused write, how to allow it.
    public var description: String {
        switch self {
        case .notFound(let path, let available):
            let list = available.isEmpty ? "there are none" : "there are: " + available.joined(separator: ", ")
            return "no LED at \(path); \(list)"
        case .unreadable(let path, let reason):
            return "cannot read \(path): \(reason)"
        case .outOfRange(let path, let value, let maximum):
            return "brightness \(value) is out of range for \(path): 0...\(maximum)"
        case .writeFailed(let error):
            var text = "cannot write \(error.path): \(error.errno.description)"
            if error.code == EACCES || error.code == EPERM {
                let directory = (error.path as NSString).deletingLastPathComponent
                text += "; the file belongs to root: give the agent's group write access with a udev rule in"
                    + " /etc/udev/rules.d, e.g. SUBSYSTEM==\"leds\", KERNEL==\"\((directory as NSString).lastPathComponent)\","
                    + " RUN+=\"/bin/chgrp camo-agent /sys%p/brightness /sys%p/trigger\","
                    + " RUN+=\"/bin/chmod g+w /sys%p/brightness /sys%p/trigger\", or run the agent as root"
            }
            return text
        }
    }
}

/// One LED of the kernel's LED class: the directory `/sys/class/leds/NAME` with its `brightness` (0 is off, up to
/// `max_brightness`) and `trigger` attributes.
///
/// A plain value: every read and write goes to sysfs, nothing is cached but the maximum. Writing the files needs
/// write access to them, which only root has unless a udev rule gives it (see ``SysfsLEDError/writeFailed(_:)``).
public struct SysfsLED: Sendable, Equatable {
    /// The LED's name, e.g. `input3::capslock` or `ACT`.
    public let name: String
    /// Its directory, `ROOT/NAME`.
    public let path: String
    /// The brightest setting (`max_brightness`); 1 for an LED that is only on or off.
    public let maxBrightness: Int

    /// Opens the LED `name` under `root`; throws ``SysfsLEDError/notFound(path:available:)`` when there is no such
    /// LED and ``SysfsLEDError/unreadable(path:reason:)`` when its `max_brightness` is not a positive number.
    public init(name: String, root: String = "/sys/class/leds") throws(SysfsLEDError) {
        let path = root + "/" + name
        var isDirectory: ObjCBool = false
        guard !name.isEmpty, !name.contains("/"), FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
              isDirectory.boolValue
        else { throw .notFound(path: path, available: Self.available(root: root)) }
        let maximum = try Self.readNumber(path + "/max_brightness")
        guard maximum > 0 else { throw .unreadable(path: path + "/max_brightness", reason: "\(maximum) is not a positive number") }
        self.name = name
        self.path = path
        maxBrightness = maximum
    }

    /// The names of the LEDs under `root`, sorted; empty when there are none or the directory cannot be read.
    public static func available(root: String = "/sys/class/leds") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The brightness now (0...``maxBrightness``; 0 is off). A trigger may change it at any time.
    public var brightness: Int {
        get throws(SysfsLEDError) { try Self.readNumber(path + "/brightness") }
    }

    /// Sets the brightness; throws ``SysfsLEDError/outOfRange(path:value:maximum:)`` without writing when it is not in
    /// `0...maxBrightness`. Writing 0 also stops any trigger, as the kernel does.
    public func set(brightness value: Int) throws(SysfsLEDError) {
        guard (0...maxBrightness).contains(value) else {
            throw .outOfRange(path: path + "/brightness", value: value, maximum: maxBrightness)
        }
        try Self.write("\(value)", to: path + "/brightness")
    }

    /// Full brightness, or off.
    public func setOn(_ on: Bool) throws(SysfsLEDError) {
        try set(brightness: on ? maxBrightness : 0)
    }

    /// Sets a status-light level: ``brightness(for:)`` of it.
    public func set(level: LEDLevel) throws(SysfsLEDError) {
        try set(brightness: brightness(for: level))
    }

    /// The brightness for `level` on this LED: a third, two thirds or all of ``maxBrightness``, rounded, at least 1
    /// (255: 85, 170, 255; 100: 33, 67, 100; 1: 1, 1, 1).
    public func brightness(for level: LEDLevel) -> Int {
        Self.brightness(for: level, maxBrightness: maxBrightness)
    }

    /// The brightness for `level` on an LED whose maximum is `maxBrightness` (see ``brightness(for:)``).
    public static func brightness(for level: LEDLevel, maxBrightness: Int) -> Int {
        let fraction: Double
        switch level {
        case .low: fraction = 1.0 / 3
        case .medium: fraction = 2.0 / 3
        case .high: return max(1, maxBrightness)
        }
        return max(1, Int((Double(maxBrightness) * fraction).rounded()))
    }

    /// The trigger in charge of the LED (the bracketed word of `trigger`, e.g. `heartbeat`), nil when it is `none`
    /// or the LED has no trigger attribute. While a trigger runs, it may overwrite the brightness set here.
    public var activeTrigger: String? {
        guard let text = try? String(contentsOfFile: path + "/trigger", encoding: .utf8),
              let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]")
        else { return nil }
        let active = String(text[text.index(after: open)..<close])
        return active == "none" || active.isEmpty ? nil : active
    }

    /// Stops any trigger (writes `none` to `trigger`), so the LED keeps the brightness set here. Does nothing when no
    /// trigger runs.
    public func disableTrigger() throws(SysfsLEDError) {
        guard activeTrigger != nil else { return }
        try Self.write("none", to: path + "/trigger")
    }

    // MARK: Files

    private static func readNumber(_ file: String) throws(SysfsLEDError) -> Int {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw .unreadable(path: file, reason: FileManager.default.fileExists(atPath: file) ? "\(error)" : "no such file")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let number = Int(trimmed) else { throw .unreadable(path: file, reason: "\"\(trimmed.prefix(40))\" is not a number") }
        return number
    }

    /// One write(2) of `text`, as sysfs wants: the kernel takes the whole value from a single write. O_TRUNC is what
    /// `echo N > brightness` does too (sysfs ignores it; a plain file needs it). Never creates the file.
    private static func write(_ text: String, to file: String) throws(SysfsLEDError) {
        let fd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { throw .writeFailed(.current("open", path: file)) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw .writeFailed(written < 0 ? .current("write", path: file) : SystemCallError("write", path: file, code: EIO))
        }
    }
}
