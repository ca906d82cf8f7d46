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
    /// The H.264 encoders, one per rendition (nil: the controller has no H.264 options).
    private(set) var h264: H264Renditions?

    init(logger: Logger, h264: H264Options? = nil) {
        self.logger = logger
        self.h264 = h264.map { H264Renditions(options: $0, logger: logger) }
    }

    /// The H.264 message for the sessions on `key` in this slot (see ``H264Renditions``); nil without H.264
    /// options or when there is nothing to send.
    mutating func prepareH264(_ paced: PacedFrame, key: RenditionKey, demand: H264Demand, noSignal: Bool, now: UInt64) -> OutgoingVideo? {
        guard var renditions = h264 else { return nil }
        // The scaled frame is made only when the encoder really takes a new frame.
        var scaledFrame: VideoFrame?
        let cached = scaled[key.size]
        let result = renditions.prepare(
            paced, frame: {
                if let scaledFrame { return scaledFrame }
                let made: VideoFrame
                if paced.frame.width == key.size.width && paced.frame.height == key.size.height {
                    made = paced.frame
                } else if let cached, cached.inputIndex == paced.inputIndex {
                    made = cached.frame
                } else {
                    made = FrameScaler.scale(paced.frame, to: key.size)
                }
                scaledFrame = made
                return made
            }, key: key, demand: demand, noSignal: noSignal, now: now)
        h264 = renditions
        if let scaledFrame, scaledFrame.size != paced.frame.size { scaled[key.size] = (paced.inputIndex, scaledFrame) }
        usedSizes.insert(key.size)
        return result
    }

    /// A JPEG slot the rate control skipped (protocol 1.1): the `skipped` flag and no data; the studio shows its last
    /// picture again.
    func skippedPlaceholder(_ paced: PacedFrame, for settings: VideoSettings, noSignal: Bool) -> OutgoingVideo {
        var flags: VideoFlags = [.skipped]
        if noSignal { flags.insert(.noSignal) }
        let header = VideoMessage(
            sequence: UInt32(truncatingIfNeeded: paced.slot), codec: settings.codec, flags: flags,
            width: UInt16(settings.size.width), height: UInt16(settings.size.height), bytesPerRow: 0,
            slotTime: paced.slotTime, captureTime: paced.frame.captureTime,
            sourceSequence: UInt32(truncatingIfNeeded: paced.frame.sourceSequence), data: []
        ).encodeHeader()
        return OutgoingVideo(header: header, data: [], isRepeat: false)
    }

    /// Sizes the H.264 renditions used this slot (their scaled frames are kept like the other settings').
    private var usedSizes: Set<VideoSize> = []

    /// Starts a slot: forgets the previous slot's messages and the bytes of settings no longer in use.
    mutating func beginSlot(_ slot: UInt64 = 0) {
        h264?.beginSlot(slot)
        prepared.removeAll(keepingCapacity: true)
        encoded = encoded.filter { usedThisSlot.contains($0.key) }
        scaled = scaled.filter { entry in usedSizes.contains(entry.key) || usedThisSlot.contains { $0.size == entry.key } }
        usedThisSlot.removeAll(keepingCapacity: true)
        usedSizes.removeAll(keepingCapacity: true)
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
        case .h264:
            // H.264 goes through prepareH264: its frames depend on each other, so they are made per rendition.
            logger.error("An H.264 session reached the per-setting path; the frame is skipped")
            return nil
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
