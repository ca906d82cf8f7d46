import CamoMedia
import Logging
import Synchronization

/// One task that works through a ``WebhookQueue``: it sends what the queue says is due, one at a time, reports each
/// attempt's answer back, and sleeps (on the injected clock) until the queue's next deadline or a new item. What an
/// attempt is (a signed JSON POST for the event webhook, a file PUT for a push transport) is the `send` closure's.
///
/// ``enqueue(_:id:)`` never blocks. ``stop()`` cancels the attempt in flight, drops what waits (counted) and returns
/// once the task has ended.
final class DeliveryLoop: Sendable {
    private struct State {
        var queue: WebhookQueue
        var stopped = false
        /// Items queued after ``stop()``: dropped at once.
        var droppedAfterStop = 0
    }

    /// What the task shares with the callers.
    private final class Shared: Sendable {
        let state: Mutex<State>
        let wakeup = WebhookWakeup()

        init(queue: WebhookQueue) {
            state = Mutex(State(queue: queue))
        }
    }

    private let shared: Shared
    private let clock: any MonotonicClock
    private let task: Task<Void, Never>

    /// Starts the task; `label` names the receiver in log lines (`webhook`, `push transport 2`).
    init(
        queue: WebhookQueue, clock: any MonotonicClock, label: String, logger: Logger,
        send: @escaping @Sendable (WebhookQueue.Delivery) async -> WebhookQueue.AttemptResult
    ) {
        let shared = Shared(queue: queue)
        self.shared = shared
        self.clock = clock
        // The task holds the parts, not self, so a loop nobody stops still ends in deinit.
        task = Task { await Self.run(shared: shared, clock: clock, label: label, logger: logger, send: send) }
    }

    deinit {
        task.cancel()
    }

    /// Queues `body` as item `id`; returns the id of the item dropped to make room, or `id` itself after ``stop()``.
    @discardableResult
    func enqueue(_ body: [UInt8], id: String) -> String? {
        let dropped = shared.state.withLock { state -> String? in
            guard !state.stopped else {
                state.droppedAfterStop += 1
                return id
            }
            return state.queue.enqueue(body: body, id: id, now: clock.now.nanoseconds)?.id
        }
        shared.wakeup.signal()
        return dropped
    }

    /// The counters since the start, with how many items wait now.
    var stats: WebhookStats {
        shared.state.withLock { state in
            var stats = state.queue.stats
            stats.dropped += state.droppedAfterStop
            return stats
        }
    }

    /// Stops: cancels the attempt in flight, drops what waits (counted) and returns the number dropped (nil when it
    /// had stopped already) once the task has ended.
    @discardableResult
    func stop() async -> Int? {
        let dropped = shared.state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.queue.dropAll()
        }
        task.cancel()
        shared.wakeup.signal()
        await task.value
        return dropped
    }

    private enum Step {
        case send(WebhookQueue.Delivery)
        case sleep(until: UInt64)
        case idle
        case exit
    }

    private static func run(
        shared: Shared, clock: any MonotonicClock, label: String, logger: Logger,
        send: @Sendable (WebhookQueue.Delivery) async -> WebhookQueue.AttemptResult
    ) async {
        while !Task.isCancelled {
            let step = shared.state.withLock { state -> Step in
                if state.stopped { return .exit }
                if let delivery = state.queue.next(now: clock.now.nanoseconds) { return .send(delivery) }
                if let deadline = state.queue.nextDeadline { return .sleep(until: deadline) }
                return .idle
            }
            switch step {
            case .exit:
                return
            case .idle:
                await shared.wakeup.wait()
            case .sleep(let deadline):
                let timer = Task {
                    do {
                        try await clock.sleep(until: deadline)
                        shared.wakeup.signal()
                    } catch {
                        return  // cancelled: the loop was woken otherwise
                    }
                }
                await shared.wakeup.wait()
                timer.cancel()
            case .send(let delivery):
                logger.debug("\(label): sending", metadata: ["id": "\(delivery.id)", "attempt": "\(delivery.attempt)"])
                let result = await send(delivery)
                let outcome = shared.state.withLock { state in
                    state.queue.finished(id: delivery.id, result: result, now: clock.now.nanoseconds)
                }
                log(outcome, delivery: delivery, now: clock.now.nanoseconds, label: label, logger: logger)
            }
        }
    }

    private static func log(_ outcome: WebhookQueue.Outcome, delivery: WebhookQueue.Delivery, now: UInt64, label: String, logger: Logger) {
        let id = "\(delivery.id)"
        switch outcome {
        case .delivered(let attempts):
            logger.debug("\(label): delivered", metadata: ["id": "\(id)", "attempts": "\(attempts)"])
        case .retry(let at, let reason):
            let milliseconds = (at - min(at, now)) / 1_000_000
            logger.debug(
                "\(label): attempt failed, will retry",
                metadata: ["id": "\(id)", "attempt": "\(delivery.attempt)", "retry-in-ms": "\(milliseconds)", "reason": "\(reason)"])
        case .failed(let reason):
            logger.info("\(label): gave up", metadata: ["id": "\(id)", "reason": "\(reason)"])
        case .dropped(let reason):
            logger.debug("\(label): dropped an item the full queue had no room to retry", metadata: ["id": "\(id)", "reason": "\(reason)"])
        case .notInFlight:
            break
        }
    }
}
