import CamoCodec
import CamoMedia
import CamoWire
import Logging

/// What arrived since the last receiver report: the frames (capture and arrival times, sizes), every byte, and the
/// video slots missing. A plain value; the handler sends ``take(now:)`` every 100 ms (protocol 1.1).
struct ReceiverReportBuilder: Sendable {
    private var sequence: UInt32 = 0
    private var frames: [ReceivedFrameReport] = []
    private var bytes: UInt64 = 0
    private var lost: UInt32 = 0
    private var since: UInt64
    private var lastVideoSequence: UInt32?

    init(now: UInt64) { since = now }

    /// Bytes read from the socket.
    mutating func received(bytes count: Int) { bytes &+= UInt64(count) }

    /// A video message completed at `now`. Returns the slots missing before it (a gap in `sequence`).
    @discardableResult
    mutating func video(sequence: UInt32, captureTime: UInt64, bytes count: Int, now: UInt64) -> UInt32 {
        var missing: UInt32 = 0
        if let last = lastVideoSequence, sequence &- last > 1, sequence &- last < 1 << 31 {
            missing = sequence &- last &- 1
            lost &+= missing
        }
        lastVideoSequence = sequence
        frames.append(ReceivedFrameReport(
            sequence: sequence, captureTime: captureTime, receivedAt: now, bytes: UInt32(clamping: count)))
        if frames.count > ReceiverReport.maxFrames { frames.removeFirst(frames.count - ReceiverReport.maxFrames) }
        return missing
    }

    /// The report for everything since the last one, and a fresh interval from `now`.
    mutating func take(now: UInt64) -> ReceiverReport {
        let report = ReceiverReport(
            sequence: sequence, intervalNanos: now >= since ? now - since : 0, bytesReceived: bytes, framesLost: lost,
            frames: frames)
        sequence &+= 1
        frames.removeAll(keepingCapacity: true)
        bytes = 0
        lost = 0
        since = now
        return report
    }
}

/// When the studio asks for a keyframe: it has no picture yet, lost frames, or its decoder failed; at most once per
/// ``interval`` while it waits. A plain value.
struct KeyframeRequester: Sendable {
    /// The least time between two requests.
    static let interval: UInt64 = 500_000_000
    /// The decoder waits for a keyframe (nothing decodes until one comes).
    private(set) var waiting = true
    private var lastRequestAt: UInt64?
    /// Requests sent.
    private(set) var requests = 0

    /// A keyframe arrived and decoded.
    mutating func gotKeyframe() { waiting = false }

    /// Something broke the chain (a gap or a decoder error): wait for a keyframe.
    mutating func lost() { waiting = true }

    /// Whether to send a request now (waiting, and the last one is old enough); counts it.
    mutating func shouldRequest(now: UInt64) -> Bool {
        guard waiting else { return false }
        if let last = lastRequestAt, now >= last, now - last < Self.interval { return false }
        lastRequestAt = now
        requests += 1
        return true
    }
}

/// The studio's H.264 receive path: decodes access units with libavcodec (CamoCodec), keeps the last good picture for
/// repeated and skipped slots, and decides when to ask for a keyframe. Owned by the session's handler (one event loop).
final class H264Receiver {
    private var decoder: H264Decoder?
    private let logger: Logger
    private(set) var requester = KeyframeRequester()
    /// The last picture decoded cleanly.
    private(set) var lastPicture: VideoFrame?
    /// Access units the decoder refused or decoded with damage.
    private(set) var decoderErrors = 0

    /// The outcome of one video message.
    enum Outcome {
        /// A picture to show (new, or the last one again for a repeat or a skip).
        case picture(VideoFrame, keyframe: Bool)
        /// Nothing to show (waiting for a keyframe, or the decoder needs more).
        case nothing
    }

    init(logger: Logger) {
        self.logger = logger
    }

    /// Handles one H.264 message; `gap` says slots went missing just before it.
    func receive(_ video: VideoMessage, gap: Bool) -> Outcome {
        if gap { requester.lost() }
        if video.data.isEmpty {
            // A repeat or a skip: the picture does not change.
            guard !requester.waiting, var picture = lastPicture else { return .nothing }
            picture.captureTime = video.captureTime
            picture.sourceSequence = UInt64(video.sourceSequence)
            return .picture(picture, keyframe: false)
        }
        let isKeyframe = video.flags.contains(.keyframe)
        if requester.waiting && !isKeyframe { return .nothing }
        do {
            if decoder == nil { decoder = try H264Decoder(logger: logger) }
            // Safe: set just above.
            guard var frame = try decoder!.decode(video.data, captureTime: video.captureTime) else { return .nothing }
            if decoder!.lastPictureDamaged {
                decoderErrors += 1
                requester.lost()
                logger.notice("H.264 frame \(video.sequence) decoded with damage; asking for a keyframe")
                return .nothing
            }
            frame.sourceSequence = UInt64(video.sourceSequence)
            if isKeyframe { requester.gotKeyframe() }
            lastPicture = frame
            return .picture(frame, keyframe: isKeyframe)
        } catch {
            decoderErrors += 1
            requester.lost()
            logger.notice("H.264 frame \(video.sequence) did not decode (\(error)); asking for a keyframe")
            return .nothing
        }
    }

    /// Whether to send a keyframe request now (see ``KeyframeRequester``).
    func shouldRequestKeyframe(now: UInt64) -> Bool { requester.shouldRequest(now: now) }
}
