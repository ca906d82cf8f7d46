import CamoEvents
import CamoProducerKit
import CamoWire
import Foundation
import Synchronization

/// The settings model's event attributes (AvStreamAnalysis, ZoneManagement, the trigger options' sensitivity and
/// time control): `supportedEventTriggers`, `enabledEventTriggers`, `motionSensitivity`, `motionTimeControl.*`,
/// `soundThreshold` and `zones`. Each write is checked here (a refused one changes nothing and says why), goes
/// to the ``EventMonitor`` at once, and is saved by the controller; the saved values come back at start.
final class EventSettingsProvider: SettingsProvider {
    typealias N = SettingsCatalog.Name

    private let monitor: EventMonitor
    private let current: Mutex<EventSettings>

    /// The provider for `monitor`, starting from the saved values (`saved`), which go to the monitor at once.
    init(monitor: EventMonitor, saved: (String) -> SettingValue?) {
        self.monitor = monitor
        var settings = monitor.settings
        for name in [N.enabledEventTriggers, N.motionSensitivity, N.motionInitialDuration, N.motionAugmentationDuration,
                     N.motionMaxDuration, N.motionBlindDuration, N.soundThreshold, N.zones] {
            if let value = saved(name) { try? Self.update(&settings, name: name, value: value, supported: Set(EventTrigger.allCases)) }
        }
        current = Mutex(settings)
        monitor.apply(settings)
    }

    /// The event settings now.
    var settings: EventSettings { current.withLock { $0 } }

    private var supported: [EventTrigger] {
        EventTrigger.supportedEventTriggers(doorbellButtonConfigured: monitor.doorbellButtonConfigured)
    }

