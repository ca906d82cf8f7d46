import CamoCapture
import CamoMedia
import CamoProducerKit
import CamoWire
import Logging
import Synchronization

/// The host's power source as the read-only `powerSource` setting (the camera model's PowerSource), read from
/// /sys/class/power_supply each time the model is read.
struct PowerSourceSettings: SettingsProvider {
    var root = "/sys/class/power_supply"

    func settingDescriptors() -> [SettingDescriptor] {
        let power = PowerSource.read(root: root)
        var facts = ["source": power.source.rawValue, "wiredPresent": "\(power.wiredPresent)", "batPresent": "\(power.batteryPresent)"]
        if let level = power.batteryChargeLevel { facts["batChargeLevel"] = level.rawValue }
        if let percent = power.batteryPercent { facts["batPercent"] = "\(percent)" }
        if let state = power.chargingState { facts["chargingState"] = state.rawValue }
        return [SettingDescriptor(
            name: SettingsCatalog.Name.powerSource, label: "Power source", group: "power", kind: .info, value: .facts(facts),
            writable: false,
            note: power.wiredAssumed ? "no host battery in \(root): taken as wired" : nil)]
    }

    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError) {
        throw SettingsProviderError("\(name) is read-only")
    }
}

/// Night vision on an infrared light and the status light on another: each a sysfs LED class device or a control of
/// the camera (``LightOutput``), named in the configuration. `nightVision` `auto` follows the picture's brightness
/// (``NightVisionAuto``); the status light is lit while a studio receives the picture, at the chosen level (`auto`
/// is medium). A camera control is set again every 5 s while frames come, so a replugged camera (whose saved
/// controls are restored) gets the light's state back.
final class LightSettings: SettingsProvider {
    typealias N = SettingsCatalog.Name

    struct State {
        var nightVision = "auto"
        var auto = NightVisionAuto()
        var lastMeasure: UInt64 = 0
        var statusEnabled = true
        var statusBrightness = "auto"
        var streaming = false
        var lastReapply: UInt64 = 0
    }

    private let night: LightOutput?
    private let status: LightOutput?
    private let camera: @Sendable () -> (any CameraControlling)?
    private let state = Mutex(State())
    private let logger: Logger
    /// Tells the studios a setting changed by itself (auto night vision).
    private let changed: @Sendable ([String]) -> Void

    /// The lights named in the configuration: an LED under `root` (a missing one is an error naming the LEDs there
    /// are) or `camera:CONTROL`, a control of the camera `camera` gives; with the saved values.
    init(nightVisionLed: String?, statusLed: String?, root: String = "/sys/class/leds", saved: (String) -> SettingValue?,
         camera: @escaping @Sendable () -> (any CameraControlling)? = { nil },
         logger: Logger, changed: @escaping @Sendable ([String]) -> Void) throws(SysfsLEDError) {
        night = try nightVisionLed.map { text throws(SysfsLEDError) in try LightOutput(text, ledRoot: root) }
        status = try statusLed.map { text throws(SysfsLEDError) in try LightOutput(text, ledRoot: root) }
        self.camera = camera
        self.logger = logger
        self.changed = changed
        state.withLock { state in
            if case .text(let mode)? = saved(N.nightVision) { state.nightVision = mode }
            if case .bool(let enabled)? = saved(N.statusLightEnabled) { state.statusEnabled = enabled }
            if case .text(let level)? = saved(N.statusLightBrightness) { state.statusBrightness = level }
        }
        for case .led(let led) in [night, status].compactMap({ $0 }) { try? led.disableTrigger() }
        drive()
    }

    var hasLights: Bool { night != nil || status != nil }

