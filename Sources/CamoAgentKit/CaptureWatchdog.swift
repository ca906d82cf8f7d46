import CamoMedia
import Synchronization

/// When the video source last produced a frame (delivered to studios or not: with none connected a camera's
/// frames go back to the driver unconverted, and that is alive too).
public final class CaptureHeartbeat: Sendable {
    private let clock: any MonotonicClock
    private let last = Atomic<UInt64>(0)

    /// A heartbeat timed by `clock`.
    public init(clock: any MonotonicClock) {
        self.clock = clock
    }

    /// A frame was produced now.
    public func beat() {
        last.store(clock.now.nanoseconds, ordering: .relaxed)
    }

    /// The clock's time of the last frame; nil before the first.
    public var lastFrame: UInt64? {
        let time = last.load(ordering: .relaxed)
        return time == 0 ? nil : time
    }
}

/// Decides whether systemd's watchdog is fed: only while capture is alive, so a capture thread that hangs gets
/// the agent restarted.
///
/// Alive means the video source produced a frame within the last interval, or the camera is known to be
/// lost: then the agent is waiting for it to return (sending the no-signal picture), which is not a hang.
public struct CaptureWatchdog: Sendable, Equatable {
    /// The watchdog interval, in nanoseconds.
    public var intervalNanos: UInt64
    /// Whether the last decision was a stall (so a change is logged once).
    public private(set) var stalled = false

    /// A watchdog for `intervalNanos`.
    public init(intervalNanos: UInt64) {
        self.intervalNanos = intervalNanos
    }

    /// What to do now.
    public enum Decision: Sendable, Equatable {
        /// Send `WATCHDOG=1`.
        case feed
        /// Send `WATCHDOG=1`: capture delivers again after a stall.
        case feedAgain
        /// Do not feed: capture just stalled (log it once).
        case stall
        /// Do not feed: still stalled.
        case stillStalled
    }

    /// Decides at `now` from the last frame's time (nil: none yet) and whether the camera is known lost.
    public mutating func decide(now: UInt64, lastFrame: UInt64?, cameraLost: Bool) -> Decision {
        let alive = cameraLost || lastFrame.map { now >= $0 && now - $0 < intervalNanos } ?? false
        defer { stalled = !alive }
        switch (alive, stalled) {
        case (true, false): return .feed
        case (true, true): return .feedAgain
        case (false, false): return .stall
        case (false, true): return .stillStalled
        }
    }
}
