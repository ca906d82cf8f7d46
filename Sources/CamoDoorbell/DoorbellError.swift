/// What went wrong with the doorbell's button or wired chime: each a sentence that says what to do.
public enum DoorbellError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration's `doorbellButton` cannot be read.
    case invalidButton(String, reason: String)
    /// The configuration's `externalChime` cannot be read.
    case invalidExternalChime(String, reason: String)
    /// No GPIO line has that name.
    case lineNotFound(String)
    /// The GPIO chip cannot be opened (missing, or no permission).
    case chipUnavailable(String, reason: String)
    /// The chip has no line at that offset.
    case noSuchOffset(String, offset: UInt32, lines: Int)
    /// The line cannot be requested (another consumer holds it, or the driver refused).
    case lineUnavailable(String, reason: String)
    /// Reading or setting a line failed (it went away, say).
    case lineFailed(String, reason: String)
    /// The input device cannot be opened or is not a keyboard-like device.
    case inputUnavailable(String, reason: String)
    /// Reading the input device failed (it was unplugged, say).
    case inputFailed(String, reason: String)
    /// The button is already being watched.
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidButton(let text, let reason):
            "The doorbell button '\(text)' cannot be used: \(reason)."
        case .invalidExternalChime(let text, let reason):
            "The external chime '\(text)' cannot be used: \(reason)."
        case .lineNotFound(let name):
            "No GPIO line is named '\(name)'. Check the name with gpioinfo (package gpiod), or give the line as gpio:CHIP:OFFSET."
        case .chipUnavailable(let chip, let reason):
            "The GPIO chip '\(chip)' cannot be opened (\(reason)). gpiodetect lists the chips; the agent needs read-write access to /dev/gpiochipN."
        case .noSuchOffset(let chip, let offset, let lines):
            "The GPIO chip '\(chip)' has no line \(offset): it has \(lines) lines (0 to \(max(lines - 1, 0))). Check the offset with gpioinfo \(chip)."
        case .lineUnavailable(let line, let reason):
            "The GPIO line \(line) cannot be requested (\(reason)). gpioinfo shows who holds it; stop that program or choose another line."
        case .lineFailed(let line, let reason):
            "The GPIO line \(line) failed (\(reason)). Check that its chip is still there (gpiodetect)."
        case .inputUnavailable(let path, let reason):
            "The input device \(path) cannot be used as the doorbell button (\(reason)). ls -l /dev/input/by-id shows the devices; the agent needs read access (the input group)."
        case .inputFailed(let path, let reason):
            "Reading the input device \(path) failed (\(reason)). Check that the device is still plugged in."
        case .alreadyStarted:
            "The doorbell button is already being watched; stop it before starting it again."
        }
    }
}
