import CamoMedia
import CamoWire
import Foundation
import Logging

/// One H.264 rendition: a picture size and a tier (0 = the fastest links at that size).
struct RenditionKey: Sendable, Hashable, CustomStringConvertible {
    var size: VideoSize
    var tier: Int
    var description: String { "\(size) tier \(tier)" }
}

/// What the sessions on a rendition ask of its next frame.
struct H264Demand: Sendable, Equatable {
    /// The rendition's bitrate: the lowest target among its sessions.
    var bitrate: Int
    /// A session waits for a keyframe (new, lost frames, moved rendition, or asked).
    var keyframe: Bool
    /// A session's latency budget would be passed: skip this frame before the encoder.
    var skip: Bool
    /// A live feed takes the rendition: a slot that repeats the last camera frame is encoded again (a tiny
    /// picture that changes nothing) instead of sent as a placeholder, so RTSP and WebRTC, which have no
    /// placeholders, get 30 frames a second whatever the camera's pace.
    var everySlot = false
}

/// Puts the H.264 sessions of one picture size on at most `maxRenditions` renditions, like simulcast: a session
/// whose link's target is below half the fastest session's moves to the lower tier, and back up once it reaches
/// 70 % (the gap keeps a session from flapping). Each rendition's bitrate is the lowest target among its
/// sessions, so no session gets more than its link takes, and a slow link never drags the fast rendition below
/// half of the fastest target. A plain function of the targets.
enum RenditionPlanner {
    /// The fraction of the fastest target below which a tier-0 session moves down.
    static let moveDown = 0.5
    /// The fraction at or above which a lower-tier session moves back up.
    static let moveUp = 0.7

    /// The tier for each session (by index into `sessions`).
    static func tiers(for sessions: [(target: Int, tier: Int)], maxRenditions: Int) -> [Int] {
        guard maxRenditions > 1, let fastest = sessions.map(\.target).max(), fastest > 0 else {
            return sessions.map { _ in 0 }
        }
        let top = Double(fastest)
        return sessions.map { session in
            let share = Double(session.target) / top
            if session.tier == 0 { return share < moveDown ? 1 : 0 }
            return share >= moveUp ? 0 : 1
        }
    }
}

/// The encoders of the H.264 renditions, owned by the pacer task with the ``VideoPreparer``.
struct H264Renditions {
    private final class Rendition {
        let encoder: any H264Encoding
        var policy: KeyframePolicy
        var bitrate: Int
        /// The input frame the encoder last took.
        var lastInputIndex: UInt64?
        var lastUsedSlot: UInt64
        init(encoder: any H264Encoding, policy: KeyframePolicy, bitrate: Int, slot: UInt64) {
            self.encoder = encoder
            self.policy = policy
            self.bitrate = bitrate
            self.lastUsedSlot = slot
        }
    }

    private let options: H264Options
    private let logger: Logger
    private var renditions: [RenditionKey: Rendition] = [:]
    /// When making an encoder last failed, per rendition (one retry per second).
    private var failedAt: [RenditionKey: UInt64] = [:]
    /// This slot's message per rendition (every session on it gets the same bytes).
    private var prepared: [RenditionKey: OutgoingVideo?] = [:]
    /// Frames the encoders encoded (tests).
    private(set) var encodeCount = 0
    /// Renditions alive now (tests, status).
    var count: Int { renditions.count }

