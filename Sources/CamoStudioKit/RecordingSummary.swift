import Foundation

/// The one-line JSON summary `camo-studio record` prints on stdout.
///
/// Optional numbers are written as JSON `null` (never omitted), so a reader sees every key. `reconnects`,
/// `reconnectGapsMs` and `addresses` are written whenever ``addresses`` is not empty, which is so for every
/// summary a ``Recorder`` returns.
public struct RecordingSummary: Sendable, Equatable, Codable {
    /// Video frames received.
    public var frames: Int
    /// Frames per second of slot time (see ``RecordingStatistics/fps(fallbackSeconds:)``).
    public var fps: Double
    /// Frames missing from the sequence numbers.
    public var dropped: Int
    /// Frames flagged as repeats.
    public var repeated: Int
    /// Audio packets received.
    public var audioPackets: Int
    /// Sample frames received.
    public var sampleFrames: Int
    /// Sample frames of the smallest audio packet (nil without audio).
    public var smallestPacket: Int?
    /// Sample frames of the largest audio packet (nil without audio).
    public var largestPacket: Int?
    /// Mean keepalive round trip in milliseconds (nil when none completed).
    public var rttMs: Double?
    /// Mean audio-minus-video offset of the flash/click markers in milliseconds (nil when none matched).
    public var avOffsetMs: Double?
    /// The agent's name from its hello.
    public var agentName: String
    /// The codec the agent sent: "bgra", "jpeg" or "h264".
    public var codec: String
    /// Frame width the agent announced.
    public var width: Int
    /// Frame height the agent announced.
    public var height: Int
    /// Frames flagged "no signal" (camera lost).
    public var noSignal: Int = 0
    /// New camera frames (neither repeats nor no-signal); see ``RecordingStatistics/sourceFrames``.
    public var sourceFrames: Int = 0
    /// Camera frames that arrived twice without the repeat flag.
    public var sourceDuplicates: Int = 0
    /// Camera frame numbers skipped between consecutive new frames.
    public var sourceGaps: Int = 0
    /// Sessions after the first: how often the recorder reconnected (see ``Recorder``).
    public var reconnects: Int = 0
    /// For each reconnection, milliseconds of wall time from detecting the loss to the first media message
    /// after it (null when none came).
    public var reconnectGapsMs: [Double?] = []
    /// Each address a session was established to, in order, as `HOST:PORT` (`[v6]:PORT`).
    public var addresses: [String] = []
    /// Latency, bitrate over time, skipped frames, keyframes (written when present; every Recorder summary has it).
    public var transport: TransportSummary?

    /// A summary from its fields.
    public init(frames: Int, fps: Double, dropped: Int, repeated: Int, audioPackets: Int, sampleFrames: Int,
                smallestPacket: Int?, largestPacket: Int?, rttMs: Double?, avOffsetMs: Double?,
                agentName: String, codec: String, width: Int, height: Int) {
        self.frames = frames
        self.fps = fps
        self.dropped = dropped
        self.repeated = repeated
        self.audioPackets = audioPackets
        self.sampleFrames = sampleFrames
        self.smallestPacket = smallestPacket
        self.largestPacket = largestPacket
        self.rttMs = rttMs
        self.avOffsetMs = avOffsetMs
        self.agentName = agentName
        self.codec = codec
        self.width = width
        self.height = height
    }

    /// A summary of `statistics`; `seconds` is the fps fallback when the slot-time span is unusable.
    public init(statistics: RecordingStatistics, avOffsetMs: Double?, seconds: Double,
                agentName: String, codec: String, width: Int, height: Int) {
        self.init(frames: statistics.frames, fps: statistics.fps(fallbackSeconds: seconds),
                  dropped: statistics.dropped, repeated: statistics.repeated,
                  audioPackets: statistics.audioPackets, sampleFrames: statistics.sampleFrames,
                  smallestPacket: statistics.smallestPacket, largestPacket: statistics.largestPacket,
                  rttMs: statistics.meanRoundTripMs, avOffsetMs: avOffsetMs,
                  agentName: agentName, codec: codec, width: width, height: height)
        noSignal = statistics.noSignal
        sourceFrames = statistics.sourceFrames
        sourceDuplicates = statistics.sourceDuplicates
        sourceGaps = statistics.sourceGaps
    }

