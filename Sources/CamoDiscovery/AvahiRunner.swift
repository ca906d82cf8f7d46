import Synchronization

/// What the browser and the publisher share: the avahi event loop thread, started and stopped one caller at a
/// time, and the state other threads read, with the event streams of its subscribers.
///
/// The engine brings what differs: how it connects (a client that fails fast, or one that waits for the daemon
/// and is made again after a restart) and which avahi objects it frees. Lock order: the loop lock, then the
/// state; the engine may read or update the state from its loop callbacks.
final class AvahiRunner<State: Sendable, Event: Sendable>: Sendable {
    private struct Observed {
        var state: State
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextID = 0
    }

    /// The avahi event loop: the engine holds its lock around every avahi call and its loop-side state.
    let loop = AvahiLoop()
    private let running = Mutex(false)  // serializes start and stop
    private let observed: Mutex<Observed>

    /// A stopped runner with the state subscribers see first.
    init(state: State) {
        observed = Mutex(Observed(state: state))
    }

    /// Starts the loop thread unless it runs already. `connect` runs first, with the loop lock held; when the
    /// thread cannot start, `teardown` undoes it (lock held) and the error says so.
    /// - Returns: false when it was running (nothing was done).
    @discardableResult
    func start(connect: () throws(DiscoveryError) -> Void, teardown: () -> Void) throws(DiscoveryError) -> Bool {
        try running.withLock { (running: inout Bool) throws(DiscoveryError) -> Bool in
            guard !running else { return false }
            try loop.withLock { () throws(DiscoveryError) in try connect() }
            do throws(AvahiCode) {
                try loop.start()
            } catch {
                loop.withLock { teardown() }
                throw .avahi(operation: "Starting the avahi event loop", code: error.rawValue, message: error.message)
            }
            running = true
            return true
        }
    }

    /// Stops the loop thread if it runs (`teardown` first, with the loop lock held) and waits for it; then
    /// every event stream ends. Never call it from a loop callback.
    /// - Returns: whether it was running.
    @discardableResult
    func stop(teardown: () -> Void) -> Bool {
        let (wasRunning, finished) = running.withLock { running in
            let wasRunning = running
            if running {
                running = false
                loop.withLock { teardown() }
                loop.stop()
            }
            return (wasRunning, takeContinuations())
        }
        for continuation in finished { continuation.finish() }
        return wasRunning
    }

    /// Runs `body` with the state locked.
    func withState<T: Sendable>(_ body: (inout State) -> T) -> T {
        observed.withLock { body(&$0.state) }
    }

    /// Changes the state and gives the event `change` returns, if any, to every stream, in one locked step.
    /// - Returns: that event.
    @discardableResult
    func update(_ change: (inout State) -> Event?) -> Event? {
        observed.withLock { observed in
            guard let event = change(&observed.state) else { return nil }
            for continuation in observed.continuations.values { continuation.yield(event) }
            return event
        }
    }

    /// Gives `event` to every stream.
    func broadcast(_ event: Event) {
        update { _ in event }
    }

    /// A stream of the events from now on, until `stop` or `finishAll`. `greet` runs first, with the state
    /// locked: it yields what a new subscriber must see, and returns false to end the stream right after that
    /// (when the engine has failed, say).
    func subscribe(greet: (State, AsyncStream<Event>.Continuation) -> Bool) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let id = observed.withLock { observed in
            defer { observed.nextID += 1 }
            return observed.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.observed.withLock { $0.continuations.removeValue(forKey: id) }
        }
        let keep = observed.withLock { observed in
            guard greet(observed.state, continuation) else { return false }
            observed.continuations[id] = continuation
            return true
        }
        if !keep { continuation.finish() }
        return stream
    }

    /// Ends every stream; the runner and its state stay as they are.
    func finishAll() {
        for continuation in takeContinuations() { continuation.finish() }
    }

    private func takeContinuations() -> [AsyncStream<Event>.Continuation] {
        observed.withLock { observed in
            let all = Array(observed.continuations.values)
            observed.continuations.removeAll()
            return all
        }
    }
}
