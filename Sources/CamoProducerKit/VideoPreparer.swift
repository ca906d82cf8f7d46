import CamoMedia
import CamoWire
import Logging

/// Turns one paced frame into what each session sends: scaled to the session's size and encoded in its codec.
/// Work is shared: sessions with the same size, codec and quality in one slot get the same prepared bytes.
///
/// Owned by the pacer task; not thread-safe (it owns a JPEG encoder).
struct VideoPreparer {
    private let logger: Logger
    private var encoder: JPEGEncoder?
    private var prepared: [VideoSettings: OutgoingVideo] = [:]
    private var scaled: [VideoSize: VideoFrame] = [:]

    init(logger: Logger) {
        self.logger = logger
    }

    /// Forgets the previous slot's work.
    mutating func beginSlot() {
        prepared.removeAll(keepingCapacity: true)
        scaled.removeAll(keepingCapacity: true)
    }

    /// The message for `settings`, or nil when the frame cannot be encoded (logged).
    mutating func prepare(_ paced: PacedFrame, for settings: VideoSettings) -> OutgoingVideo? {
        if let done = prepared[settings] { return done }
        let frame = frame(paced.frame, at: settings.size)
        let data: [UInt8]
        let bytesPerRow: Int
        switch settings.codec {
        case .bgra:
            data = frame.data
            bytesPerRow = frame.bytesPerRow
        case .jpeg:
            do {
                if encoder == nil { encoder = try JPEGEncoder() }
                // Safe: set just above.
                data = try encoder!.encode(frame, quality: settings.jpegQuality)
                bytesPerRow = 0
            } catch {
                logger.error("JPEG encoding failed; the frame is skipped", metadata: ["error": "\(error)"])
                return nil
            }
        }
        var flags: VideoFlags = []
        if paced.isRepeat { flags.insert(.repeat) }
        let header = VideoMessage(
            sequence: UInt32(truncatingIfNeeded: paced.slot), codec: settings.codec, flags: flags,
            width: UInt16(frame.width), height: UInt16(frame.height), bytesPerRow: UInt32(bytesPerRow),
            slotTime: paced.slotTime, captureTime: paced.frame.captureTime, data: []
        ).encodeHeader()
        let video = OutgoingVideo(header: header, data: data, isRepeat: paced.isRepeat)
        prepared[settings] = video
        return video
    }

    private mutating func frame(_ frame: VideoFrame, at size: VideoSize) -> VideoFrame {
        if frame.width == size.width && frame.height == size.height { return frame }
        if let done = scaled[size] { return done }
        let result = FrameScaler.scale(frame, to: size)
        scaled[size] = result
        return result
    }
}
