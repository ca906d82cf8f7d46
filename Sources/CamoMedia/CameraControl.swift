import Foundation

/// A control name or value that was not accepted, with what to do instead.
public struct CameraControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message.
    public var description: String

    /// Creates an error with its message.
    public init(_ description: String) { self.description = description }
}

/// One V4L2 control (brightness, exposure, focus, ...) as the camera reports it.
public struct CameraControl: Sendable, Hashable, Codable {
    /// What kind of value the control takes.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// An integer in `minimum...maximum` on `step`.
        case integer
        /// 0 or 1.
        case boolean
        /// One of the named ``CameraControl/menu`` entries.
        case menu
        /// One of the numeric ``CameraControl/menu`` entries.
        case integerMenu
        /// An action; set any value to trigger it.
        case button

        /// The kind of a V4L2 control type; nil for types this agent does not handle (strings, arrays, ...).
        public init?(v4l2Type: UInt32) {
            switch v4l2Type {
            case 1: self = .integer
            case 2: self = .boolean
            case 3: self = .menu
            case 4: self = .button
            case 9: self = .integerMenu
            default: return nil
            }
        }
    }

    /// A menu entry.
    public struct MenuItem: Sendable, Hashable, Codable {
        /// The value to set.
        public var value: Int
        /// Its name ("50 Hz", "Aperture Priority Mode").
        public var name: String

        /// Creates a menu entry.
        public init(value: Int, name: String) {
            self.value = value
            self.name = name
        }
    }

    /// The V4L2 control id.
    public var id: UInt32
    /// The name to use on the command line: the driver's label in lower case with `_` between words
    /// (`white_balance_temperature`, `power_line_frequency`), as `v4l2-ctl` names them.
    public var name: String
    /// The driver's label ("White Balance Temperature").
    public var label: String
    /// The value kind.
    public var kind: Kind
    /// The smallest value.
    public var minimum: Int
    /// The largest value.
    public var maximum: Int
    /// The step between values.
    public var step: Int
    /// The driver's default.
    public var defaultValue: Int
    /// The current value (nil for buttons, or when it could not be read).
    public var value: Int?
    /// The control cannot be set.
    public var isReadOnly: Bool
    /// The control is inactive now (e.g. exposure time while auto exposure is on); setting it may not take effect.
    public var isInactive: Bool
    /// Menu entries for menu controls.
    public var menu: [MenuItem]

    /// Creates a control description.
    public init(
        id: UInt32, name: String, label: String, kind: Kind, minimum: Int, maximum: Int, step: Int, defaultValue: Int,
        value: Int?, isReadOnly: Bool, isInactive: Bool, menu: [MenuItem]
    ) {
        self.id = id
        self.name = name
        self.label = label
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.value = value
        self.isReadOnly = isReadOnly
        self.isInactive = isInactive
        self.menu = menu
    }

    /// `White Balance Temperature` → `white_balance_temperature`; `Exposure Time, Absolute` → `exposure_time_absolute`.
    public static func normalizedName(_ label: String) -> String {
        var result = ""
        var pendingSeparator = false
        for scalar in label.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                if pendingSeparator && !result.isEmpty { result.append("_") }
                result.unicodeScalars.append(scalar)
                pendingSeparator = false
            } else {
                pendingSeparator = true
            }
        }
        return result
    }

    /// Parses a value given on the command line: a number, `true`/`false`/`on`/`off` for booleans, or a menu
    /// entry's name (case-insensitive). Checks the range.
    /// - Throws: ``CameraControlError`` saying what is accepted.
    public func parse(_ text: String) throws(CameraControlError) -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var parsed: Int?
        if let number = Int(trimmed) {
            parsed = number
        } else if kind == .boolean {
            switch trimmed.lowercased() {
            case "true", "on", "yes": parsed = 1
            case "false", "off", "no": parsed = 0
            default: parsed = nil
            }
        } else if kind == .menu || kind == .integerMenu {
            parsed = menu.first { $0.name.lowercased() == trimmed.lowercased() }?.value
        }
        guard let value = parsed else {
            throw CameraControlError("'\(text)' is not a value for \(name); \(acceptedValues)")
        }
        if isReadOnly { throw CameraControlError("\(name) is read-only") }
        if kind == .menu || kind == .integerMenu, !menu.isEmpty, !menu.contains(where: { $0.value == value }) {
            throw CameraControlError("\(value) is not an entry of \(name); \(acceptedValues)")
        }
        guard kind == .button || (minimum...max(minimum, maximum)).contains(value) else {
            throw CameraControlError("\(value) is out of range for \(name); \(acceptedValues)")
        }
        return value
    }

    /// What values are accepted, for error messages and listings.
    public var acceptedValues: String {
        switch kind {
        case .boolean: return "use 0/1, on/off or true/false"
        case .menu, .integerMenu:
            return "use one of " + menu.map { "\($0.value) (\($0.name))" }.joined(separator: ", ")
        case .button: return "any value triggers it"
        case .integer: return "use \(minimum)...\(maximum)" + (step > 1 ? " in steps of \(step)" : "")
        }
    }
}

/// The controls this agent lists first, in this order, when the camera has them; others follow.
public enum CommonControls {
    /// Names of the common webcam controls.
    public static let names = [
        "brightness", "contrast", "saturation", "hue", "gamma", "sharpness", "gain",
        "white_balance_automatic", "white_balance_temperature", "auto_exposure", "exposure_time_absolute",
        "power_line_frequency", "zoom_absolute", "focus_automatic_continuous", "focus_absolute",
    ]

    /// `controls` with the common ones first, the others after, each group in camera order.
    public static func ordered(_ controls: [CameraControl]) -> [CameraControl] {
        let common = names.compactMap { name in controls.first { $0.name == name } }
        return common + controls.filter { !names.contains($0.name) }
    }
}


/// Something whose camera controls can be listed and set: the V4L2 camera source in the agent.
public protocol CameraControlling: Sendable {
    /// The camera's controls with their current values, common ones first.
    func cameraControls() throws -> [CameraControl]
    /// Sets control `name` (see ``CameraControl/name``) from its text form and returns it as it is now.
    /// - Throws: ``CameraControlError`` for an unknown name or a bad value, or the device's error.
    func setCameraControl(name: String, value: String) throws -> CameraControl
}
