@testable import CamoProducerKit
import CamoClockTimer
import CamoMedia
import CamoTestSupport
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// ``ClockTimer`` on a manual clock: it fires when the clock says, never on its own, and a cancel on its loop holds;
/// on the system clock, the loop keeps the time.
@Suite("ClockTimer", .timeLimit(.minutes(1)))
struct ClockTimerTests {
    /// Counts runs of a timer's action.
    final class Runs: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }

        /// Waits (real time, bounded) until at least `expected` runs happened; returns the count.
        func wait(for expected: Int) async -> Int {
            for _ in 0..<1_000 where value < expected { try? await Task.sleep(nanoseconds: 5_000_000) }
            return value
        }
    }

    static let second: UInt64 = 1_000_000_000

    @Test func aOneShotTimerFiresAtItsDeadlineOfTheClockAndNotBefore() async {
        let clock = ManualClock(now: 7 * Self.second)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let runs = Runs()
        let timer = ClockTimer.once(clock: clock, after: 5 * Self.second, on: loop) {
            loop.preconditionInEventLoop()
            runs.add()
        }
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == 12 * Self.second, "the deadline counts from the clock's now")
        try? await Task.sleep(nanoseconds: 200_000_000)
        #expect(runs.value == 0, "the clock stood still, so the timer did not fire however long it waited")
        clock.advance(to: 12 * Self.second - 1)
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(runs.value == 0, "one nanosecond early")
        clock.advance(by: 1)
        #expect(await runs.wait(for: 1) == 1)
        timer.cancel()
    }

    @Test func aCancelOnTheLoopHoldsEvenWhenTheClockHasPassed() async {
        let clock = ManualClock()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let runs = Runs()
        let timer = ClockTimer.once(clock: clock, after: Self.second, on: loop) { runs.add() }
        await clock.waitForSleepers(1)
        // The clock passes the deadline while the loop is busy; the cancel comes before the loop is free again,
        // whether or not the woken timer has handed its action over yet.
        try? await loop.submit {
            clock.advance(by: Self.second)
            usleep(50_000)
            timer.cancel()
        }.get()
        try? await Task.sleep(nanoseconds: 100_000_000)
        #expect(runs.value == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test func aCancelledTimerLeavesTheClock() async {
        let clock = ManualClock()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let timer = ClockTimer.once(clock: clock, after: Self.second, on: loop) {}
        await clock.waitForSleepers(1)
        timer.cancel()
        #expect(clock.sleeperCount == 0, "the sleeping task ended at once")
    }

    @Test func aRepeatingTimerRunsOnceForAJumpThenEveryIntervalAfterIt() async {
        let clock = ManualClock()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let runs = Runs()
        let timer = ClockTimer.repeating(clock: clock, every: Self.second, on: loop) { runs.add() }
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == Self.second)
        clock.advance(by: 10 * Self.second)
        #expect(await runs.wait(for: 1) == 1)
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == 11 * Self.second, "the next run is an interval after the jump, not a burst of missed ones")
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(runs.value == 1)
        clock.advance(by: Self.second)
        #expect(await runs.wait(for: 2) == 2)
        await clock.waitForSleepers(1)
        timer.cancel()
        #expect(clock.sleeperCount == 0)
        clock.advance(by: 5 * Self.second)
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(runs.value == 2, "nothing runs after the cancel")
    }

    /// On the system clock the loop's own timers keep the time (no task on Swift's cooperative pool, which tests and
    /// callers may block): the action runs on the loop, repeats, and a cancel on the loop holds.
    @Test func onTheSystemClockTheLoopKeepsTheTime() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let clock = SystemMonotonicClock()
        let once = Runs()
        let start = clock.now.nanoseconds
        let fired = Mutex<UInt64>(0)
        _ = ClockTimer.once(clock: clock, after: 20_000_000, on: loop) {
            loop.preconditionInEventLoop()
            fired.withLock { $0 = clock.now.nanoseconds }
            once.add()
        }
        #expect(await once.wait(for: 1) == 1)
        #expect(fired.withLock { $0 } >= start + 20_000_000, "not before its deadline")

        let repeated = Runs()
        let timer = ClockTimer.repeating(clock: clock, every: 5_000_000, on: loop) {
            loop.preconditionInEventLoop()
            repeated.add()
        }
        #expect(await repeated.wait(for: 3) >= 3)
        try await loop.submit { timer.cancel() }.get()
        let atCancel = repeated.value
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(repeated.value == atCancel, "nothing runs after a cancel on the loop")

        let cancelled = Runs()
        let never = ClockTimer.once(clock: clock, after: 10_000_000, on: loop) { cancelled.add() }
        never.cancel()
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(cancelled.value == 0)
    }

    @Test func secondsBecomeNanosecondsWithoutTrapping() {
        #expect(ClockTimer.nanoseconds(1.5) == 1_500_000_000)
        #expect(ClockTimer.nanoseconds(0) == 0)
        #expect(ClockTimer.nanoseconds(-3) == 0)
        #expect(ClockTimer.nanoseconds(.nan) == 0)
        #expect(ClockTimer.nanoseconds(.infinity) == UInt64.max)
        #expect(ClockTimer.nanoseconds(1e300) == UInt64.max)
    }
}
