/// `video` (0x10, agent → studio, channel video): one paced frame.
public struct VideoMessage: Sendable, Equatable {
    /// The length of the encoded header (type byte included) that precedes `data`.
    public static let headerLength = 35

    /// The pacer slot index k (gaps = frames dropped for this session).
    public var sequence: UInt32
    /// How `data` is encoded.
    public var codec: VideoCodec
    /// Repeat / no-signal flags.
    public var flags: VideoFlags
    /// Width in pixels, 1...4096.
    public var width: UInt16
    /// Height in pixels, 1...4096.
    public var height: UInt16
    /// BGRA: the stride of `data` (≥ 4·width). JPEG and H.264: 0.
    public var bytesPerRow: UInt32
    /// The pacer slot time: start + k·1e9/30 ns (CLOCK_MONOTONIC on the agent).
    public var slotTime: UInt64
    /// When the camera captured the frame (CLOCK_MONOTONIC ns on the agent).
    public var captureTime: UInt64
    /// The source's own frame counter (the V4L2 buffer sequence, or the test pattern's frame number), modulo 2^32.
    /// A repeat carries the same value again; a studio can see whether each captured frame arrived once.
    public var sourceSequence: UInt32
    /// BGRA: `height` rows of `bytesPerRow` bytes. JPEG: one JPEG file. H.264: one Annex B access unit (empty for
    /// a repeated or skipped slot).
    public var data: [UInt8]

    /// Creates a video message.
    public init(
        sequence: UInt32, codec: VideoCodec, flags: VideoFlags = [], width: UInt16, height: UInt16, bytesPerRow: UInt32,
        slotTime: UInt64, captureTime: UInt64, sourceSequence: UInt32 = 0, data: [UInt8]
    ) {
        self.sequence = sequence
        self.codec = codec
        self.flags = flags
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.slotTime = slotTime
        self.captureTime = captureTime
        self.sourceSequence = sourceSequence
        self.data = data
    }

    /// The message bytes before `data` (type byte 0x10 included, `headerLength` bytes).
    /// Send it followed by `data` (see `MessageFragmenter`) instead of building one big array.
    public func encodeHeader() -> [UInt8] {
        var w = ByteWriter(capacity: Self.headerLength)
        w.u8(AppMessageType.video.rawValue)
        w.u32(sequence)
        w.u8(codec.rawValue)
        w.u8(flags.rawValue)
        w.u16(width)
        w.u16(height)
        w.u32(bytesPerRow)
        w.u64(slotTime)
        w.u64(captureTime)
        w.u32(sourceSequence)
        return w.bytes
    }

    /// The number of bytes of the whole encoded message.
    public var encodedLength: Int { Self.headerLength + data.count }

    static func decode(_ r: inout ByteReader) throws(WireError) -> VideoMessage {
        let sequence = try r.u32("sequence")
        let codecByte = try r.u8("codec")
        let flagsByte = try r.u8("flags")
        let width = try r.u16("width")
        let height = try r.u16("height")
        let bytesPerRow = try r.u32("bytesPerRow")
        let slotTime = try r.u64("slotTime")
        let captureTime = try r.u64("captureTime")
        let sourceSequence = try r.u32("sourceSequence")
        let data = r.rest()
        guard let codec = VideoCodec(rawValue: codecByte) else {
            throw .violation("video names codec \(codecByte); it must be 1 (bgra), 2 (jpeg) or 3 (h264)")
        }
        let flags = VideoFlags(rawValue: flagsByte)
        guard VideoFlags.known.isSuperset(of: flags) else {
            throw .violation("video flags 0x\(String(flagsByte, radix: 16)) set bits that 1.1 does not define")
        }
        if codec != .h264, flags.contains(.keyframe) {
            throw .violation("the video flag keyframe belongs to h264 frames, not \(codec)")
        }
        if codec == .bgra, flags.contains(.skipped) {
            throw .violation("the video flag skipped belongs to h264 and jpeg frames, not bgra")
        }
        try checkVideoSize(width: width, height: height, field: "video size", code: .protocolViolation)
        switch codec {
        case .bgra:
            guard UInt64(bytesPerRow) >= 4 * UInt64(width) else {
                throw .violation("a bgra frame \(width) pixels wide needs bytesPerRow >= \(4 * Int(width)), not \(bytesPerRow)")
            }
            let expected = UInt64(bytesPerRow) * UInt64(height)
            guard UInt64(data.count) == expected else {
                throw .violation("a bgra frame of \(height) rows of \(bytesPerRow) bytes has \(expected) bytes of data, not \(data.count)")
            }
        case .jpeg:
            guard bytesPerRow == 0 else {
                throw .violation("a jpeg frame must have bytesPerRow 0, not \(bytesPerRow)")
            }
            if flags.contains(.skipped) {
                guard data.isEmpty else { throw .violation("a skipped jpeg slot carries no data") }
            } else {
                guard !data.isEmpty else { throw .violation("a jpeg frame carries no data") }
            }
        case .h264:
            guard bytesPerRow == 0 else {
                throw .violation("an h264 frame must have bytesPerRow 0, not \(bytesPerRow)")
            }
            let placeholder = !flags.isDisjoint(with: [.repeat, .skipped])
            if placeholder {
                guard data.isEmpty, !flags.contains(.keyframe) else {
                    throw .violation("a repeated or skipped h264 slot carries no data and is no keyframe")
                }
            } else {
                guard !data.isEmpty else { throw .violation("an h264 frame carries no data (only a repeat or a skip may)") }
            }
        }
        return VideoMessage(
            sequence: sequence, codec: codec, flags: flags, width: width, height: height, bytesPerRow: bytesPerRow,
            slotTime: slotTime, captureTime: captureTime, sourceSequence: sourceSequence, data: Array(data))
    }
}
