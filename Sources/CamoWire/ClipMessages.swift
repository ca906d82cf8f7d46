/// One kept recording as a paired studio sees it (`clipList`, 0x15, protocol 1.4): the agent's index row with its
/// mode, trigger and end reason as their JSON names.
///
/// JSON: `{"id":12,"kind":"video","mode":"eventBased","trigger":"motion","zoneID":2,"startTime":1764180000.25,
/// "durationSeconds":14.5,"preRollSeconds":4.5,"bytes":2480131,"hasAudio":true,"endReason":"eventEnded",
/// "contentType":"video/mp4"}`.
public struct WireClip: Sendable, Hashable, Codable {
    /// The agent's id of the recording (its store's index).
    public var id: UInt64
    /// `video` (fragmented MP4) or `image` (a JPEG still).
    public var kind: String
    /// The recording mode that made it: `continuous`, `eventBased`, `eventTriggered`, `images`.
    public var mode: String
    /// The event that started it (`motion`, `sound`, …), nil for a continuous segment.
    public var trigger: String?
    /// The motion zone of that event.
    public var zoneID: UInt16?
    /// The agent's wall clock at its first frame, Unix seconds.
    public var startTime: Double
    /// First frame to the end of the last, seconds (0 for a still).
    public var durationSeconds: Double
    /// The video before the event's start, seconds.
    public var preRollSeconds: Double?
    /// The file's size.
    public var bytes: UInt64
    /// Whether it has an audio track.
    public var hasAudio: Bool
    /// Why it ended (`eventEnded`, `maxDuration`, …), nil for a still.
    public var endReason: String?
    /// `video/mp4` or `image/jpeg`.
    public var contentType: String

    /// A clip from its parts.
    public init(
        id: UInt64, kind: String, mode: String, trigger: String? = nil, zoneID: UInt16? = nil, startTime: Double,
        durationSeconds: Double, preRollSeconds: Double? = nil, bytes: UInt64, hasAudio: Bool, endReason: String? = nil,
        contentType: String
    ) {
        self.id = id
        self.kind = kind
        self.mode = mode
        self.trigger = trigger
        self.zoneID = zoneID
        self.startTime = startTime
        self.durationSeconds = durationSeconds
        self.preRollSeconds = preRollSeconds
        self.bytes = bytes
        self.hasAudio = hasAudio
        self.endReason = endReason
        self.contentType = contentType
    }
}

/// One page of the agent's recordings, newest first (`clipList`, 0x15, 1.4), or why there is none.
///
/// JSON: `{"clips":[…],"more":true,"total":230}`; or `{"clips":[],"more":false,"total":0,"unavailable":"…"}` when the
/// agent keeps no recordings or this studio may not see them.
public struct WireClipList: Sendable, Hashable, Codable {
    /// At most ``maxClips``, newest first, each older than the request's `before`.
    public var clips: [WireClip]
    /// Whether older ones follow: ask again with `before` = the last one's id.
    public var more: Bool
    /// How many the agent keeps.
    public var total: Int
    /// Why nothing is listed (the agent keeps no recordings; the studio is not paired), nil when listed.
    public var unavailable: String?

    /// The most clips on one page (a page stays well within the JSON limit of 262144 bytes).
    public static let maxClips = 200

    /// A page from its parts.
    public init(clips: [WireClip], more: Bool, total: Int, unavailable: String? = nil) {
        self.clips = clips
        self.more = more
        self.total = total
        self.unavailable = unavailable
    }
}

/// A studio's request for a piece of a recording (`clipFetch`, 0x16, 1.4): `u64 id`, `u64 offset`, `u32 length`
/// (1...``maxLength``). The agent answers each with one `clipData`; a studio keeps one or a few in flight.
public struct ClipFetch: Sendable, Hashable {
    /// The recording's id from `clipList`.
    public var id: UInt64
    /// The first byte wanted.
    public var offset: UInt64
    /// How many bytes at most.
    public var length: UInt32

    /// The largest piece asked for at once (256 KiB).
    public static let maxLength: UInt32 = 262_144

    /// A request from its parts.
    public init(id: UInt64, offset: UInt64, length: UInt32) {
        self.id = id
        self.offset = offset
        self.length = length
    }
}

/// A piece of a recording, or why there is none (`clipData`, 0x17, 1.4): `u64 id`, `u64 offset`, `u64 total` (the
/// file's size), `str16 refusal` (empty when the bytes follow), then the bytes (at most ``ClipFetch/maxLength``).
/// Bytes that end at `total` end the file; an offset at or past `total` gets none.
public struct ClipData: Sendable, Hashable {
    /// The recording's id.
    public var id: UInt64
    /// Where the bytes start in the file.
    public var offset: UInt64
    /// The file's size.
    public var total: UInt64
    /// Why there are no bytes (no such recording: removed to make room, or never there; not paired), nil when sent.
    public var refusal: String?
    /// The piece.
    public var data: [UInt8]

    /// A piece or a refusal from its parts.
    public init(id: UInt64, offset: UInt64, total: UInt64, refusal: String? = nil, data: [UInt8] = []) {
        self.id = id
        self.offset = offset
        self.total = total
        self.refusal = refusal
        self.data = data
    }
}
