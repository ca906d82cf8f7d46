import CamoMedia
import CamoWire
import Foundation

/// Settings that the host adds to the model (night vision and the status light on an LED, the speaker of
/// talkback, the power source): the agent passes providers to the controller; a library user may too.
///
/// A provider's descriptors replace the built-in ones of the same name, which otherwise say the setting is
/// unsupported and why. Called on the controller's settings queue, never on an event loop.
public protocol SettingsProvider: Sendable {
    /// The attributes this provider owns, with their current values.
    func settingDescriptors() -> [SettingDescriptor]
    /// Applies a value that was checked against the descriptor's kind and range.
    /// - Throws: ``SettingsProviderError`` with a reason the writer sees.
    func applySetting(name: String, value: SettingValue) throws(SettingsProviderError)
}

/// Why a provider did not apply a value: one sentence the studio and the CLI show.
public struct SettingsProviderError: Error, Sendable, CustomStringConvertible {
    /// The sentence.
    public var description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }
}

/// The attributes of the camera model the controller itself holds, and the checks every write goes through.
public enum SettingsCatalog {
    /// Names of the controller's own attributes.
    public enum Name {
        /// `streamingEnabled`.
        public static let streamingEnabled = "streamingEnabled"
        /// `microphoneMuted`.
        public static let microphoneMuted = "microphoneMuted"
        /// `recordingMicrophoneMuted`.
        public static let recordingMicrophoneMuted = "recordingMicrophoneMuted"
        /// `speakerMuted`.
        public static let speakerMuted = "speakerMuted"
        /// `speakerVolumeLevel`.
        public static let speakerVolumeLevel = "speakerVolumeLevel"
        /// `imageRotation`.
        public static let imageRotation = "imageRotation"
        /// `imageFlipHorizontal`.
        public static let imageFlipHorizontal = "imageFlipHorizontal"
        /// `imageFlipVertical`.
        public static let imageFlipVertical = "imageFlipVertical"
        /// `viewport`.
        public static let viewport = "viewport"
        /// `nightVision`.
        public static let nightVision = "nightVision"
        /// `statusLightEnabled`.
        public static let statusLightEnabled = "statusLightEnabled"
        /// `statusLightBrightness`.
        public static let statusLightBrightness = "statusLightBrightness"
        /// `powerSource`.
        public static let powerSource = "powerSource"
        /// `lastContactTimestamp`.
        public static let lastContactTimestamp = "lastContactTimestamp"
        /// `basicInformation`.
        public static let basicInformation = "basicInformation"
        /// `supportedEventTriggers` (read-only): the event triggers that really run on this camera.
        public static let supportedEventTriggers = "supportedEventTriggers"
        /// `enabledEventTriggers`: the triggers turned on, comma-separated (`motion,smokeAlarm`), or `none`.
        public static let enabledEventTriggers = "enabledEventTriggers"
        /// `motionSensitivity`: 1 (low) … 5 (medium) … 10 (high).
        public static let motionSensitivity = "motionSensitivity"
        /// `motionTimeControl.initialDuration`, s.
        public static let motionInitialDuration = "motionTimeControl.initialDuration"
        /// `motionTimeControl.augmentationDuration`, s.
        public static let motionAugmentationDuration = "motionTimeControl.augmentationDuration"
        /// `motionTimeControl.maxDuration`, s (10, 15, 30, 60, 120 or 180).
        public static let motionMaxDuration = "motionTimeControl.maxDuration"
        /// `motionTimeControl.blindDuration`, s.
        public static let motionBlindDuration = "motionTimeControl.blindDuration"
        /// `soundThreshold`: the level, dBFS, above which a sound is an event.
        public static let soundThreshold = "soundThreshold"
        /// `zones`: the activity zones, as JSON (ZoneManagement's TwoDCartesianZone list).
        public static let zones = "zones"
        /// `installedChimeSounds` (read-only): the doorbell's built-in chime sounds.
        public static let installedChimeSounds = "installedChimeSounds"
        /// `selectedChime`: the sound a doorbell press plays on the speaker.
        public static let selectedChime = "selectedChime"
        /// `externalChimeEnabled`: whether a press drives the wired chime's line.
        public static let externalChimeEnabled = "externalChimeEnabled"
        /// `externalChimeDuration`: how long the wired chime's line is held, ms.
        public static let externalChimeDuration = "externalChimeDuration"
        /// `transportStatus`: `active`, or `inactive` for the camera's video off; the privacy switch by the push transport
        /// model's name (writing it writes `streamingEnabled`).
        public static let transportStatus = "transportStatus"
        /// `supportedRecordingModes` (read-only): the recording modes this agent has.
        public static let supportedRecordingModes = "supportedRecordingModes"
        /// `availableRecordingModes` (read-only): the modes selectable now.
        public static let availableRecordingModes = "availableRecordingModes"
        /// `selectedRecordingMode`: what is kept (disabled, continuous, eventBased, eventTriggered, liveView, images).
        public static let selectedRecordingMode = "selectedRecordingMode"
        /// `recordingTriggerOptions.maxPreRollLen`, s: video kept before an event.
        public static let recordingPreRoll = "recordingTriggerOptions.maxPreRollLen"
        /// `recordingTriggerOptions.maxDuration`, s: the longest clip (10, 15, 30, 60, 120 or 180).
        public static let recordingMaxDuration = "recordingTriggerOptions.maxDuration"
        /// `recordingTriggerOptions.blindDuration`, s: after a clip, events start no new one.
        public static let recordingBlindDuration = "recordingTriggerOptions.blindDuration"
        /// `recordingTriggerOptions.triggeredDuration`, s: the event-triggered clip's length.
        public static let recordingTriggeredDuration = "recordingTriggerOptions.triggeredDuration"
        /// `recordingTriggerOptions.segmentDuration`, s: a continuous segment's length.
        public static let recordingSegmentDuration = "recordingTriggerOptions.segmentDuration"
    }