    func settingDescriptors() -> [SettingDescriptor] {
        let now = settings
        let supported = supported
        let unsupported = EventTrigger.allCases.filter { !supported.contains($0) }.map { trigger in
            "\(trigger.rawValue) (\(trigger.unsupportedReason(doorbellButtonConfigured: monitor.doorbellButtonConfigured) ?? ""))"
        }
        let zonesJSON = (try? String(decoding: Self.encoder.encode(now.zones.zones), as: UTF8.self)) ?? "[]"
        let defaults = EventSettings()
        return [
            SettingDescriptor(
                name: N.supportedEventTriggers, label: "Event triggers this camera has", group: "events", kind: .info,
                value: .text(supported.map(\.rawValue).joined(separator: ",")), writable: false,
                note: unsupported.isEmpty ? nil : "not here: " + unsupported.joined(separator: "; ")),
            SettingDescriptor(
                name: N.enabledEventTriggers, label: "Event triggers on", group: "events", kind: .text,
                value: .text(Self.list(now.enabledTriggers, order: supported)),
                defaultValue: .text(Self.list(defaults.enabledTriggers, order: supported)),
                note: "a comma-separated list of supportedEventTriggers, or none"),
            SettingDescriptor(
                name: N.motionSensitivity, label: "Motion sensitivity", group: "events", kind: .int,
                value: .int(now.motionSensitivity.level), defaultValue: .int(MotionSensitivity.medium.level), minimum: 1, maximum: 10,
                note: "1 low, 5 medium, 10 high"),
            SettingDescriptor(
                name: N.motionInitialDuration, label: "Event length after activity, s", group: "events", kind: .int,
                value: .int(Int(now.timeControl.initialDuration)), defaultValue: .int(Int(defaults.timeControl.initialDuration)),
                minimum: 1, maximum: 180),
            SettingDescriptor(
                name: N.motionAugmentationDuration, label: "Extension per activity, s", group: "events", kind: .int,
                value: .int(Int(now.timeControl.augmentationDuration)), defaultValue: .int(Int(defaults.timeControl.augmentationDuration)),
                minimum: 0, maximum: 180),
            SettingDescriptor(
                name: N.motionMaxDuration, label: "Longest event, s", group: "events", kind: .int,
                value: .int(Int(now.timeControl.maxDuration)), defaultValue: .int(Int(defaults.timeControl.maxDuration)),
                allowed: MotionTimeControl.maxDurationChoices.map { Int($0) }),
            SettingDescriptor(
                name: N.motionBlindDuration, label: "Quiet time after an event, s", group: "events", kind: .int,
                value: .int(Int(now.timeControl.blindDuration)), defaultValue: .int(Int(defaults.timeControl.blindDuration)),
                minimum: 0, maximum: 3_600),
            SettingDescriptor(
                name: N.soundThreshold, label: "Sound event level, dBFS", group: "events", kind: .int,
                value: .int(Int(now.soundThresholdDBFS.rounded())), defaultValue: .int(Int(defaults.soundThresholdDBFS)),
                minimum: -90, maximum: 0, note: "the sound trigger fires above it for 200 ms"),
            SettingDescriptor(
                name: N.zones, label: "Activity zones", group: "events", kind: .text, value: .text(zonesJSON), defaultValue: .text("[]"),
                note: "JSON: [{\"id\":1,\"name\":\"door\",\"use\":\"motion\",\"vertices\":[{\"x\":0,\"y\":0},…],\"color\":\"#F439A0\"}], "
                    + "x and y in 0...\(ZoneSpace.max), at most \(ZoneList.maxZones) zones of \(ActivityZone.minVertices)...\(ActivityZone.maxVertices) vertices"),
        ]
    }

    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError) {
        var next = settings
        try Self.update(&next, name: name, value: value, supported: Set(supported))
        current.withLock { $0 = next }
        monitor.apply(next)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func list(_ triggers: Set<EventTrigger>, order: [EventTrigger]) -> String {
        let names = EventTrigger.allCases.filter { triggers.contains($0) && order.contains($0) }.map(\.rawValue)
        return names.isEmpty ? "none" : names.joined(separator: ",")
    }

    /// Applies one written value to `settings`, or says why it cannot be.
    static func update(_ settings: inout EventSettings, name: String, value: SettingValue, supported: Set<EventTrigger>) throws(SettingsProviderError) {
        switch (name, value) {
        case (N.enabledEventTriggers, .text(let text)):
            settings.enabledTriggers = try triggers(text, supported: supported)
        case (N.motionSensitivity, .int(let level)):
            settings.motionSensitivity = MotionSensitivity(level)
        case (N.motionInitialDuration, .int(let seconds)), (N.motionAugmentationDuration, .int(let seconds)),
             (N.motionMaxDuration, .int(let seconds)), (N.motionBlindDuration, .int(let seconds)):
            var control = settings.timeControl
            guard (0...3_600).contains(seconds) else { throw SettingsProviderError("\(name) must be 0...3600 s (got \(seconds))") }
            switch name {
            case N.motionInitialDuration: control.initialDuration = UInt16(seconds)
            case N.motionAugmentationDuration: control.augmentationDuration = UInt16(seconds)
            case N.motionMaxDuration: control.maxDuration = UInt32(seconds)
            default: control.blindDuration = UInt16(seconds)
            }
            do { try control.validate() } catch { throw SettingsProviderError("\(name) \(seconds) does not fit: \(error)") }
            settings.timeControl = control
        case (N.soundThreshold, .int(let level)):
            settings.soundThresholdDBFS = Float(level)
        case (N.zones, .text(let text)):
            settings.zones = try zones(text)
        default:
            throw SettingsProviderError("\(name) cannot take \(value)")
        }
    }

    /// `motion,smokeAlarm` (or `none`) as triggers; unknown or unsupported names are refused with the list there is.
    static func triggers(_ text: String, supported: Set<EventTrigger>) throws(SettingsProviderError) -> Set<EventTrigger> {
        let names = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        if names.isEmpty || names == ["none"] { return [] }
        let choices = EventTrigger.allCases.filter(supported.contains).map(\.rawValue).joined(separator: ", ")
        var triggers: Set<EventTrigger> = []
        for name in names {
            guard let trigger = EventTrigger(rawValue: name) else {
                throw SettingsProviderError("enabledEventTriggers: '\(name)' is not a trigger; this camera has \(choices)")
            }
            if let reason = trigger.unsupportedReason(doorbellButtonConfigured: supported.contains(.doorbellPress)) {
                throw SettingsProviderError("enabledEventTriggers: \(name) is not supported here (\(reason)); this camera has \(choices)")
            }
            triggers.insert(trigger)
        }
        return triggers
    }

    /// The zones' JSON (an array of zones, or `{"zones":[…]}`) as a checked list; the first problem is refused.
    static func zones(_ text: String) throws(SettingsProviderError) -> ZoneList {
        let data = Data(text.utf8)
        let zones: [ActivityZone]
        do {
            if let list = try? JSONDecoder().decode(ZoneList.self, from: data) { return list }
            zones = try JSONDecoder().decode([ActivityZone].self, from: data)
        } catch {
            throw SettingsProviderError("zones is not a JSON list of zones (\(Self.reason(error))); e.g. "
                + "[{\"id\":1,\"name\":\"door\",\"use\":\"motion\",\"vertices\":[{\"x\":0,\"y\":0},{\"x\":1024,\"y\":0},{\"x\":1024,\"y\":2048}],\"color\":\"#F439A0\"}]")
        }
        do {
            return try ZoneList(zones: zones)
        } catch {
            throw SettingsProviderError("zones: \(error)")
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?, .keyNotFound(_, let context)?, .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return (path.isEmpty ? "" : "at \(path): ") + context.debugDescription
        default:
            return "\(error)"
        }
    }
}
