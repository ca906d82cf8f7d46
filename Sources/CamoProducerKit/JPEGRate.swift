/// JPEG through the same rate control as H.264 (protocol 1.1, studios on the network): the quality follows the
/// link's target bitrate, and frames are skipped when the latency budget would be passed. A plain value, kept per
/// session under its lock.
///
/// JPEG has no rate control of its own, so the quality is steered by the size of the frames it made: a frame of more
/// than 110 % of the target's share (target / 30) lowers the quality by a step, one under 60 % raises it, between
/// ``minimumQuality`` and the quality the studio asked for. Steps of 5 keep the number of distinct encodes small
/// (sessions with the same size and quality share one).
struct JPEGRateState: Sendable {
    /// The lowest quality the rate control goes to (below it, skipping frames is the better trade).
    static let minimumQuality = 20
    /// How far one adjustment moves the quality.
    static let step = 5

    /// The link's rate control (bits/s, skip votes), fed by the studio's receiver reports.
    var rate: LinkRateController
    /// The quality the studio asked for (or the agent's default): the ceiling.
    var requestedQuality: Int
    /// The quality in use now.
    private(set) var quality: Int
    /// Slots sent as skipped.
    var skippedFrames: UInt64 = 0
    /// Video bytes the session's outbox holds, not yet written.
    var queuedVideoBytes = 0

    init(rate: LinkRateController, quality: Int) {
        self.rate = rate
        self.requestedQuality = quality
        self.quality = quality
    }

    /// A frame of `bytes` went out at the current quality: steer the quality toward the target's share of a frame.
    mutating func sent(bytes: Int) {
        rate.frameSent(bytes: bytes)
        let share = Double(rate.targetBitrate) / 30
        let bits = Double(bytes * 8)
        if bits > 1.1 * share {
            quality = max(Self.minimumQuality, quality - Self.step)
        } else if bits < 0.6 * share {
            quality = min(requestedQuality, quality + Self.step)
        }
    }

    /// The JPEG rate bounds for a picture size: JPEG needs several times H.264's bits for the same picture, so the
    /// floor is 1.5 Mb/s and the ceiling 40 Mb/s at 1280x720 (first 8 Mb/s), scaled by pixel count like H.264's.
    static func configuration(width: Int, height: Int, latencyBudgetNanos: UInt64) -> LinkRateConfiguration {
        let scale = min(4, max(0.125, Double(width * height) / Double(1280 * 720)))
        func scaled(_ value: Double) -> Int { Int((value * scale).rounded()) }
        return LinkRateConfiguration(
            floor: scaled(1_500_000), ceiling: scaled(40_000_000), start: scaled(8_000_000), latencyBudgetNanos: latencyBudgetNanos)
    }
}
