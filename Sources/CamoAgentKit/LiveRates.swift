import Synchronization

/// Events per second over the last second, from a monotonic clock's nanoseconds: a frame rate, a bitrate. A
/// plain value (the live view keeps it under a lock).
struct RateMeter: Sendable {
    private var events: [(time: UInt64, amount: Int)] = []
    private var head = 0

    /// Notes `amount` (1 for a frame, bytes for a bitrate) at `now`.
    mutating func add(_ amount: Int = 1, at now: UInt64) {
        events.append((now, amount))
        trim(now)
    }

    /// The sum of the amounts in the second before `now`.
    mutating func perSecond(at now: UInt64) -> Int {
        trim(now)
        return events[head...].reduce(0) { $0 + $1.amount }
    }

    private mutating func trim(_ now: UInt64) {
        while head < events.count, events[head].time + 1_000_000_000 <= now { head += 1 }
        if head > 256, head * 2 > events.count {
            events.removeFirst(head)
            head = 0
        }
    }
}