    /// Settings kept per camera (the rest are the agent's).
    static let perCamera: Set<String> = [Name.imageRotation, Name.imageFlipHorizontal, Name.imageFlipVertical, Name.viewport]

    /// The camera controls that do a flip in the camera itself, by setting.
    static let cameraFlipControls = [Name.imageFlipHorizontal: "horizontal_flip", Name.imageFlipVertical: "vertical_flip"]

    /// The image transform the per-camera values describe, leaving out the flips the camera does itself.
    static func transform(_ values: [String: SettingValue], cameraFlips: Set<String> = []) -> ImageTransform {
        var transform = ImageTransform()
        if case .int(let degrees)? = values[Name.imageRotation], let rotation = ImageRotation(rawValue: degrees) {
            transform.rotation = rotation
        }
        if case .bool(let flip)? = values[Name.imageFlipHorizontal], !cameraFlips.contains(Name.imageFlipHorizontal) {
            transform.flipHorizontal = flip
        }
        if case .bool(let flip)? = values[Name.imageFlipVertical], !cameraFlips.contains(Name.imageFlipVertical) {
            transform.flipVertical = flip
        }
        if case .rectangle(let r)? = values[Name.viewport], r.width > 0, r.height > 0 {
            let viewport = Viewport(x1: r.x1, y1: r.y1, x2: r.x2, y2: r.y2, space: VideoSize(width: r.width, height: r.height))
            if !viewport.isFull { transform.viewport = viewport }
        }
        return transform
    }

