import Foundation

/// The contents of `video.json`: what each recorded frame was.
public struct VideoIndex: Sendable, Equatable, Codable {
    /// One recorded frame.
    public struct Frame: Sendable, Equatable, Codable {
        /// The agent's slot index.
        public var sequence: UInt32
        /// Pacer slot time (agent monotonic ns).
        public var slotTime: UInt64
        /// Capture time (agent monotonic ns).
        public var captureTime: UInt64
        /// The agent flagged it as a repeat.
        public var `repeat`: Bool
        /// The frame number drawn by the synthetic test pattern, nil when not readable.
        public var frameNumber: UInt64?
        /// The test pattern's white flash frame.
        public var flash: Bool
        /// SHA-256 (hex) of the tightly packed pixels (written when pixels are not kept).
        public var hash: String?
        /// The agent's source frame counter (V4L2 buffer sequence or test-pattern number), mod 2^32.
        public var sourceSequence: UInt32 = 0
        /// The agent flagged it "no signal" (camera lost).
        public var noSignal: Bool = false
        /// When its last byte arrived, on the studio's monotonic clock (ns); nil in indexes written before 1.1.
        public var receivedAt: UInt64?
        /// When its picture was decoded, on the studio's monotonic clock (ns).
        public var decodedAt: UInt64?
        /// Bytes of the frame's data on the wire.
        public var bytes: Int?
        /// H.264: a keyframe.
        public var keyframe: Bool = false
        /// H.264: the agent skipped this slot's frame before its encoder (the picture is the previous one).
        public var skipped: Bool = false
        /// PSNR (dB) against the test pattern drawn again from `frameNumber` (lossy codecs, new frames only).
        public var patternPSNR: Double?

        /// A frame record from its parts.
        public init(sequence: UInt32, slotTime: UInt64, captureTime: UInt64, repeat: Bool, frameNumber: UInt64?,
                    flash: Bool, hash: String?) {
            self.sequence = sequence
            self.slotTime = slotTime
            self.captureTime = captureTime
            self.repeat = `repeat`
            self.frameNumber = frameNumber
            self.flash = flash
            self.hash = hash
        }

        private enum CodingKeys: String, CodingKey {
            case sequence, slotTime, captureTime, `repeat`, frameNumber, flash, hash, sourceSequence, noSignal
            case receivedAt, decodedAt, bytes, keyframe, skipped, patternPSNR
        }

        /// Decodes a frame record; `sourceSequence` and `noSignal` default to 0 and false when absent.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                sequence: try c.decode(UInt32.self, forKey: .sequence), slotTime: try c.decode(UInt64.self, forKey: .slotTime),
                captureTime: try c.decode(UInt64.self, forKey: .captureTime), repeat: try c.decode(Bool.self, forKey: .repeat),
                frameNumber: try c.decodeIfPresent(UInt64.self, forKey: .frameNumber),
                flash: try c.decode(Bool.self, forKey: .flash), hash: try c.decodeIfPresent(String.self, forKey: .hash))
            sourceSequence = try c.decodeIfPresent(UInt32.self, forKey: .sourceSequence) ?? 0
            noSignal = try c.decodeIfPresent(Bool.self, forKey: .noSignal) ?? false
            receivedAt = try c.decodeIfPresent(UInt64.self, forKey: .receivedAt)
            decodedAt = try c.decodeIfPresent(UInt64.self, forKey: .decodedAt)
            bytes = try c.decodeIfPresent(Int.self, forKey: .bytes)
            keyframe = try c.decodeIfPresent(Bool.self, forKey: .keyframe) ?? false
            skipped = try c.decodeIfPresent(Bool.self, forKey: .skipped) ?? false
            patternPSNR = try c.decodeIfPresent(Double.self, forKey: .patternPSNR)
        }

        /// Encodes `frameNumber` as `null` when absent; omits `hash` when absent.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(sequence, forKey: .sequence)
            try c.encode(slotTime, forKey: .slotTime)
            try c.encode(captureTime, forKey: .captureTime)
            try c.encode(`repeat`, forKey: .repeat)
            try c.encode(frameNumber, forKey: .frameNumber)   // null when absent
            try c.encode(flash, forKey: .flash)
            try c.encodeIfPresent(hash, forKey: .hash)
            try c.encode(sourceSequence, forKey: .sourceSequence)
            try c.encode(noSignal, forKey: .noSignal)
            try c.encodeIfPresent(receivedAt, forKey: .receivedAt)
            try c.encodeIfPresent(decodedAt, forKey: .decodedAt)
            try c.encodeIfPresent(bytes, forKey: .bytes)
            if keyframe { try c.encode(keyframe, forKey: .keyframe) }
            if skipped { try c.encode(skipped, forKey: .skipped) }
            try c.encodeIfPresent(patternPSNR.map { $0.isFinite ? ($0 * 1000).rounded() / 1000 : 99 }, forKey: .patternPSNR)
        }
    }

    /// Frame width (every frame in `video.bgra` is `width · height · 4` bytes).
    public var width: Int
    /// Frame height.
    public var height: Int
    /// How the frames travelled ("bgra", "jpeg" or "h264"); `video.bgra` always holds decoded BGRA.
    public var codec: String
    /// Frames recorded.
    public var frameCount: Int
    /// The frames, in arrival order.
    public var frames: [Frame]

    /// An index from its parts.
    public init(width: Int, height: Int, codec: String, frames: [Frame]) {
        self.width = width
        self.height = height
        self.codec = codec
        self.frameCount = frames.count
        self.frames = frames
    }

    /// Pretty-printed JSON with sorted keys.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try encoder.encode(self)
    }
}
