import CamoMedia
import CamoWire
import Logging

/// Turns one paced frame into what each session sends: scaled to the session's size and encoded in its codec.
///
/// Work is shared twice over. Sessions with the same size, codec and quality in one slot get the same prepared
/// message. And a repeated slot (a camera slower than 30 fps) reuses the scaled, encoded bytes of the input frame
/// it repeats: only the header (sequence, slot time, repeat flag) is made anew.
///
/// Owned by the pacer task; not thread-safe (it owns a JPEG encoder).
struct VideoPreparer {
    /// Scaled and encoded bytes of one input frame for one setting.
    private struct Encoded {
        var inputIndex: UInt64
        var data: [UInt8]
        var width: Int
        var height: Int
        var bytesPerRow: Int
    }

    private let logger: Logger
    private var encoder: JPEGEncoder?
    /// This slot's messages, by setting.
    private var prepared: [VideoSettings: OutgoingVideo] = [:]
    /// The newest input frame's bytes, by setting; settings no session used in the last slot are forgotten.
    private var encoded: [VideoSettings: Encoded] = [:]
    private var usedThisSlot: Set<VideoSettings> = []
    /// The newest input frame scaled, by size.
    private var scaled: [VideoSize: (inputIndex: UInt64, frame: VideoFrame)] = [:]
    /// How many times a frame was scaled-and-encoded (not served from the cache); for tests.
    private(set) var encodeCount = 0

    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts a slot: forgets the previous slot's messages and the bytes of settings no longer in use.
    mutating func beginSlot() {
        prepared.removeAll(keepingCapacity: true)
        encoded = encoded.filter { usedThisSlot.contains($0.key) }
        scaled = scaled.filter { entry in usedThisSlot.contains { $0.size == entry.key } }
        usedThisSlot.removeAll(keepingCapacity: true)
    }

    /// The message for `settings`, or nil when the frame cannot be encoded (logged).
    mutating func prepare(_ paced: PacedFrame, for settings: VideoSettings, noSignal: Bool = false) -> OutgoingVideo? {
        usedThisSlot.insert(settings)
        if let done = prepared[settings] { return done }
        let body: Encoded
        if let cached = encoded[settings], cached.inputIndex == paced.inputIndex {
            body = cached
        } else {
            guard let fresh = encode(paced, for: settings) else { return nil }
            encoded[settings] = fresh
            body = fresh
        }
        var flags: VideoFlags = []
        if paced.isRepeat { flags.insert(.repeat) }
        if noSignal { flags.insert(.noSignal) }
        let header = VideoMessage(
            sequence: UInt32(truncatingIfNeeded: paced.slot), codec: settings.codec, flags: flags,
            width: UInt16(body.width), height: UInt16(body.height), bytesPerRow: UInt32(body.bytesPerRow),
            slotTime: paced.slotTime, captureTime: paced.frame.captureTime,
            sourceSequence: UInt32(truncatingIfNeeded: paced.frame.sourceSequence), data: []
        ).encodeHeader()
        let video = OutgoingVideo(header: header, data: body.data, isRepeat: paced.isRepeat)
        prepared[settings] = video
        return video
    }

    private mutating func encode(_ paced: PacedFrame, for settings: VideoSettings) -> Encoded? {
        encodeCount += 1
        let frame = frame(paced, at: settings.size)
        switch settings.codec {
        case .bgra:
            return Encoded(
                inputIndex: paced.inputIndex, data: frame.data, width: frame.width, height: frame.height,
                bytesPerRow: frame.bytesPerRow)
        case .jpeg:
            do {
                if encoder == nil { encoder = try JPEGEncoder() }
                // Safe: set just above.
                let data = try encoder!.encode(frame, quality: settings.jpegQuality)
                return Encoded(inputIndex: paced.inputIndex, data: data, width: frame.width, height: frame.height, bytesPerRow: 0)
            } catch {
                logger.error("JPEG encoding failed; the frame is skipped", metadata: ["error": "\(error)"])
                return nil
            }
        }
    }

    private mutating func frame(_ paced: PacedFrame, at size: VideoSize) -> VideoFrame {
        let frame = paced.frame
        if frame.width == size.width && frame.height == size.height { return frame }
        if let done = scaled[size], done.inputIndex == paced.inputIndex { return done.frame }
        let result = FrameScaler.scale(frame, to: size)
        scaled[size] = (paced.inputIndex, result)
        return result
    }
}
