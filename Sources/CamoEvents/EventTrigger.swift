/// What can start an event: the model's event trigger types (AvStreamAnalysis, plus motion and the doorbell
/// button), spelled as the model spells them in JSON.
public enum EventTrigger: String, Sendable, Hashable, Codable, CaseIterable {
    /// Motion in an activity zone, or anywhere in the picture when there are no zones (``MotionDetector``).
    case motion
    /// Any loud sound (``SoundLevelDetector``).
    case sound
    /// A person talking.
    case personTalking
    /// A dog barking.
    case dogBark
    /// Glass breaking.
    case glassBreak
    /// A smoke alarm's T3 pattern (``AlarmPatternDetector``).
    case smokeAlarm
    /// A carbon-monoxide alarm's T4 pattern (``AlarmPatternDetector``).
    case coAlarm
    /// The doorbell button was pressed.
    case doorbellPress

    /// Why the three classified sounds do not run here.
    public static let soundClassificationUnavailable =
        "needs a sound classification model; none from Debian or PyPI runs here"

    /// Whether the trigger comes from the microphone (device-wide: zones only filter motion).
    public var isSound: Bool {
        switch self {
        case .sound, .personTalking, .dogBark, .glassBreak, .smokeAlarm, .coAlarm: true
        case .motion, .doorbellPress: false
        }
    }

    /// Why this trigger cannot run on this camera, or nil when it can: person talking, dog bark and glass break
    /// need a sound classification model, and none from Debian or PyPI runs here; the doorbell press needs a
    /// button.
    public func unsupportedReason(doorbellButtonConfigured: Bool) -> String? {
        switch self {
        case .motion, .sound, .smokeAlarm, .coAlarm: nil
        case .personTalking, .dogBark, .glassBreak: Self.soundClassificationUnavailable
        case .doorbellPress: doorbellButtonConfigured ? nil : "no doorbell button is configured"
        }
    }

    /// The model's `supportedEventTriggers`: the triggers that really run here, in declaration order: motion,
    /// sound, smoke alarm, CO alarm, and the doorbell press when a button is configured.
    public static func supportedEventTriggers(doorbellButtonConfigured: Bool) -> [EventTrigger] {
        allCases.filter { $0.unsupportedReason(doorbellButtonConfigured: doorbellButtonConfigured) == nil }
    }
}
