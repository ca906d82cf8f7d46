import CamoMedia
import CamoTestSupport
import Testing

@Suite("Clocks")
struct ClockTests {
    @Test func systemClockIsMonotonic() async throws {
        let clock = SystemMonotonicClock()
        let a = clock.now()
        try await clock.sleep(until: a + 1_000_000)
        let b = clock.now()
        #expect(b >= a + 1_000_000)
        try await clock.sleep(until: 0)  // in the past: returns at once
    }

    @Test func systemClockSleepIsCancellable() async {
        let clock = SystemMonotonicClock()
        let task = Task { try await clock.sleep(until: clock.now() + 3_600_000_000_000) }
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
                    #expect(clock.now() >= deadline)
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
            #expect(clock.now() == 300)
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
}
