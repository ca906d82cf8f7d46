import Synchronization

/// A clock whose time moves only when something sleeps on it: a sleep ends at once, with the clock at its
/// deadline. Loops that wait on it run in no real time, and where they are in time is exact.
final class VirtualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        /// Time since the clock was made.
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))

    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .zero }

    /// Time since the clock was made.
    var elapsed: Duration { now.offset }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        current.withLock { now in
            if now < deadline { now = deadline }
        }
        await Task.yield()
    }
}
