import CamoDoorbell
import CamoProducerKit
import CamoWire
import Synchronization

/// The settings model's chime: `installedChimeSounds` (read-only), `selectedChime`, and the wired chime's
/// `externalChimeEnabled` and `externalChimeDuration` (ms), supported when the agent has one (`externalChime`);
/// each change goes to the doorbell at once, and the saved values come back at start.
final class DoorbellSettings: SettingsProvider {
    typealias N = SettingsCatalog.Name

    struct Chime: Equatable {
        var selected = ChimeSound.standard.rawValue
        var externalEnabled = true
        var externalDurationMs = 1_000
    }

    /// The wired chime's hold time, ms.
    static let durationRange = 100...10_000

    private let chime = Mutex(Chime())
    private let externalChime: String?
    private let apply: @Sendable (Chime) -> Void

    /// `externalChime` is the configuration's wired chime (nil: none); `apply` sets it on the doorbell (called at
    /// once with the saved values).
    init(externalChime: String?, saved: (String) -> SettingValue?, apply: @escaping @Sendable (Chime) -> Void) {
        self.externalChime = externalChime
        self.apply = apply
        let start = chime.withLock { chime in
            if case .text(let name)? = saved(N.selectedChime), let sound = ChimeSound(named: name) { chime.selected = sound.rawValue }
            if case .bool(let enabled)? = saved(N.externalChimeEnabled) { chime.externalEnabled = enabled }
            if case .int(let duration)? = saved(N.externalChimeDuration) {
                chime.externalDurationMs = min(max(duration, Self.durationRange.lowerBound), Self.durationRange.upperBound)
            }
            return chime
        }
        apply(start)
    }

    var current: Chime { chime.withLock { $0 } }

    func settingDescriptors() -> [SettingDescriptor] {
        let now = current
        let wired = externalChime != nil
        let note = externalChime.map { "the wired chime on \($0)" }
            ?? "no wired chime: give the agent one with the config key externalChime (gpio:LINE_NAME or gpio:CHIP:OFFSET)"
        return [
            SettingDescriptor(
                name: N.installedChimeSounds, label: "Chime sounds", group: "doorbell", kind: .info,
                value: .facts(Dictionary(uniqueKeysWithValues: ChimeSound.allCases.map { ($0.rawValue, $0.label) })), writable: false),
            SettingDescriptor(
                name: N.selectedChime, label: "Chime", group: "doorbell", kind: .choice, value: .text(now.selected),
                defaultValue: .text(ChimeSound.standard.rawValue), choices: ChimeSound.allCases.map(\.rawValue),
                note: "played on the speaker at each press"),
            SettingDescriptor(
                name: N.externalChimeEnabled, label: "Wired chime", group: "doorbell", kind: .bool,
                value: wired ? .bool(now.externalEnabled) : nil, defaultValue: .bool(true), supported: wired, note: note),
            SettingDescriptor(
                name: N.externalChimeDuration, label: "Wired chime duration (ms)", group: "doorbell", kind: .int,
                value: wired ? .int(now.externalDurationMs) : nil, defaultValue: .int(1_000),
                minimum: Self.durationRange.lowerBound, maximum: Self.durationRange.upperBound, supported: wired, note: note),
        ]
    }

    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError) {
        let next = try chime.withLock { (chime) throws(SettingsProviderError) -> Chime in
            switch (name, value) {
            case (N.selectedChime, .text(let text)):
                guard let sound = ChimeSound(named: text) else {
                    throw SettingsProviderError("selectedChime must be one of \(ChimeSound.allCases.map(\.rawValue).joined(separator: ", ")) (got '\(text)')")
                }
                chime.selected = sound.rawValue
            case (N.externalChimeEnabled, .bool(let enabled)): chime.externalEnabled = enabled
            case (N.externalChimeDuration, .int(let duration)): chime.externalDurationMs = duration
            default: break
            }
            return chime
        }
        apply(next)
    }
}
