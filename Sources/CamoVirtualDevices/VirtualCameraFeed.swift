/// What the virtual camera writes and when, as a plain value driven by explicit times (nanoseconds on one clock),
/// so it is tested without a device or a network.
///
/// The agent's frames are written as they arrive (it paces them at 30 fps; the consumer sees its cadence). When
/// none has come for ``stallNanos`` — before the first session, while a session is being re-established, or when
/// a session stalls — the filler picture (the last frame dimmed, "RECONNECTING") is written at the format's rate,
/// so a consumer's device never goes quiet and never changes format. The first frame of a session after filler
/// ends it.
public struct VirtualCameraFeed: Sendable, Equatable {
    /// Where the feed is.
    public enum State: String, Sendable, Equatable, Codable {
        /// No session yet: filler.
        case connecting
        /// The agent's frames are written.
        case streaming
        /// The session was lost or stalled: filler until frames come again.
        case reconnecting
    }

    /// What to write now.
    public enum Action: Sendable, Equatable {
        /// The frame that just arrived.
        case frame
        /// The filler picture.
        case filler
    }

    /// The interval of filler frames (the format's rate).
    public let frameIntervalNanos: UInt64
    /// How long without a frame counts as away (then filler starts).
    public var stallNanos: UInt64
    /// Where the feed is.
    public private(set) var state: State = .connecting
    /// The agent's frames written.
    public private(set) var framesWritten: UInt64 = 0
    /// Filler frames written.
    public private(set) var fillerWritten: UInt64 = 0
    /// Times the feed went from streaming to reconnecting.
    public private(set) var interruptions = 0

    private var lastFrameAt: UInt64?
    private var nextFillerAt: UInt64?

    /// A feed at `framesPerSecond` that shows filler after `stallNanos` without a frame (default 250 ms: eight
    /// frames, longer than any jitter of a healthy session, short enough that a consumer sees the break at once).
    public init(framesPerSecond: Int = 30, stallNanos: UInt64 = 250_000_000) {
        frameIntervalNanos = 1_000_000_000 / UInt64(max(1, framesPerSecond))
        self.stallNanos = stallNanos
    }

    /// A frame from the agent arrived at `now`: write it.
    public mutating func frameArrived(now: UInt64) -> Action {
        lastFrameAt = now
        nextFillerAt = nil
        state = .streaming
        framesWritten += 1
        return .frame
    }

    /// The session was lost at `now` (the studio knows before the stall shows): filler from the next tick.
    public mutating func sessionLost(now: UInt64) {
        if state == .streaming { interruptions += 1 }
        if state != .connecting { state = .reconnecting }
        lastFrameAt = nil
        if nextFillerAt == nil { nextFillerAt = now }
    }

    /// Called often (at least at the frame rate): `.filler` when a filler frame is due at `now`.
    public mutating func tick(now: UInt64) -> Action? {
        if let lastFrameAt {
            guard now >= lastFrameAt, now - lastFrameAt >= stallNanos else { return nil }
            // Stalled: away from now on, the filler starts at once.
            self.lastFrameAt = nil
            if state == .streaming {
                interruptions += 1
                state = .reconnecting
            }
            nextFillerAt = now
        }
        let due = nextFillerAt ?? now
        guard now >= due else { return nil }
        // Keep the cadence; after a long pause (a suspended process) start again from now rather than catch up.
        let next = due + frameIntervalNanos
        nextFillerAt = next > now ? next : now + frameIntervalNanos
        fillerWritten += 1
        return .filler
    }
}
