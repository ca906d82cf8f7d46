/// How clips are cut: the push transport's trigger options (pre-roll, maximum length, blind time) and the lengths of
/// the event-triggered clip and the continuous segment. Seconds throughout.
public struct RecordingOptions: Sendable, Hashable, Codable {
    /// The longest clip the model allows to be chosen.
    public static let maxClipChoices: [Int] = [10, 15, 30, 60, 120, 180]

    /// What is kept.
    public var mode: RecordingMode = .liveView
    /// Video before the event: the clip starts at the last keyframe at or before the event's start minus this
    /// (0...10 s; so the pre-roll is this plus at most one GOP).
    public var preRollSeconds: Int = 3
    /// The longest clip, pre-roll included; one of ``maxClipChoices``.
    public var maxClipSeconds: Int = 30
    /// After a clip ends, an event starting within this many seconds starts no new clip (0...3600).
    public var blindSeconds: Int = 10
    /// The length of an event-triggered clip after the event's start (5...60 s, and not past the longest clip).
    public var triggeredClipSeconds: Int = 10
    /// The length of one continuous segment (10...600 s); a segment ends at the first keyframe past it.
    public var segmentSeconds: Int = 60
    /// Whether the recordings leave the audio out (the model's `recordingMicrophoneMuted`): clips then have no audio
    /// track at all.
    public var microphoneMuted: Bool = false

    /// The defaults: live view only; 3 s pre-roll, 30 s clips, 10 s blind, 10 s triggered clips, 60 s segments.
    public init() {}

    /// Why these options cannot be used, or nil.
    public func problem() -> String? {
        if !(0...10).contains(preRollSeconds) { return "preRollSeconds must be 0...10 (got \(preRollSeconds))" }
        if !Self.maxClipChoices.contains(maxClipSeconds) {
            return "maxClipSeconds must be one of \(Self.maxClipChoices.map(String.init).joined(separator: ", ")) (got \(maxClipSeconds))"
        }
        if !(0...3_600).contains(blindSeconds) { return "blindSeconds must be 0...3600 (got \(blindSeconds))" }
        if !(5...60).contains(triggeredClipSeconds) { return "triggeredClipSeconds must be 5...60 (got \(triggeredClipSeconds))" }
        if !(10...600).contains(segmentSeconds) { return "segmentSeconds must be 10...600 (got \(segmentSeconds))" }
        return nil
    }
}
