import CamoEvents
import CamoProducerKit
import CamoRecording
import CamoWire
import Synchronization

/// The settings model's recording attributes (RecordingMode, the push transport's trigger options, and
/// `recordingMicrophoneMuted`): `supportedRecordingModes`, `availableRecordingModes`, `selectedRecordingMode`, the
/// pre-roll, the longest clip, the blind time, the event-triggered clip's and the segment's lengths. A write is
/// checked here (a mode that is not available now is refused with the reason), goes to the ``ClipRecorder`` at once,
/// and is saved by the controller; the saved values come back at start.
final class RecordingSettings: SettingsProvider {
    typealias N = SettingsCatalog.Name

    private let recorder: ClipRecorder
    private let current: Mutex<RecordingOptions>
    private let unavailable: @Sendable () -> [RecordingMode: String]

    /// The provider for `recorder`, starting from the saved values; `unavailable` says which modes cannot be chosen
    /// now and why.
    init(recorder: ClipRecorder, saved: (String) -> SettingValue?, unavailable: @escaping @Sendable () -> [RecordingMode: String]) {
        self.recorder = recorder
        self.unavailable = unavailable
        var options = RecordingOptions()
        for name in [N.selectedRecordingMode, N.recordingPreRoll, N.recordingMaxDuration, N.recordingBlindDuration,
                     N.recordingTriggeredDuration, N.recordingSegmentDuration, N.recordingMicrophoneMuted] {
            if let value = saved(name) { try? Self.update(&options, name: name, value: value) }
        }
        current = Mutex(options)
        recorder.apply(options)
    }

    /// The options now.
    var options: RecordingOptions { current.withLock { $0 } }

    func settingDescriptors() -> [SettingDescriptor] {
        let now = options
        let defaults = RecordingOptions()
        let unavailable = unavailable()
        let available = RecordingMode.allCases.filter { unavailable[$0] == nil }
        let reasons = RecordingMode.allCases.compactMap { mode in unavailable[mode].map { "\(mode.rawValue): \($0)" } }
        return [
            SettingDescriptor(
                name: N.supportedRecordingModes, label: "Recording modes", group: "recording", kind: .info,
                value: .text(RecordingMode.allCases.map(\.rawValue).joined(separator: ",")), writable: false),
            SettingDescriptor(
                name: N.availableRecordingModes, label: "Recording modes available now", group: "recording", kind: .info,
                value: .text(available.map(\.rawValue).joined(separator: ",")), writable: false,
                note: reasons.isEmpty ? nil : "not now: " + reasons.joined(separator: "; ")),
            SettingDescriptor(
                name: N.selectedRecordingMode, label: "Recording mode", group: "recording", kind: .choice,
                value: .text(now.mode.rawValue), defaultValue: .text(defaults.mode.rawValue), choices: RecordingMode.allCases.map(\.rawValue),
                note: "liveView and disabled keep nothing"),
            SettingDescriptor(
                name: N.recordingPreRoll, label: "Pre-roll, s", group: "recording", kind: .int, value: .int(now.preRollSeconds),
                defaultValue: .int(defaults.preRollSeconds), minimum: 0, maximum: 10,
                note: "the clip starts at the keyframe before it: up to one GOP more"),
            SettingDescriptor(
                name: N.recordingMaxDuration, label: "Longest clip, s", group: "recording", kind: .int, value: .int(now.maxClipSeconds),
                defaultValue: .int(defaults.maxClipSeconds), allowed: RecordingOptions.maxClipChoices),
            SettingDescriptor(
                name: N.recordingBlindDuration, label: "No new clip for, s", group: "recording", kind: .int, value: .int(now.blindSeconds),
                defaultValue: .int(defaults.blindSeconds), minimum: 0, maximum: 3_600),
            SettingDescriptor(
                name: N.recordingTriggeredDuration, label: "Event-triggered clip, s", group: "recording", kind: .int,
                value: .int(now.triggeredClipSeconds), defaultValue: .int(defaults.triggeredClipSeconds), minimum: 5, maximum: 60),
            SettingDescriptor(
                name: N.recordingSegmentDuration, label: "Continuous segment, s", group: "recording", kind: .int,
                value: .int(now.segmentSeconds), defaultValue: .int(defaults.segmentSeconds), minimum: 10, maximum: 600),
            SettingDescriptor(
                name: N.recordingMicrophoneMuted, label: "Audio in recordings muted", group: "audio", kind: .bool,
                value: .bool(now.microphoneMuted), defaultValue: .bool(false), note: "muted: clips have no audio track"),
        ]
    }

    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError) {
        var next = options
        try Self.update(&next, name: name, value: value)
        if name == N.selectedRecordingMode, let reason = unavailable()[next.mode] {
            throw SettingsProviderError("\(next.mode.rawValue) is not available now: \(reason)")
        }
        current.withLock { $0 = next }
        recorder.apply(next)
    }

    /// Applies one written value to `options`, or says why it cannot be.
    static func update(_ options: inout RecordingOptions, name: String, value: SettingValue) throws(SettingsProviderError) {
        switch (name, value) {
        case (N.selectedRecordingMode, .text(let text)):
            guard let mode = RecordingMode(rawValue: text) else {
                throw SettingsProviderError("\(text) is not a recording mode; use one of \(RecordingMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            options.mode = mode
        case (N.recordingPreRoll, .int(let seconds)): options.preRollSeconds = seconds
        case (N.recordingMaxDuration, .int(let seconds)): options.maxClipSeconds = seconds
        case (N.recordingBlindDuration, .int(let seconds)): options.blindSeconds = seconds
        case (N.recordingTriggeredDuration, .int(let seconds)): options.triggeredClipSeconds = seconds
        case (N.recordingSegmentDuration, .int(let seconds)): options.segmentSeconds = seconds
        case (N.recordingMicrophoneMuted, .bool(let muted)): options.microphoneMuted = muted
        default: throw SettingsProviderError("\(name) cannot be set to \(value)")
        }
        if let problem = options.problem() { throw SettingsProviderError(problem) }
    }
}
