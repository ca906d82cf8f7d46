/// The limits of wire format v1. They are part of the specification (see Docs/PROTOCOL.md, "Limits").
public enum WireLimits {
    /// The largest value of a record's `u16` length field.
    public static let maxRecordLength = 65_535
    /// The size of the AEAD tag that every Noise transport message carries.
    public static let tagLength = 16
    /// The fragment header: channel byte and flags byte.
    public static let fragmentHeaderLength = 2
    /// The most fragment bytes one transport record can carry: 65535 − 16 (tag) − 2 (fragment header).
    public static let maxFragmentPayload = 65_517
    /// The largest reassembled application message (40 MiB).
    public static let maxMessage = 41_943_040
    /// The widest video frame.
    public static let maxVideoWidth = 4_096
    /// The tallest video frame.
    public static let maxVideoHeight = 4_096
    /// The allowed values of `audioSamplesRequired` (sample frames per audio packet).
    public static let audioSamplesRequired: ClosedRange<UInt32> = 64...48_000
    /// The most sample frames in one audio message (one second).
    public static let maxAudioSampleFrames: UInt32 = 48_000
    /// The longest id (preamble initiator id, studioId, agentId), in UTF-8 bytes.
    public static let maxIdLength = 64
    /// The handshake must complete within this many nanoseconds after the TCP connection is accepted.
    public static let handshakeDeadline: UInt64 = 5_000_000_000
    /// Each side sends a ping at this interval (nanoseconds).
    public static let keepaliveInterval: UInt64 = 1_000_000_000
    /// A side that receives nothing for this long closes with `keepaliveTimeout` (nanoseconds).
    public static let keepaliveTimeout: UInt64 = 10_000_000_000
    /// The most established sessions an agent serves at once.
    public static let maxSessions = 8
    /// The most connections an agent keeps in the handshake phase at once.
    public static let maxPendingHandshakes = 16
    /// A session whose outbound backlog does not drain for this long is closed with `stalled` (nanoseconds).
    public static let stallDeadline: UInt64 = 5_000_000_000
    /// The current protocol version.
    public static let versionMajor: UInt8 = 1
    /// The current protocol minor version.
    public static let versionMinor: UInt8 = 4
}
