import Glibc

/// CLOCK_MONOTONIC, the clock of the kernel's GPIO and input event timestamps and of the agent's capture times.
enum MonotonicTime {
    /// Now, ns.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// A kernel timestamp that should be on CLOCK_MONOTONIC, or `now` when it is not (a kernel before 5.7 stamps
    /// GPIO events with the wall clock, and an input device that refused EVIOCSCLOCKID does too): a timestamp more
    /// than a minute away from `now` is not this clock's.
    static func plausible(_ time: UInt64, now: UInt64) -> UInt64 {
        let distance = time > now ? time - now : now - time
        return distance > 60_000_000_000 ? now : time
    }
}
