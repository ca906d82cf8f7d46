import Foundation

/// The one-line JSON summary `camo-studio record` prints on stdout.
///
/// Optional numbers are written as JSON `null` (never omitted), so a reader sees every key.
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
    /// The codec the agent sent: "bgra" or "jpeg".
    public var codec: String
    /// Frame width the agent announced.
    public var width: Int
    /// Frame height the agent announced.
    public var height: Int

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
    }

    private enum CodingKeys: String, CodingKey {
        case frames, fps, dropped, repeated, audioPackets, sampleFrames, smallestPacket, largestPacket
        case rttMs, avOffsetMs, agentName, codec, width, height
    }

    /// Encodes every key; absent numbers as `null`, numbers rounded to three decimals.
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
