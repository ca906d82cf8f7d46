/// What an ``H264Encoder`` is opened with.
public struct H264EncoderSettings: Sendable, Hashable {
    /// Picture width in pixels (even, at most 4096).
    public var width: Int
    /// Picture height in pixels (even, at most 4096).
    public var height: Int
    /// Target bit rate in bits per second; also the VBV's maximum rate (the buffer holds one frame).
    public var bitrate: Int
    /// Frames per second the stream is paced at.
    public var fps: Int = 30
    /// A keyframe (IDR with SPS and PPS) every this many frames; 60 is every 2 s at 30 fps.
    public var gopFrames: Int = 60
    /// Which encoder to open; resolve a user's choice with ``H264Encoders/resolve(_:)`` first.
    public var kind: H264EncoderKind = .x264

    /// Creates settings; nothing is checked until an encoder opens with them.
    public init(width: Int, height: Int, bitrate: Int, fps: Int = 30, gopFrames: Int = 60, kind: H264EncoderKind = .x264) {
        self.width = width
        self.height = height
        self.bitrate = bitrate
        self.fps = fps
        self.gopFrames = gopFrames
        self.kind = kind
    }

    /// The lowest bit rate an encoder accepts (``H264Encoder/setBitrate(_:)`` clamps to it).
    public static let minimumBitrate = 50_000

    /// Checks what every encoder needs.
    ///
    /// - Throws: ``H264Error/open(_:)`` saying which value is wrong.
    func validate() throws(H264Error) {
        guard width > 0, height > 0 else { throw .open("the size \(width)x\(height) has no pixels") }
        guard width <= 4096, height <= 4096 else { throw .open("the size \(width)x\(height) is larger than 4096x4096") }
        guard width % 2 == 0, height % 2 == 0 else {
            throw .open("the size \(width)x\(height) is odd; 4:2:0 H.264 needs an even width and height")
        }
        guard bitrate >= Self.minimumBitrate else {
            throw .open("the bit rate \(bitrate) b/s is below \(Self.minimumBitrate) b/s")
        }
        guard (1...240).contains(fps) else { throw .open("the frame rate \(fps) fps is outside 1...240") }
        guard gopFrames >= 1 else { throw .open("the keyframe interval \(gopFrames) frames is not positive") }
    }
}

/// One encoded picture.
public struct H264Packet: Sendable {
    /// The access unit in Annex B (start codes); a keyframe carries SPS and PPS in-band before its IDR slice.
    public var data: [UInt8]
    /// Whether this is an IDR picture a decoder can start from.
    public var isKeyframe: Bool
    /// The input frame's index in the encoder's stream, from 0.
    public var frameIndex: Int64

    /// Creates a packet.
    public init(data: [UInt8], isKeyframe: Bool, frameIndex: Int64) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.frameIndex = frameIndex
    }

    /// The NAL unit types in `data`, in order (5 = IDR slice, 1 = non-IDR slice, 7 = SPS, 8 = PPS, 6 = SEI).
    public var nalUnitTypes: [UInt8] { AnnexB.nalUnitTypes(data) }
}

/// Reading Annex B byte streams (start-code delimited NAL units).
public enum AnnexB {
    /// The byte ranges of the NAL units in `data` (each without its start code).
    public static func nalUnits(_ data: [UInt8]) -> [Range<Int>] {
        var starts: [(code: Int, payload: Int)] = []
        var index = 0
        while index + 2 < data.count {
            if data[index] == 0, data[index + 1] == 0, data[index + 2] == 1 {
                let code = index > 0 && data[index - 1] == 0 ? index - 1 : index
                starts.append((code, index + 3))
                index += 3
            } else {
                index += 1
            }
        }
        var units: [Range<Int>] = []
        for (position, start) in starts.enumerated() {
            let end = position + 1 < starts.count ? starts[position + 1].code : data.count
            if start.payload < end { units.append(start.payload..<end) }
        }
        return units
    }

    /// The type (low 5 bits of the first byte) of each NAL unit in `data`.
    public static func nalUnitTypes(_ data: [UInt8]) -> [UInt8] {
        nalUnits(data).map { data[$0.lowerBound] & 0x1F }
    }
}
