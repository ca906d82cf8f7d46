import CamoMedia
import NIOCore
import Synchronization

/// A deadline on a ``MonotonicClock`` whose action runs on an event loop: what the connection handlers (the agent's
/// and the studio's) use instead of SwiftNIO's timers, so every deadline follows the clock they were given (a manual
/// one in tests).
///
/// On the system clock (``SystemMonotonicClock``, CLOCK_MONOTONIC) the event loop itself keeps the time: SwiftNIO's
/// timers, which fire on the loop whatever Swift's cooperative thread pool is doing. On any other clock a task sleeps
/// on that clock until the deadline, then hands the action to the loop. Either way, ``cancel()`` called on that loop
/// keeps an action that has not started yet from running, even one already handed over, as `Scheduled.cancel()`
/// does.
package struct ClockTimer: Sendable {
    /// Set by ``cancel()``; read by the task and, on the loop, right before the action.
    private final class Cancellation: Sendable {
        private let flag = Atomic(false)
        var isCancelled: Bool { flag.load(ordering: .acquiring) }
        func cancel() { flag.store(true, ordering: .releasing) }
    }

    /// What keeps the time: the loop's own timer, or a task sleeping on the given clock.
    private enum Keeper: Sendable {
        case loop(Scheduled<Void>)
        case repeatedOnLoop(RepeatedTask)
        case task(Task<Void, Never>)
    }

    private let cancellation: Cancellation
    private let keeper: Keeper

    private init(cancellation: Cancellation, keeper: Keeper) {
        self.cancellation = cancellation
        self.keeper = keeper
    }

    /// Runs `action` on `loop` once `clock` has moved `delay` nanoseconds on from now, unless cancelled first: like
    /// `scheduleTask(in:_:)`.
    package static func once(
        clock: any MonotonicClock, after delay: UInt64, on loop: any EventLoop, _ action: @escaping @Sendable () -> Void
    ) -> ClockTimer {
        let cancellation = Cancellation()
        if clock is SystemMonotonicClock {
            let scheduled = loop.scheduleTask(in: Self.timeAmount(delay)) {
                guard !cancellation.isCancelled else { return }
                action()
            }
            return ClockTimer(cancellation: cancellation, keeper: .loop(scheduled))
        }
        let deadline = Self.adding(delay, to: clock.now.nanoseconds)
        let task = Task {
            do { try await clock.sleep(until: deadline) } catch { return }
            Self.run(action, on: loop, unless: cancellation)
        }
        return ClockTimer(cancellation: cancellation, keeper: .task(task))
    }

    /// Runs `action` on `loop` `interval` nanoseconds from now, then again `interval` after each time the clock
    /// woke for it, until cancelled: like `scheduleRepeatedTask(initialDelay:delay:)` with both equal, so a clock
    /// that jumps far ahead gives one run, not one for every interval it skipped.
    package static func repeating(
        clock: any MonotonicClock, every interval: UInt64, on loop: any EventLoop, _ action: @escaping @Sendable () -> Void
    ) -> ClockTimer {
        let cancellation = Cancellation()
        // At least a nanosecond, so a zero interval cannot spin without the clock moving.
        let step = max(interval, 1)
        if clock is SystemMonotonicClock {
            let amount = Self.timeAmount(step)
            let repeated = loop.scheduleRepeatedTask(initialDelay: amount, delay: amount) { _ in
                guard !cancellation.isCancelled else { return }
                action()
            }
            return ClockTimer(cancellation: cancellation, keeper: .repeatedOnLoop(repeated))
        }
        let first = Self.adding(step, to: clock.now.nanoseconds)
        let task = Task {
            var deadline = first
            while !cancellation.isCancelled {
                do { try await clock.sleep(until: deadline) } catch { return }
                Self.run(action, on: loop, unless: cancellation)
                deadline = Self.adding(step, to: clock.now.nanoseconds)
            }
        }
        return ClockTimer(cancellation: cancellation, keeper: .task(task))
    }

    private static func run(_ action: @escaping @Sendable () -> Void, on loop: any EventLoop, unless cancellation: Cancellation) {
        // Checked before handing over too, so a cancelled timer does not reach a loop that may have shut down.
        guard !cancellation.isCancelled else { return }
        loop.execute {
            guard !cancellation.isCancelled else { return }
            action()
        }
    }

    /// Stops the timer: the action does not run after this returns on the timer's loop, and whatever kept the time
    /// (the loop's timer or the sleeping task) ends.
    package func cancel() {
        cancellation.cancel()
        switch keeper {
        case .loop(let scheduled): scheduled.cancel()
        case .repeatedOnLoop(let repeated): repeated.cancel()
        case .task(let task): task.cancel()
        }
    }

    /// `nanoseconds` as SwiftNIO's time amount (which holds at most Int64.max).
    private static func timeAmount(_ nanoseconds: UInt64) -> TimeAmount {
        .nanoseconds(Int64(min(nanoseconds, UInt64(Int64.max))))
    }

    /// `seconds` (a configuration value) as clock nanoseconds; a negative or non-finite value counts as 0, a huge one
    /// as the farthest the clock can express.
    package static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let nanos = seconds * 1e9
        guard nanos < Double(UInt64.max) else { return UInt64.max }
        return UInt64(nanos)
    }

    /// `time + delay`, or the farthest time the clock can express when that overflows.
    private static func adding(_ delay: UInt64, to time: UInt64) -> UInt64 {
        let (sum, overflow) = time.addingReportingOverflow(delay)
        return overflow ? .max : sum
    }
}
