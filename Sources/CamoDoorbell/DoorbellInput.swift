/// Where a GPIO line is: found by its name on any chip, or a chip and an offset on it.
public enum GPIOLineAddress: Sendable, Hashable, CustomStringConvertible {
    /// The line named so (`gpioinfo` lists the names), on whichever chip has it.
    case named(String)
    /// Line `offset` of a chip given by name (`gpiochip0`), number (`0`), path (`/dev/gpiochip0`) or label.
    case chip(String, offset: UInt32)

    /// `gpio:NAME` or `gpio:CHIP:OFFSET`, as in the configuration.
    public var description: String {
        switch self {
        case .named(let name): "gpio:\(name)"
        case .chip(let chip, let offset): "gpio:\(chip):\(offset)"
        }
    }
}

/// What the doorbell button is, from the configuration's `doorbellButton`:
/// - `gpio:LINE_NAME` or `gpio:CHIP:OFFSET`, optionally followed by `:active-high` (a GPIO line read through
///   libgpiod; active low by default: a button to ground with a pull-up, idle high, pressed low), or
/// - `evdev:/dev/input/eventN` or `evdev:/dev/input/eventN:KEYCODE` (an input device's key; any key when no code
///   is given; codes as in linux/input-event-codes.h, e.g. 148 for KEY_PROG1).
public enum DoorbellInput: Sendable, Hashable, CustomStringConvertible {
    /// A GPIO line; `activeLow` when pressed is the low level.
    case gpio(GPIOLineAddress, activeLow: Bool)
    /// A key of an input device; nil `keyCode`: any key.
    case evdev(path: String, keyCode: UInt16?)

    /// Parses the configuration's text.
    /// - Throws: ``DoorbellError/invalidButton(_:reason:)`` saying what is wrong and what is expected.
    public init(parsing text: String) throws(DoorbellError) {
        if text.hasPrefix("gpio:") {
            var parts = text.dropFirst(5).split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            var activeLow = true
            if parts.count >= 2, let last = parts.last?.lowercased(), last == "active-high" || last == "active-low" {
                activeLow = last == "active-low"
                parts.removeLast()
            }
            do throws(GPIOLineAddress.ParseError) {
                self = .gpio(try GPIOLineAddress(parts: parts), activeLow: activeLow)
            } catch {
                throw .invalidButton(text, reason: error.reason + " (write gpio:LINE_NAME or gpio:CHIP:OFFSET, optionally followed by :active-high)")
            }
        } else if text.hasPrefix("evdev:") {
            let rest = String(text.dropFirst(6))
            var path = rest
            var keyCode: UInt16?
            if let colon = rest.lastIndex(of: ":") {
                let code = rest[rest.index(after: colon)...]
                guard let number = UInt16(code), number > 0, number <= 0x2FF else {
                    throw .invalidButton(text, reason: "'\(code)' is not a key code (a number from 1 to 767, e.g. 148 for KEY_PROG1; evtest lists a device's keys)")
                }
                keyCode = number
                path = String(rest[..<colon])
            }
            guard path.hasPrefix("/"), path.count > 1 else {
                throw .invalidButton(text, reason: "the input device must be a path such as /dev/input/event3 (ls /dev/input/by-id shows them)")
            }
            self = .evdev(path: path, keyCode: keyCode)
        } else {
            throw .invalidButton(text, reason: "it must start with gpio: (a GPIO line) or evdev: (an input device's key)")
        }
    }

    /// The text it was parsed from (normalized: `:active-high` only when active high).
    public var description: String {
        switch self {
        case .gpio(let line, let activeLow): line.description + (activeLow ? "" : ":active-high")
        case .evdev(let path, let keyCode): "evdev:\(path)" + (keyCode.map { ":\($0)" } ?? "")
        }
    }
}

extension GPIOLineAddress {
    /// Parses the configuration's `externalChime`: `gpio:LINE_NAME` or `gpio:CHIP:OFFSET` (driven active high).
    /// - Throws: ``DoorbellError/invalidExternalChime(_:reason:)``.
    public init(parsingExternalChime text: String) throws(DoorbellError) {
        guard text.hasPrefix("gpio:") else {
            throw .invalidExternalChime(text, reason: "it must start with gpio: (write gpio:LINE_NAME or gpio:CHIP:OFFSET)")
        }
        let parts = text.dropFirst(5).split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        do throws(ParseError) {
            self = try GPIOLineAddress(parts: parts)
        } catch {
            throw .invalidExternalChime(text, reason: error.reason + " (write gpio:LINE_NAME or gpio:CHIP:OFFSET)")
        }
    }

    struct ParseError: Error {
        var reason: String
    }

    /// `[NAME]` or `[CHIP, OFFSET]`.
    init(parts: [String]) throws(ParseError) {
        switch parts.count {
        case 1:
            guard !parts[0].isEmpty else { throw ParseError(reason: "the line name is empty") }
            self = .named(parts[0])
        case 2:
            guard !parts[0].isEmpty else { throw ParseError(reason: "the chip is empty") }
            guard let offset = UInt32(parts[1]) else {
                throw ParseError(reason: "'\(parts[1])' is not a line offset (a number, as gpioinfo lists them)")
            }
            self = .chip(parts[0], offset: offset)
        default:
            throw ParseError(reason: "it has too many ':'-separated parts")
        }
    }
}
