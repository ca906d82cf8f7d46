import Synchronization

/// Wakes the webhook's delivery loop: ``signal()`` from anywhere (a new event, a backoff timer) resumes the one
/// ``wait()``, or the next one when nobody waits yet. Spurious wake-ups are fine: the loop looks at its queue again.
final class WebhookWakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Returns after a ``signal()`` (one that came before the call counts) or when the task is cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked under the lock: a cancellation either is seen here or finds the stored waiter.
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    /// Wakes the waiter, or lets the next ``wait()`` return at once.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
