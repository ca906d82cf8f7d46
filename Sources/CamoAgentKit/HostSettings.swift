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

/// Night vision on an infrared LED and the status light on another (sysfs LED class devices named in the
/// configuration). `nightVision` `auto` follows the picture's brightness (``NightVisionAuto``); the status light is
/// lit while a studio receives the picture, at the chosen level (`auto` is medium).
final class LightSettings: SettingsProvider {
    typealias N = SettingsCatalog.Name

    struct State {
        var nightVision = "auto"
        var auto = NightVisionAuto()
        var lastMeasure: UInt64 = 0
        var statusEnabled = true
        var statusBrightness = "auto"
        var streaming = false
    }

    private let nightLED: SysfsLED?
    private let statusLED: SysfsLED?
    private let state = Mutex(State())
    private let logger: Logger
    /// Tells the studios a setting changed by itself (auto night vision).
    private let changed: @Sendable ([String]) -> Void

    /// The LEDs named in the configuration (a missing one is an error naming the LEDs there are), with the saved values.
    init(nightVisionLed: String?, statusLed: String?, root: String = "/sys/class/leds", saved: (String) -> SettingValue?,
         logger: Logger, changed: @escaping @Sendable ([String]) -> Void) throws(SysfsLEDError) {
        nightLED = try nightVisionLed.map { name throws(SysfsLEDError) in try SysfsLED(name: name, root: root) }
        statusLED = try statusLed.map { name throws(SysfsLEDError) in try SysfsLED(name: name, root: root) }
        self.logger = logger
        self.changed = changed
        state.withLock { state in
            if case .text(let mode)? = saved(N.nightVision) { state.nightVision = mode }
            if case .bool(let enabled)? = saved(N.statusLightEnabled) { state.statusEnabled = enabled }
            if case .text(let level)? = saved(N.statusLightBrightness) { state.statusBrightness = level }
        }
        for led in [nightLED, statusLED].compactMap({ $0 }) { try? led.disableTrigger() }
        drive()
    }

    var hasLights: Bool { nightLED != nil || statusLED != nil }

    func settingDescriptors() -> [SettingDescriptor] {
        let now = state.withLock { $0 }
        var list: [SettingDescriptor] = []
        if let nightLED {
            let lit = now.nightVision == "on" || (now.nightVision == "auto" && now.auto.isOn)
            list.append(SettingDescriptor(
                name: N.nightVision, label: "Night vision", group: "lights", kind: .choice, value: .text(now.nightVision),
                defaultValue: .text("auto"), choices: ["off", "on", "auto"],
                note: "infrared LED \(nightLED.name), \(lit ? "on" : "off") now"))
            list.append(SettingDescriptor(
                name: "nightVisionActive", label: "Night vision light on now", group: "lights", kind: .info, value: .bool(lit),
                writable: false))
        }
        if let statusLED {
            list.append(SettingDescriptor(
                name: N.statusLightEnabled, label: "Status light", group: "lights", kind: .bool, value: .bool(now.statusEnabled),
                defaultValue: .bool(true), note: "LED \(statusLED.name); lit while a studio receives the picture"))
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

    /// Measures a captured frame's brightness for `auto` (at most twice a second) and switches the light.
    func observe(_ frame: VideoFrame, now: UInt64) {
        let flipped = state.withLock { state -> Bool? in
            guard nightLED != nil, state.nightVision == "auto", now &- state.lastMeasure >= 500_000_000 else { return nil }
            state.lastMeasure = now
            let was = state.auto.isOn
            return state.auto.update(time: now, meanLuma: NightVisionAuto.meanLuma(frame)) != was ? true : nil
        }
        guard flipped != nil else { return }
        let on = state.withLock { $0.auto.isOn }
        logger.info(on ? "Night vision on: the scene is dark" : "Night vision off: the scene is bright again")
        drive()
        changed([N.nightVision, "nightVisionActive"])
    }

    /// Whether a studio receives the picture now (the status light's meaning).
    func setStreaming(_ streaming: Bool) {
        let changed = state.withLock { state -> Bool in
            defer { state.streaming = streaming }
            return state.streaming != streaming
        }
        if changed { drive() }
    }

    /// Sets the LEDs from the state; the first failure's sentence, if any.
    @discardableResult
    private func drive() -> String? {
        let now = state.withLock { $0 }
        var problem: String?
        do {
            if let nightLED {
                try nightLED.setOn(now.nightVision == "on" || (now.nightVision == "auto" && now.auto.isOn))
            }
            if let statusLED {
                if now.statusEnabled && now.streaming {
                    let level: LEDLevel = switch now.statusBrightness {
                    case "low": .low
                    case "high": .high
                    default: .medium
                    }
                    try statusLED.set(level: level)
                } else {
                    try statusLED.setOn(false)
                }
            }
        } catch {
            logger.warning("An LED could not be set", metadata: ["error": "\(error)"])
            problem = "\(error)"
        }
        return problem
    }
}