    func settingDescriptors() -> [SettingDescriptor] {
        let now = state.withLock { $0 }
        var list: [SettingDescriptor] = []
        if let night {
            let lit = Self.nightLit(now)
            list.append(SettingDescriptor(
                name: N.nightVision, label: "Night vision", group: "lights", kind: .choice, value: .text(now.nightVision),
                defaultValue: .text("auto"), choices: ["off", "on", "auto"],
                note: "infrared light: \(night.label), \(lit ? "on" : "off") now"))
            list.append(SettingDescriptor(
                name: "nightVisionActive", label: "Night vision light on now", group: "lights", kind: .info, value: .bool(lit),
                writable: false))
        }
        if let status {
            list.append(SettingDescriptor(
                name: N.statusLightEnabled, label: "Status light", group: "lights", kind: .bool, value: .bool(now.statusEnabled),
                defaultValue: .bool(true), note: "\(status.label); lit while a studio receives the picture"))
            list.append(SettingDescriptor(
                name: N.statusLightBrightness, label: "Status light brightness", group: "lights", kind: .choice,
                value: .text(now.statusBrightness), defaultValue: .text("auto"), choices: ["low", "medium", "high", "auto"]))
        }
        return list
    }

    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError) {
        state.withLock { state in
            switch (name, value) {
            case (N.nightVision, .text(let mode)): state.nightVision = mode
            case (N.statusLightEnabled, .bool(let enabled)): state.statusEnabled = enabled
            case (N.statusLightBrightness, .text(let level)): state.statusBrightness = level
            default: break
            }
        }
        if let problem = drive() { throw SettingsProviderError(problem) }
    }

    /// Measures a captured frame's brightness for `auto` (at most twice a second) and switches the light; sets a
    /// camera control's light again every 5 s.
    func observe(_ frame: VideoFrame, now: UInt64) {
        let (flipped, reapply) = state.withLock { state -> (Bool, Bool) in
            var reapply = false
            if case .cameraControl? = night { reapply = true }
            if case .cameraControl? = status { reapply = true }
            reapply = reapply && now &- state.lastReapply >= 5_000_000_000
            if reapply { state.lastReapply = now }
            guard night != nil, state.nightVision == "auto", now &- state.lastMeasure >= 500_000_000 else { return (false, reapply) }
            state.lastMeasure = now
            let was = state.auto.isOn
            return (state.auto.update(time: now, meanLuma: NightVisionAuto.meanLuma(frame)) != was, reapply)
        }
        if flipped {
            let on = state.withLock { $0.auto.isOn }
            logger.info(on ? "Night vision on: the scene is dark" : "Night vision off: the scene is bright again")
        }
        if flipped || reapply { drive(quietly: !flipped) }
        if flipped { changed([N.nightVision, "nightVisionActive"]) }
    }

    /// Whether a studio receives the picture now (the status light's meaning).
    func setStreaming(_ streaming: Bool) {
        let changed = state.withLock { state -> Bool in
            defer { state.streaming = streaming }
            return state.streaming != streaming
        }
        if changed { drive() }
    }

    private static func nightLit(_ state: State) -> Bool {
        state.nightVision == "on" || (state.nightVision == "auto" && state.auto.isOn)
    }

    /// Sets the lights from the state; the first failure's sentence, if any (logged unless `quietly`).
    @discardableResult
    private func drive(quietly: Bool = false) -> String? {
        let now = state.withLock { $0 }
        var problem: String?
        let statusLevel: Double? = now.statusEnabled && now.streaming
            ? (now.statusBrightness == "low" ? 1.0 / 3 : now.statusBrightness == "high" ? 1 : 2.0 / 3) : nil
        for (output, level) in [(night, Self.nightLit(now) ? 1.0 : nil), (status, statusLevel)] {
            guard let output else { continue }
            do {
                try set(output, level: level)
            } catch {
                if !quietly { logger.warning("A light could not be set", metadata: ["light": "\(output.label)", "error": "\(error)"]) }
                problem = problem ?? "\(output.label): \(error)"
            }
        }
        return problem
    }

    /// One light at `level` (nil: off).
    private func set(_ output: LightOutput, level: Double?) throws {
        switch output {
        case .led(let led):
            guard let level else { return try led.setOn(false) }
            try led.set(brightness: level >= 1 ? led.maxBrightness : max(1, Int((Double(led.maxBrightness) * level).rounded())))
        case .cameraControl(let name):
            // No camera open yet (or unplugged): the light's state is kept and set when frames come (observe).
            guard let camera = camera() else { return }
            let controls = try camera.cameraControls()
            guard let control = controls.first(where: { $0.name == name }) else {
                throw SettingsProviderError("the camera has no control \(name); it has: \(controls.map(\.name).joined(separator: ", "))")
            }
            guard let value = LightOutput.value(for: control, level: level) else {
                throw SettingsProviderError("the camera's control \(name) cannot be set (\(control.isReadOnly ? "read-only" : control.kind.rawValue))")
            }
            if control.value != value { _ = try camera.setCameraControl(name: name, value: "\(value)") }
        }
    }
}
