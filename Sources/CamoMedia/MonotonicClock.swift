#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time on a ``MonotonicClock``: nanoseconds of CLOCK_MONOTONIC, the time base of every timestamp the
/// wire carries (capture, slot and sample times).
public struct MonotonicInstant: InstantProtocol, Hashable, Sendable {
    /// Nanoseconds since the clock's origin (the machine's boot, for CLOCK_MONOTONIC).
    public var nanoseconds: UInt64

    /// The instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// This instant moved by `duration` (never before the origin).
    public func advanced(by duration: Duration) -> MonotonicInstant {
        let (seconds, attoseconds) = duration.components
        let delta = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return MonotonicInstant(nanoseconds: delta >= 0 ? nanoseconds &+ UInt64(delta) : nanoseconds - min(nanoseconds, UInt64(-delta)))
    }

    /// The time from this instant to `other` (negative when `other` is earlier).
    public func duration(to other: MonotonicInstant) -> Duration {
        other.nanoseconds >= nanoseconds
            ? .nanoseconds(Int64(other.nanoseconds - nanoseconds)) : .nanoseconds(-Int64(nanoseconds - other.nanoseconds))
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

/// Monotonic time in nanoseconds, and a way to wait for a point in it: a Swift `Clock` whose instants are the
/// wire's timestamps.
///
/// Everything that paces media or times a deadline takes one of these, so tests drive time with a manual clock
/// (CamoTestSupport's `ManualClock`, a test-only module) and run in milliseconds. Read the time with
/// `now.nanoseconds`; wait with `sleep(until:)` on nanoseconds or on an instant.
public protocol MonotonicClock: Clock, Sendable where Instant == MonotonicInstant, Duration == Swift.Duration {
    /// Suspends until `now.nanoseconds >= deadline`; throws `CancellationError` if the task is cancelled.
    func sleep(until deadline: UInt64) async throws
}

extension MonotonicClock {
    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until `deadline` (tolerance is not used: the clocks here wake at the deadline).
    public func sleep(until deadline: MonotonicInstant, tolerance: Duration? = nil) async throws {
        try await sleep(until: deadline.nanoseconds)
    }
}

/// CLOCK_MONOTONIC of this machine; all agent timestamps are on this clock.
public struct SystemMonotonicClock: MonotonicClock {
    /// Creates the clock (it has no state).
    public init() {}

    /// Now, on CLOCK_MONOTONIC.
    public var now: MonotonicInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return MonotonicInstant(nanoseconds: UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec))
    }

    /// Sleeps with `Task.sleep` until `deadline`; returns at once (after a cancellation check)
    /// when the deadline has passed.
    public func sleep(until deadline: UInt64) async throws {
        try Task.checkCancellation()
        let current = now.nanoseconds
        if deadline > current {
            try await Task.sleep(nanoseconds: deadline - current)
        }
    }
}
