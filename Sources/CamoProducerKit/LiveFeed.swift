import CamoMedia
import Foundation
import Synchronization

/// One H.264 access unit for a live feed: the shared rendition's bytes, exactly as the studios on it get them.
public struct LiveVideo: Sendable {
    /// Annex B bytes; a keyframe carries SPS and PPS before its IDR slice.
    public var data: [UInt8]
    /// Whether it is a keyframe (a feed starts, and resumes after a loss, at one).
    public var isKeyframe: Bool
    /// When the frame was captured, controller clock, ns.
    public var captureTime: UInt64
    /// The picture size (a rotation by 90 or 270 degrees turns it).
    public var size: VideoSize
    /// The source's frame number (the synthetic pattern's, a camera's sequence).
    public var sourceSequence: UInt64
}

/// What a live feed asks of the H.264 encoders: a picture size and the bitrate to use while no studio shares its
/// rendition.
public struct LiveFeedRequest: Sendable, Hashable {
    /// The picture size, landscape (a picture turned in the settings comes out turned).
    public var size: VideoSize
    /// Bits per second while no studio is on the same rendition; with studios on it, theirs (their links adapt it).
    public var bitrate: Int

    /// A request for `size` at `bitrate` bits per second.
    public init(size: VideoSize = .hd720, bitrate: Int = 2_000_000) {
        self.size = size
        self.bitrate = bitrate
    }
}

/// A consumer of the shared H.264 rendition and of the microphone's audio beside the studios: live view in a
/// browser (WebRTC), an RTSP server, a clip writer. Made by ``CamoController/addLiveFeed(_:video:audio:)``.
///
/// A feed rides the fastest rendition of its size, so a browser watching the picture a studio also takes at that
/// size costs no second encode. Its callbacks run on the controller's pacer (video, 30 times a second) and on the
/// caller of ``CamoController/enqueuePCMAudio(_:)`` (audio): they must hand the data to the feed's own bounded
/// queue and return; a feed that lost frames calls ``requestKeyframe()`` and resumes at the next keyframe.
/// Nothing goes to a feed while the privacy switch is on; a muted microphone gives silence, as for the studios.
public final class LiveFeed: Sendable {
    struct State {
        /// Nothing until the first keyframe.
        var awaitingKeyframe = true
        var keyframeRequested = false
        var framesDelivered: UInt64 = 0
        /// The last unit's timestamp and its slot's time (a repeat is stamped after it by the slots between).
        var lastTime: UInt64?
        var lastSlotTime: UInt64 = 0
    }

    /// The feed's id.
    public let id = UUID()
    /// What it asked for.
    public let request: LiveFeedRequest
    let video: @Sendable (LiveVideo) -> Void
    let audio: @Sendable (AudioChunk) -> Void
    let state = Mutex(State())
    private let onRemove: Mutex<(@Sendable (UUID) -> Void)?>

    init(
        request: LiveFeedRequest, video: @escaping @Sendable (LiveVideo) -> Void,
        audio: @escaping @Sendable (AudioChunk) -> Void, onRemove: @escaping @Sendable (UUID) -> Void
    ) {
        self.request = request
        self.video = video
        self.audio = audio
        self.onRemove = Mutex(onRemove)
    }

    /// Asks for a keyframe soon (served at most once per ``H264Options/keyframeRequestIntervalNanos`` per
    /// rendition). The feed goes on meanwhile: a consumer that dropped frames waits for the keyframe itself, and the
    /// others sharing the feed (an RTSP client beside a stalled browser) lose nothing.
    public func requestKeyframe() {
        state.withLock { $0.keyframeRequested = true }
    }

    /// Access units delivered so far.
    public var framesDelivered: UInt64 { state.withLock { $0.framesDelivered } }

    /// Stops the feed: its rendition closes when nobody else uses it. A callback already under way (the pacer's
    /// slot or an audio chunk that took the list of feeds before) may still run once.
    public func remove() {
        let remove = onRemove.withLock { callback -> (@Sendable (UUID) -> Void)? in
            defer { callback = nil }
            return callback
        }
        remove?(id)
    }

    /// The timestamp of this slot's unit: the frame's capture time, except that a slot repeating the camera's last
    /// frame (encoded again for the feed) is stamped the slots' distance after the previous unit, so no two units
    /// share a timestamp (an RTP receiver takes equal timestamps for one picture). Always increasing.
    func timestamp(captureTime: UInt64, slotTime: UInt64, isRepeat: Bool) -> UInt64 {
        state.withLock { state in
            var time = captureTime
            if let last = state.lastTime, isRepeat || time <= last {
                let step = slotTime > state.lastSlotTime ? slotTime - state.lastSlotTime : 1_000_000
                time = max(time, last + max(step, 1_000_000))
            }
            state.lastTime = time
            state.lastSlotTime = slotTime
            return time
        }
    }

    /// Whether this slot's demand should ask for a keyframe (and clears the one-off request).
    func wantsKeyframe() -> Bool {
        state.withLock { state in
            defer { state.keyframeRequested = false }
            return state.awaitingKeyframe || state.keyframeRequested
        }
    }

    /// Whether the feed takes `isKeyframe`'s unit (nothing before its first keyframe); counts deliveries.
    func takes(isKeyframe: Bool) -> Bool {
        state.withLock { state in
            if state.awaitingKeyframe {
                guard isKeyframe else { return false }
                state.awaitingKeyframe = false
            }
            state.framesDelivered += 1
            return true
        }
    }
}