    /// The built-in descriptors, before providers and the camera's controls.
    static func core(
        agent: [String: SettingValue], camera: [String: SettingValue], captureSize: VideoSize, paused: Bool, muted: Bool,
        lastContact: String?, information: [String: String] = [:]
    ) -> [SettingDescriptor] {
        func bool(_ name: String, _ values: [String: SettingValue], default value: Bool) -> SettingValue {
            if case .bool(let b)? = values[name] { return .bool(b) }
            return .bool(value)
        }
        let full = SettingRectangle(x1: 0, y1: 0, x2: captureSize.width, y2: captureSize.height,
                                    width: captureSize.width, height: captureSize.height)
        var viewport = full
        if case .rectangle(let saved)? = camera[Name.viewport] { viewport = saved }
        let noSpeaker = "this host has no speaker for talkback (--speaker none, no sound card, or the page is off: --no-web)"
        return [
            SettingDescriptor(
                name: Name.streamingEnabled, label: "Camera on (privacy switch off)", group: "privacy", kind: .bool,
                value: .bool(!paused), defaultValue: .bool(true)),
            SettingDescriptor(
                name: Name.transportStatus, label: "Recording capability (inactive: the camera's video off)", group: "privacy", kind: .choice,
                value: .text(paused ? "inactive" : "active"), defaultValue: .text("active"), choices: ["active", "inactive"],
                note: "the privacy switch by the push transport model's name: inactive means no live view, no events, no recordings"),
            SettingDescriptor(
                name: Name.microphoneMuted, label: "Microphone muted", group: "audio", kind: .bool,
                value: .bool(muted), defaultValue: .bool(false)),
            SettingDescriptor(
                name: Name.recordingMicrophoneMuted, label: "Audio in recordings muted", group: "audio", kind: .bool,
                defaultValue: .bool(false), supported: false, note: "recordings are off (the agent runs with --no-recordings)"),
            SettingDescriptor(
                name: Name.speakerMuted, label: "Speaker muted", group: "audio", kind: .bool, defaultValue: .bool(false),
                supported: false, note: noSpeaker),
            SettingDescriptor(
                name: Name.speakerVolumeLevel, label: "Speaker volume", group: "audio", kind: .int, defaultValue: .int(50),
                minimum: 0, maximum: 100, supported: false, note: noSpeaker),
            SettingDescriptor(
                name: Name.imageRotation, label: "Rotation (degrees clockwise)", group: "image", kind: .int,
                value: camera[Name.imageRotation] ?? .int(0), defaultValue: .int(0), allowed: [0, 90, 180, 270]),
            SettingDescriptor(
                name: Name.imageFlipHorizontal, label: "Mirror (flip left-right)", group: "image", kind: .bool,
                value: bool(Name.imageFlipHorizontal, camera, default: false), defaultValue: .bool(false)),
            SettingDescriptor(
                name: Name.imageFlipVertical, label: "Flip upside down", group: "image", kind: .bool,
                value: bool(Name.imageFlipVertical, camera, default: false), defaultValue: .bool(false)),
            SettingDescriptor(
                name: Name.viewport, label: "Viewport (zoom and crop)", group: "image", kind: .rectangle,
                value: .rectangle(viewport), defaultValue: .rectangle(full),
                note: "in pixels of \(captureSize) (the largest size a studio asks for; it scales with the frame); the crop is scaled back to the full size"),
            SettingDescriptor(
                name: Name.nightVision, label: "Night vision", group: "lights", kind: .choice, defaultValue: .text("auto"),
                choices: ["off", "on", "auto"], supported: false,
                note: "no infrared light: give the agent an LED with --night-vision-led (config key nightVisionLed)"),
            SettingDescriptor(
                name: Name.statusLightEnabled, label: "Status light", group: "lights", kind: .bool, defaultValue: .bool(true),
                supported: false, note: "no status light: give the agent an LED with --status-led (config key statusLed)"),
            SettingDescriptor(
                name: Name.statusLightBrightness, label: "Status light brightness", group: "lights", kind: .choice,
                defaultValue: .text("auto"), choices: ["low", "medium", "high", "auto"], supported: false,
                note: "no status light: give the agent an LED with --status-led (config key statusLed)"),
            SettingDescriptor(
                name: Name.powerSource, label: "Power source", group: "power", kind: .info, writable: false, supported: false,
                note: "not read on this host"),
            SettingDescriptor(
                name: Name.lastContactTimestamp, label: "Last contact with a studio", group: "info", kind: .info,
                value: lastContact.map { .text($0) }, writable: false),
            SettingDescriptor(
                name: Name.basicInformation, label: "Basic information", group: "info", kind: .info,
                value: .facts(information), writable: false),
        ]
    }

