import Synchronization

/// A one-shot event an async caller waits for with a bound: a promise settling in webrtcbin, ICE gathering
/// completing. `fire()` may come from any thread (GStreamer's), before or after the wait starts.
final class WebRTCSignal: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Bool, Never>)
        case fired
        case expired
    }

    private let state = Mutex(State.idle)

    /// Marks the event as happened; wakes the waiter.
    func fire() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            switch state {
            case .idle:
                state = .fired
                return nil
            case .waiting(let continuation):
                state = .fired
                return continuation
            case .fired, .expired:
                return nil
            }
        }
        waiter?.resume(returning: true)
    }

    /// Whether it has fired.
    var hasFired: Bool { state.withLock { if case .fired = $0 { true } else { false } } }

    /// Waits until it fires (true) or `timeout` passes (false). One waiter at a time.
    func wait(timeout: Duration) async -> Bool {
        let timer = Task { [self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            expire()
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let now: Bool? = state.withLock { state in
                switch state {
                case .fired: return true
                case .expired: return false
                case .idle, .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    private func expire() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            switch state {
            case .idle:
                state = .expired
                return nil
            case .waiting(let continuation):
                state = .expired
                return continuation
            case .fired, .expired:
                return nil
            }
        }
        waiter?.resume(returning: false)
    }
}
