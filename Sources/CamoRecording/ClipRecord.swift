import CamoEvents

/// One kept recording, as the index holds it and the API lists it.
///
/// JSON: `{"id":3,"file":"1764180000-3f2a.mp4","kind":"video","mode":"eventBased","trigger":"motion","zoneID":1,
/// "eventIDs":[7],"startTime":1764180000.2,"preRollSeconds":3.4,"durationSeconds":14.9,"bytes":2310044,
/// "hasAudio":true,"endReason":"eventEnded","width":1280,"height":720}`.
public struct ClipRecord: Sendable, Hashable, Codable, Identifiable {
    /// What a recording is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// An MP4 clip (fragmented: CMAF).
        case video
        /// A JPEG still (images mode).
        case image
    }

    /// The index's id (0 before it is stored).
    public var id: Int64 = 0
    /// The file's name in the store's directory.
    public var file: String = ""
    /// Video or still.
    public var kind: Kind
    /// The mode that made it.
    public var mode: RecordingMode
    /// The event that started it (nil for a continuous segment).
    public var trigger: EventTrigger?
    /// The motion zone of that event.
    public var zoneID: UInt16?
    /// The events during the clip, in the order they started.
    public var eventIDs: [UInt64]
    /// The wall clock of its first frame, Unix seconds.
    public var startTime: Double
    /// The video before the event's start, seconds (nil for a segment or a still; 0 for a clip that began after its
    /// event did: the mode was chosen while the event ran, or the feed had no keyframe yet).
    public var preRollSeconds: Double?
    /// First frame to the end of the last, seconds (0 for a still).
    public var durationSeconds: Double
    /// The file's size.
    public var bytes: Int64 = 0
    /// Whether it has an audio track.
    public var hasAudio: Bool
    /// Why it ended (nil for a still).
    public var endReason: ClipEndReason?
    /// The picture's size.
    public var width: Int
    /// The picture's size.
    public var height: Int

    /// The file's media type: `video/mp4` for a clip, `image/jpeg` for a still.
    public var contentType: String { kind == .video ? "video/mp4" : "image/jpeg" }

    /// A record from its parts (the store fills in the id, the file and its size).
    public init(
        kind: Kind, mode: RecordingMode, trigger: EventTrigger? = nil, zoneID: UInt16? = nil, eventIDs: [UInt64] = [],
        startTime: Double, preRollSeconds: Double? = nil, durationSeconds: Double, hasAudio: Bool, endReason: ClipEndReason? = nil,
        width: Int, height: Int
    ) {
        self.kind = kind
        self.mode = mode
        self.trigger = trigger
        self.zoneID = zoneID
        self.eventIDs = eventIDs
        self.startTime = startTime
        self.preRollSeconds = preRollSeconds
        self.durationSeconds = durationSeconds
        self.hasAudio = hasAudio
        self.endReason = endReason
        self.width = width
        self.height = height
    }
}
