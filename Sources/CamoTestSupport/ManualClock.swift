import CamoMedia
import Synchronization

/// A clock that moves only when told to, for tests.
///
/// Sleepers whose deadline has passed are resumed by ``advance(by:)`` / ``advance(to:)`` in
/// deadline order (earliest first, ties in the order they went to sleep). A cancelled sleeper
/// is removed and throws `CancellationError`. ``waitForSleepers(_:)`` lets a test wait until the
/// code under test is parked on the clock before it advances time, so no wall-clock waits are needed.
public final class ManualClock: MonotonicClock {
    private struct Sleeper {
        var deadline: UInt64
        var order: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: UInt64
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledBeforeRegistration: Set<UInt64> = []
        var watchers: [Watcher] = []

        /// Removes and returns the watchers satisfied by the current sleeper count.
        mutating func satisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            var ready: [CheckedContinuation<Void, Never>] = []
            watchers.removeAll { watcher in
                guard sleepers.count >= watcher.count else { return false }
                ready.append(watcher.continuation)
                return true
            }
            return ready
        }
    }

    private let state: Mutex<State>

    /// Creates a clock that reads `now` until advanced.
    public init(now: UInt64 = 0) {
        state = Mutex(State(now: now))
    }

    /// The current manual time.
    public var now: MonotonicInstant {
        MonotonicInstant(nanoseconds: state.withLock { $0.now })
    }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline anyone is sleeping until, if anyone is.
    public var nextDeadline: UInt64? {
        state.withLock { $0.sleepers.values.map(\.deadline).min() }
    }

    /// Suspends until the clock is advanced to `deadline` or beyond.
    public func sleep(until deadline: UInt64) async throws {
        try Task.checkCancellation()
        let id: UInt64? = state.withLock { state in
            guard deadline > state.now else { return nil }
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Action { case wait, resume, cancel }
                let (action, watchers) = state.withLock { state -> (Action, [CheckedContinuation<Void, Never>]) in
                    if state.cancelledBeforeRegistration.remove(id) != nil { return (.cancel, []) }
                    if deadline <= state.now { return (.resume, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, order: id, continuation: continuation)
                    return (.wait, state.satisfiedWatchers())
                }
                switch action {
                case .wait: break
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelledBeforeRegistration.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // A cancellation that arrived after a normal resume leaves a stale id behind; drop it.
        state.withLock { _ = $0.cancelledBeforeRegistration.remove(id) }
    }

    /// Moves the clock forward by `nanoseconds` and wakes every sleeper whose deadline has passed.
    public func advance(by nanoseconds: UInt64) {
        let target = state.withLock { $0.now } &+ nanoseconds
        advance(to: target)
    }

    /// Moves the clock to `time` (never backwards) and wakes every sleeper whose deadline has
    /// passed, earliest deadline first.
    public func advance(to time: UInt64) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, time)
            let now = state.now
            let due = state.sleepers.values.filter { $0.deadline <= now }
                .sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            for sleeper in due { state.sleepers.removeValue(forKey: sleeper.order) }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on this clock (immediately if they already are).
    ///
    /// Not cancellable: a test that waits for a sleeper that never comes hangs, which the test
    /// runner reports as a hang rather than a false pass.
    public func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.watchers.append(Watcher(count: count, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