    /// The descriptor of a V4L2 control.
    static func descriptor(_ control: CameraControl) -> SettingDescriptor {
        let menu = control.kind == .menu || control.kind == .integerMenu
        let kind: SettingDescriptor.Kind = switch control.kind {
        case .boolean: .bool
        case .button: .button
        case .integer, .menu, .integerMenu: .int
        }
        func value(_ number: Int?) -> SettingValue? {
            guard let number else { return nil }
            return control.kind == .boolean ? .bool(number != 0) : .int(number)
        }
        var note: String?
        if control.isInactive { note = "inactive now (an automatic mode controls it)" }
        if control.name == "privacy" { note = "the camera's own privacy switch" }
        return SettingDescriptor(
            name: control.name, label: control.label, group: "camera", kind: kind, value: value(control.value),
            defaultValue: control.kind == .button ? nil : value(control.defaultValue),
            minimum: kind == .int ? control.minimum : nil, maximum: kind == .int ? control.maximum : nil,
            step: kind == .int && control.step > 1 ? control.step : nil,
            allowed: menu ? control.menu.map(\.value) : nil, choices: menu ? control.menu.map(\.name) : nil,
            writable: !control.isReadOnly && control.name != "privacy", note: note)
    }

    /// Checks a value against a descriptor: the value to apply, or the reason it is refused (naming what is allowed).
    public static func check(_ value: SettingValue, against d: SettingDescriptor, captureSize: VideoSize) -> Result<SettingValue, SettingRefusal> {
        func refuse(_ reason: String) -> Result<SettingValue, SettingRefusal> { .failure(SettingRefusal(name: d.name, reason: reason)) }
        guard d.supported else { return refuse("\(d.name) is not supported here: \(d.note ?? "this camera does not have it")") }
        guard d.writable else { return refuse("\(d.name) is read-only") }
        switch (d.kind, value) {
        case (.bool, .bool):
            return .success(value)
        case (.bool, _):
            return refuse("\(d.name) takes true or false, not \(value)")
        case (.int, .int(let number)):
            if let allowed = d.allowed, !allowed.isEmpty {
                guard allowed.contains(number) else { return refuse("\(d.name) must be \(d.range) (got \(number))") }
                return .success(value)
            }
            let low = d.minimum ?? Int.min, high = d.maximum ?? Int.max
            guard low <= number, number <= high else { return refuse("\(d.name) must be in \(low)...\(high) (got \(number))") }
            if let step = d.step, step > 1, (number - low) % step != 0 {
                return refuse("\(d.name) must be \(low) plus a multiple of \(step) (got \(number))")
            }
            return .success(value)
        case (.int, .text(let text)):
            // A menu entry by name.
            if let choices = d.choices, let allowed = d.allowed,
               let index = choices.firstIndex(where: { $0.lowercased() == text.lowercased() }), index < allowed.count {
                return .success(.int(allowed[index]))
            }
            return refuse("\(d.name) takes \(d.range), not '\(text)'")
        case (.int, _):
            return refuse("\(d.name) takes a number (\(d.range)), not \(value)")
        case (.choice, .text(let text)):
            guard let choice = d.choices?.first(where: { $0.lowercased() == text.lowercased() }) else {
                return refuse("\(d.name) must be \(d.range) (got '\(text)')")
            }
            return .success(.text(choice))
        case (.choice, _):
            return refuse("\(d.name) takes \(d.range), not \(value)")
        case (.rectangle, .rectangle(var r)):
            if r.width == 0 && r.height == 0 {
                r.width = captureSize.width
                r.height = captureSize.height
            }
            let viewport = Viewport(x1: r.x1, y1: r.y1, x2: r.x2, y2: r.y2, space: VideoSize(width: r.width, height: r.height))
            if let problem = viewport.problem { return refuse(problem) }
            return .success(.rectangle(r))
        case (.rectangle, _):
            return refuse("\(d.name) takes a rectangle {x1,y1,x2,y2} (x1,y1-x2,y2 on the command line), not \(value)")
        case (.button, _):
            return .success(value)
        case (.info, _):
            return refuse("\(d.name) is read-only")
        case (.text, .text):
            return .success(value)
        case (.text, _):
            return refuse("\(d.name) takes a text (\(d.range)), not \(value)")
        }
    }


}