    private enum CodingKeys: String, CodingKey {
        case frames, fps, dropped, repeated, audioPackets, sampleFrames, smallestPacket, largestPacket
        case rttMs, avOffsetMs, agentName, codec, width, height
        case noSignal, sourceFrames, sourceDuplicates, sourceGaps
        case reconnects, reconnectGapsMs, addresses, transport
    }

    /// Decodes a summary; the source counters and `reconnects` default to 0, `reconnectGapsMs` and `addresses`
    /// to empty, when absent (lines written before they existed).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            frames: try c.decode(Int.self, forKey: .frames), fps: try c.decode(Double.self, forKey: .fps),
            dropped: try c.decode(Int.self, forKey: .dropped), repeated: try c.decode(Int.self, forKey: .repeated),
            audioPackets: try c.decode(Int.self, forKey: .audioPackets),
            sampleFrames: try c.decode(Int.self, forKey: .sampleFrames),
            smallestPacket: try c.decodeIfPresent(Int.self, forKey: .smallestPacket),
            largestPacket: try c.decodeIfPresent(Int.self, forKey: .largestPacket),
            rttMs: try c.decodeIfPresent(Double.self, forKey: .rttMs),
            avOffsetMs: try c.decodeIfPresent(Double.self, forKey: .avOffsetMs),
            agentName: try c.decode(String.self, forKey: .agentName), codec: try c.decode(String.self, forKey: .codec),
            width: try c.decode(Int.self, forKey: .width), height: try c.decode(Int.self, forKey: .height))
        noSignal = try c.decodeIfPresent(Int.self, forKey: .noSignal) ?? 0
        sourceFrames = try c.decodeIfPresent(Int.self, forKey: .sourceFrames) ?? 0
        sourceDuplicates = try c.decodeIfPresent(Int.self, forKey: .sourceDuplicates) ?? 0
        sourceGaps = try c.decodeIfPresent(Int.self, forKey: .sourceGaps) ?? 0
        reconnects = try c.decodeIfPresent(Int.self, forKey: .reconnects) ?? 0
        reconnectGapsMs = try c.decodeIfPresent([Double?].self, forKey: .reconnectGapsMs) ?? []
        addresses = try c.decodeIfPresent([String].self, forKey: .addresses) ?? []
        transport = try c.decodeIfPresent(TransportSummary.self, forKey: .transport)
    }

    /// Encodes every key (the session keys when there are sessions); absent numbers as `null`, numbers rounded
    /// to three decimals.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(frames, forKey: .frames)
        try c.encode(Self.rounded(fps), forKey: .fps)
        try c.encode(dropped, forKey: .dropped)
        try c.encode(repeated, forKey: .repeated)
        try c.encode(audioPackets, forKey: .audioPackets)
        try c.encode(sampleFrames, forKey: .sampleFrames)
        try c.encode(smallestPacket, forKey: .smallestPacket)
        try c.encode(largestPacket, forKey: .largestPacket)
        try c.encode(rttMs.map(Self.rounded), forKey: .rttMs)
        try c.encode(avOffsetMs.map(Self.rounded), forKey: .avOffsetMs)
        try c.encode(agentName, forKey: .agentName)
        try c.encode(codec, forKey: .codec)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(noSignal, forKey: .noSignal)
        try c.encode(sourceFrames, forKey: .sourceFrames)
        try c.encode(sourceDuplicates, forKey: .sourceDuplicates)
        try c.encode(sourceGaps, forKey: .sourceGaps)
        // A summary that knows its sessions (every one a Recorder makes) says how they went; one made from
        // statistics alone (tools, tests) has no sessions to tell of and keeps the keys it always had.
        if !addresses.isEmpty {
            try c.encode(reconnects, forKey: .reconnects)
            try c.encode(reconnectGapsMs.map { $0.map(Self.rounded) }, forKey: .reconnectGapsMs)
            try c.encode(addresses, forKey: .addresses)
        }
        try c.encodeIfPresent(transport, forKey: .transport)
    }

    /// The summary as one line of JSON (keys sorted, no trailing newline).
    public func jsonLine() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// Three decimals, and non-finite values as 0 (JSON has no NaN).
    private static func rounded(_ value: Double) -> Double {
        value.isFinite ? (value * 1000).rounded() / 1000 + 0 : 0   // + 0 turns -0 into 0
    }
}
