import CamoCapture
import CamoMedia

/// Where a light of the camera model goes (night vision's infrared light, the status light): an LED of the
/// kernel's LED class (`/sys/class/leds/NAME`), or a control of the camera itself (`camera:NAME`, e.g. a UVC
/// camera's `led1_mode` mapped by uvcdynctrl, or an IR-cut switch its driver exposes). V4L2 has no standard control
/// for either, so the control is named in the configuration.
enum LightOutput: Sendable {
    /// A sysfs LED.
    case led(SysfsLED)
    /// A control of the agent's camera, by its command-line name.
    case cameraControl(String)

    /// The prefix that names a camera control instead of an LED.
    static let cameraPrefix = "camera:"

    /// `camera:NAME` or an LED's name under `root` (a missing LED is an error naming the ones there are).
    init(_ text: String, ledRoot: String) throws(SysfsLEDError) {
        if text.hasPrefix(Self.cameraPrefix) {
            self = .cameraControl(String(text.dropFirst(Self.cameraPrefix.count)).lowercased())
        } else {
            self = .led(try SysfsLED(name: text, root: ledRoot))
        }
    }

    /// What it is, for the settings' notes: `LED ir` or `camera control led1_mode`.
    var label: String {
        switch self {
        case .led(let led): "LED \(led.name)"
        case .cameraControl(let name): "camera control \(name)"
        }
    }

    /// The value that puts `control` at `level` (nil: off; 0...1: the share of its range, 1 for plain on):
    /// a boolean is 1 or 0; an integer runs from its minimum (off) to its maximum, on its step; a menu takes an
    /// entry named off or on where it has one, else its first (off) or last (on) entry. Nil for a control that
    /// cannot be set (a button, a read-only control).
    static func value(for control: CameraControl, level: Double?) -> Int? {
        guard !control.isReadOnly else { return nil }
        switch control.kind {
        case .boolean:
            return level == nil ? 0 : 1
        case .integer:
            guard let level else { return control.minimum }
            let span = Double(control.maximum - control.minimum)
            let step = max(1, control.step)
            let raw = Double(control.minimum) + span * min(1, max(0, level))
            let snapped = control.minimum + Int(((raw - Double(control.minimum)) / Double(step)).rounded()) * step
            return min(control.maximum, max(control.minimum, level > 0 ? max(snapped, control.minimum + step) : snapped))
        case .menu, .integerMenu:
            let wanted = level == nil ? "off" : "on"
            if let named = control.menu.first(where: { $0.name.lowercased() == wanted }) { return named.value }
            return level == nil ? (control.menu.first?.value ?? control.minimum) : (control.menu.last?.value ?? control.maximum)
        case .button:
            return nil
        }
    }
}
