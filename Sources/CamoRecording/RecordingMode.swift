/// What the camera keeps: the model's RecordingMode (`supportedRecordingModes`, `availableRecordingModes`,
/// `selectedRecordingMode`), spelled as the settings show them.
public enum RecordingMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nothing is recorded.
    case disabled
    /// Everything, in segments (24x7, continuous video recording).
    case continuous
    /// One clip per event: pre-roll, then as long as the event lasts (its augmentations), up to the longest clip.
    case eventBased
    /// A short clip of fixed length when an event starts.
    case eventTriggered
    /// No recording: live view only (the default: a webcam host records nothing until asked to).
    case liveView
    /// A still picture (JPEG) per event instead of video.
    case images

    /// Whether the mode keeps video clips (and so needs the H.264 rendition running all the time, for its pre-roll).
    public var recordsVideo: Bool {
        switch self {
        case .continuous, .eventBased, .eventTriggered: true
        case .disabled, .liveView, .images: false
        }
    }

    /// Whether the mode follows events.
    public var followsEvents: Bool {
        switch self {
        case .eventBased, .eventTriggered, .images: true
        case .disabled, .continuous, .liveView: false
        }
    }

    /// The modes selectable now, and why each other one is not: video modes need an H.264 encoder, event modes need
    /// the event detectors (`--no-events` turns them off) with at least one trigger on.
    public static func availability(hasH264: Bool, eventsRunning: Bool, anyTriggerEnabled: Bool) -> [RecordingMode: String] {
        var unavailable: [RecordingMode: String] = [:]
        for mode in allCases {
            if mode.recordsVideo && !hasH264 {
                unavailable[mode] = "needs H.264 (this agent runs with --encoder off or has no encoder)"
            } else if mode.followsEvents && !eventsRunning {
                unavailable[mode] = "needs the event detectors (the agent runs with --no-events)"
            } else if mode.followsEvents && !anyTriggerEnabled {
                unavailable[mode] = "needs an event trigger on (enabledEventTriggers is none)"
            }
        }
        return unavailable
    }
}
