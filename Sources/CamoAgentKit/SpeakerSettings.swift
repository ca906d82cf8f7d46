import CamoProducerKit
import CamoWire
import Synchronization

/// The settings model's `speakerMuted` and `speakerVolumeLevel` (0–100) for talkback's speaker: supported when the
/// host has one; each change goes to the live view's speaker at once, and the saved values come back at start.
final class SpeakerSettings: SettingsProvider {
    typealias N = SettingsCatalog.Name

    struct Level: Equatable {
        var muted = false
        var volume = 50
    }

    private let level = Mutex(Level())
    private let speaker: String
    private let apply: @Sendable (Level) -> Void

    /// `speaker` names the output in notes; `apply` sets it on the live view (called at once with the saved values).
    init(speaker: String, saved: (String) -> SettingValue?, apply: @escaping @Sendable (Level) -> Void) {
        self.speaker = speaker
        self.apply = apply
        let start = level.withLock { level in
            if case .bool(let muted)? = saved(N.speakerMuted) { level.muted = muted }
            if case .int(let volume)? = saved(N.speakerVolumeLevel) { level.volume = min(max(volume, 0), 100) }
            return level
        }
        apply(start)
    }

    var current: Level { level.withLock { $0 } }

    func settingDescriptors() -> [SettingDescriptor] {
        let now = current
        return [
            SettingDescriptor(
                name: N.speakerMuted, label: "Speaker muted", group: "audio", kind: .bool, value: .bool(now.muted),
                defaultValue: .bool(false), note: "talkback plays on \(speaker)"),
            SettingDescriptor(
                name: N.speakerVolumeLevel, label: "Speaker volume", group: "audio", kind: .int, value: .int(now.volume),
                defaultValue: .int(50), minimum: 0, maximum: 100, note: "talkback plays on \(speaker)"),
        ]
    }

    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError) {
        let next = level.withLock { level -> Level in
            switch (name, value) {
            case (N.speakerMuted, .bool(let muted)): level.muted = muted
            case (N.speakerVolumeLevel, .int(let volume)): level.volume = volume
            default: break
            }
            return level
        }
        apply(next)
    }
}
