#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A source of monotonic time in nanoseconds, and a way to wait for a point in it.
///
/// Everything that paces media takes one of these, so tests can drive time with a manual clock (CamoTestSupport's `ManualClock`, a test-only module).
public protocol MonotonicClock: Sendable {
    /// The current time in nanoseconds.
    func now() -> UInt64
    /// Suspends until `now() >= deadline`; throws `CancellationError` if the task is cancelled.
    func sleep(until deadline: UInt64) async throws
}

/// CLOCK_MONOTONIC of this machine; all agent timestamps are on this clock.
public struct SystemMonotonicClock: MonotonicClock {
    /// Creates the clock (it has no state).
    public init() {}

    /// Nanoseconds of CLOCK_MONOTONIC.
    public func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Sleeps with `Task.sleep` until `deadline`; returns at once (after a cancellation check)
    /// when the deadline has passed.
    public func sleep(until deadline: UInt64) async throws {
        try Task.checkCancellation()
        let current = now()
        if deadline > current {
            try await Task.sleep(nanoseconds: deadline - current)
        }
    }
}
