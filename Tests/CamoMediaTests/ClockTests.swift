import CamoMedia
import CamoTestSupport
import Testing

@Suite("Clocks")
struct ClockTests {
    @Test func systemClockIsMonotonic() async throws {
        let clock = SystemMonotonicClock()
        let a = clock.now.nanoseconds
        try await clock.sleep(until: a + 1_000_000)
        let b = clock.now.nanoseconds
        #expect(b >= a + 1_000_000)
        try await clock.sleep(until: 0)  // in the past: returns at once
    }

    @Test func systemClockSleepIsCancellable() async {
        let clock = SystemMonotonicClock()
        let task = Task { try await clock.sleep(until: clock.now.nanoseconds + 3_600_000_000_000) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func manualClockWakesSleepersInDeadlineOrder() async throws {
        let clock = ManualClock(now: 100)
        let order = Locked<[UInt64]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for deadline: UInt64 in [300, 150, 200, 1000] {
                group.addTask {
                    try await clock.sleep(until: deadline)
                    #expect(clock.now.nanoseconds >= deadline)
                    order.withLock { $0.append(deadline) }
                }
            }
            await clock.waitForSleepers(4)
            #expect(clock.nextDeadline == 150)
            clock.advance(to: 150)
            while order.withLock({ $0.count }) < 1 { await Task.yield() }
            #expect(clock.sleeperCount == 3)
            clock.advance(by: 150)  // to 300: wakes 200 and 300
            while order.withLock({ $0.count }) < 3 { await Task.yield() }
            #expect(order.value.sorted() == [150, 200, 300])
            #expect(clock.sleeperCount == 1)
            clock.advance(to: 50)  // never backwards
            #expect(clock.now.nanoseconds == 300)
            clock.advance(to: 1000)
            try await group.waitForAll()
        }
        #expect(order.value.first == 150)
        #expect(clock.sleeperCount == 0)
    }

    @Test func manualClockSleepInThePastReturnsAtOnce() async throws {
        let clock = ManualClock(now: 10)
        try await clock.sleep(until: 10)
        try await clock.sleep(until: 3)
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingAManualSleeperRemovesIt() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(until: 1_000) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
        clock.advance(to: 2_000)  // nothing left to resume
    }

    @Test func aTaskCancelledBeforeSleepingThrowsAtOnce() async {
        let clock = ManualClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: 1_000)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func instantsAreNanosecondsWithDurations() {
        let a = MonotonicInstant(nanoseconds: 1_500_000_000)
        #expect(a.advanced(by: .milliseconds(250)).nanoseconds == 1_750_000_000)
        #expect(a.advanced(by: .seconds(-1)).nanoseconds == 500_000_000)
        #expect(a.advanced(by: .seconds(-5)).nanoseconds == 0, "never before the origin")
        #expect(a.duration(to: MonotonicInstant(nanoseconds: 1_000_000_000)) == .milliseconds(-500))
        #expect(a.duration(to: a.advanced(by: .microseconds(7))) == .microseconds(7))
        #expect(MonotonicInstant(nanoseconds: 1) < a)
    }

    /// The clocks are Swift `Clock`s: code written against `Clock` (sleep(for:), measure) runs on the manual clock.
    @Test func theManualClockIsASwiftClock() async throws {
        let clock = ManualClock(now: 1_000)
        func wait(on clock: some Clock<Duration>) async throws { try await clock.sleep(for: .milliseconds(5)) }
        let sleeper = Task { try await wait(on: clock) }
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == 5_001_000, "sleep(for:) sleeps until now + 5 ms on this clock")
        clock.advance(by: 4_999_999)
        #expect(clock.sleeperCount == 1, "not yet due")
        clock.advance(by: 1)
        try await sleeper.value
        #expect(clock.now == MonotonicInstant(nanoseconds: 5_001_000) && clock.minimumResolution == .nanoseconds(1))
    }
}