    init(options: H264Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Starts a slot; renditions nobody used for 5 s are closed.
    mutating func beginSlot(_ slot: UInt64) {
        prepared.removeAll(keepingCapacity: true)
        for (key, rendition) in renditions where slot > rendition.lastUsedSlot + 150 {
            renditions[key] = nil
            logger.info("H.264 rendition closed (no studio takes it)", metadata: ["rendition": "\(key)"])
        }
    }

    /// The message for the sessions on `key` in this slot: a new access unit, a placeholder (repeat or skip), or
    /// nil when there is nothing to send (no encoder yet).
    mutating func prepare(
        _ paced: PacedFrame, frame: () -> VideoFrame, key: RenditionKey, demand: H264Demand, noSignal: Bool, now: UInt64
    ) -> OutgoingVideo? {
        if let done = prepared[key] { return done }
        let result = make(paced, frame: frame, key: key, demand: demand, noSignal: noSignal, now: now)
        prepared[key] = result
        return result
    }

    private mutating func make(
        _ paced: PacedFrame, frame: () -> VideoFrame, key: RenditionKey, demand: H264Demand, noSignal: Bool, now: UInt64
    ) -> OutgoingVideo? {
        guard let rendition = rendition(for: key, bitrate: demand.bitrate, slot: paced.slot, now: now) else { return nil }
        rendition.lastUsedSlot = paced.slot
        if demand.bitrate != rendition.bitrate, abs(demand.bitrate - rendition.bitrate) * 100 > rendition.bitrate * 3 {
            rendition.encoder.setBitrate(demand.bitrate)
            rendition.bitrate = demand.bitrate
        }
        if demand.keyframe { rendition.policy.request() }
        var flags: VideoFlags = noSignal ? [.noSignal] : []
        if paced.isRepeat, rendition.lastInputIndex == paced.inputIndex, !demand.everySlot {
            flags.insert(.repeat)
            return placeholder(paced, key: key, flags: flags)
        }
        let forceKeyframe = rendition.policy.decide(now: now)
        if demand.skip, rendition.lastInputIndex != nil {
            flags.insert(.skipped)
            return placeholder(paced, key: key, flags: flags)
        }
        let unit: EncodedAccessUnit?
        do {
            encodeCount += 1
            unit = try rendition.encoder.encode(frame(), forceKeyframe: forceKeyframe)
        } catch {
            // A fresh encoder after a second (starting with a keyframe) rather than the same broken one 30 times a second.
            logger.error(
                "H.264 encoding failed; the rendition's encoder is closed and opened again in a second",
                metadata: ["rendition": "\(key)", "error": "\(error)"])
            renditions[key] = nil
            failedAt[key] = now
            return nil
        }
        guard let unit, !unit.data.isEmpty else { return nil }
        rendition.lastInputIndex = paced.inputIndex
        rendition.policy.encoded(isKeyframe: unit.isKeyframe, forced: forceKeyframe, now: now)
        if unit.isKeyframe { flags.insert(.keyframe) }
        let header = VideoMessage(
            sequence: UInt32(truncatingIfNeeded: paced.slot), codec: .h264, flags: flags,
            width: UInt16(key.size.width), height: UInt16(key.size.height), bytesPerRow: 0,
            slotTime: paced.slotTime, captureTime: paced.frame.captureTime,
            sourceSequence: UInt32(truncatingIfNeeded: paced.frame.sourceSequence), data: []
        ).encodeHeader()
        return OutgoingVideo(header: header, data: unit.data, isRepeat: false, isH264: true, isKeyframe: unit.isKeyframe)
    }

    private func placeholder(_ paced: PacedFrame, key: RenditionKey, flags: VideoFlags) -> OutgoingVideo {
        let header = VideoMessage(
            sequence: UInt32(truncatingIfNeeded: paced.slot), codec: .h264, flags: flags,
            width: UInt16(key.size.width), height: UInt16(key.size.height), bytesPerRow: 0,
            slotTime: paced.slotTime, captureTime: paced.frame.captureTime,
            sourceSequence: UInt32(truncatingIfNeeded: paced.frame.sourceSequence), data: []
        ).encodeHeader()
        return OutgoingVideo(header: header, data: [], isRepeat: flags.contains(.repeat), isH264: true)
    }

    private mutating func rendition(for key: RenditionKey, bitrate: Int, slot: UInt64, now: UInt64) -> Rendition? {
        if let existing = renditions[key] { return existing }
        if let failed = failedAt[key], now >= failed, now - failed < 1_000_000_000 { return nil }
        do {
            let encoder = try options.makeEncoder(H264EncoderRequest(size: key.size, bitrate: bitrate, gopFrames: options.gopFrames))
            let rendition = Rendition(
                encoder: encoder,
                policy: KeyframePolicy(gopFrames: options.gopFrames, requestIntervalNanos: options.keyframeRequestIntervalNanos),
                bitrate: bitrate, slot: slot)
            renditions[key] = rendition
            failedAt[key] = nil
            logger.info(
                "H.264 rendition opened",
                metadata: ["rendition": "\(key)", "encoder": "\(options.encoderName)", "bitrate": "\(bitrate)"])
            return rendition
        } catch {
            failedAt[key] = now
            logger.error("Cannot open the H.264 encoder; retrying in a second", metadata: ["rendition": "\(key)", "error": "\(error)"])
            return nil
        }
    }
}

/// One slot's H.264 decisions for the sessions that take H.264: which rendition each is on and what each
/// rendition's next frame must be. A plain function over the sessions' states (tested without sockets).
enum H264SlotPlan {
    /// Plans the slot for `count` sessions; session `i` takes `sizes[i]`, and `withState(i) { ... }` runs a body on
    /// its state under its lock (tiers, keyframe waits and the rate control's skip votes change in place, so a
    /// receiver report that arrives meanwhile is never overwritten). `hasNewFrame` is false for a repeated slot
    /// (nothing to skip). Returns each session's rendition and each rendition's demand.
    static func plan(
        sizes: [VideoSize], hasNewFrame: Bool, now: UInt64, maxRenditionsPerSize: Int,
        withState: (Int, (inout H264SessionState) -> Void) -> Void
    ) -> (keys: [RenditionKey], demands: [RenditionKey: H264Demand]) {
        var current = sizes.map { _ in (target: 0, tier: 0) }
        for index in sizes.indices {
            withState(index) { current[index] = (target: $0.rate.targetBitrate, tier: $0.tier) }
        }
        var bySize: [VideoSize: [Int]] = [:]
        for (index, size) in sizes.enumerated() { bySize[size, default: []].append(index) }
        var keys = [RenditionKey](repeating: RenditionKey(size: VideoSize(width: 0, height: 0), tier: 0), count: sizes.count)
        for (size, indexes) in bySize {
            let tiers = RenditionPlanner.tiers(for: indexes.map { current[$0] }, maxRenditions: maxRenditionsPerSize)
            for (position, index) in indexes.enumerated() {
                keys[index] = RenditionKey(size: size, tier: tiers[position])
            }
        }
        var demands: [RenditionKey: H264Demand] = [:]
        for index in sizes.indices {
            let key = keys[index]
            var vote = H264Demand(bitrate: 0, keyframe: false, skip: false)
            var voted = false
            withState(index) { state in
                voted = true
                if state.tier != key.tier {
                    // The new rendition's stream starts at its next keyframe.
                    state.tier = key.tier
                    state.awaitingKeyframe = true
                }
                // A session waiting for a keyframe gets nothing, so its queue and latency say nothing now.
                vote.skip = hasNewFrame && !state.awaitingKeyframe
                    && state.rate.shouldSkipFrame(queuedBytes: state.queuedVideoBytes, now: now)
                vote.keyframe = state.awaitingKeyframe || state.keyframeRequested
                vote.bitrate = state.rate.targetBitrate
            }
            // A session whose state went away meanwhile (a setVideo to another codec) has no say.
            guard voted else { continue }
            if var demand = demands[key] {
                demand.bitrate = min(demand.bitrate, vote.bitrate)
                demand.keyframe = demand.keyframe || vote.keyframe
                demand.skip = demand.skip || vote.skip
                demands[key] = demand
            } else {
                demands[key] = vote
            }
        }
        return (keys, demands)
    }
}
