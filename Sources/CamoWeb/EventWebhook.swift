import CamoMedia
import Foundation
import Logging
import NIOCore
import Synchronization

/// Camera events to a home-automation system: each event is POSTed as JSON to the configured URL, signed with
/// HMAC-SHA256 (see ``WebhookSignature`` for the scheme a receiver checks), and retried with backoff from a bounded
/// queue (see ``WebhookQueue`` for the rules).
///
/// ``post(_:id:)`` never blocks: it puts the event in the queue and returns, so capture and streaming keep their
/// pace whatever the receiver does. One task sends, one request at a time, with the timeouts of
/// ``WebhookPoster/Options``; backoff waits are timed on the injected clock. Failed attempts are logged at debug,
/// an event given up on at info. Call ``stop()`` at shutdown.
///
/// ```swift
/// let webhook = try EventWebhook(
///     url: "https://homeassistant.local:8123/api/webhook/camo", secret: secret, logger: logger)
/// webhook.post(Array(#"{"event":"motion"}"#.utf8), id: UUID().uuidString)
/// ```
public final class EventWebhook: Sendable {
    /// The queue's policy, the request timeouts, and what tests replace.
    public struct Options: Sendable {
        /// Capacity, attempts and backoff (defaults: 256 events, 8 attempts, 1 s doubling up to 60 s).
        public var queue: WebhookQueue.Policy
        /// Connect and request timeouts (5 s each) and an extra CA certificate to trust.
        public var transport: WebhookPoster.Options
        /// Turns each computed backoff into the one used (default: 80–120 % at random; tests pass `{ $0 }`).
        public var jitter: @Sendable (Duration) -> Duration
        /// Wall-clock unix seconds for the signature's `t` (default: the system's time).
        public var unixTime: @Sendable () -> Int64
        /// Where connections run (default: NIO's shared singleton group).
        public var eventLoopGroup: (any EventLoopGroup)?

        /// Options; the defaults are the agent's.
        public init(
            queue: WebhookQueue.Policy = WebhookQueue.Policy(),
            transport: WebhookPoster.Options = WebhookPoster.Options(),
            jitter: @escaping @Sendable (Duration) -> Duration = WebhookQueue.randomJitter,
            unixTime: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
            eventLoopGroup: (any EventLoopGroup)? = nil
        ) {
            self.queue = queue
            self.transport = transport
            self.jitter = jitter
            self.unixTime = unixTime
            self.eventLoopGroup = eventLoopGroup
        }
    }

    private struct State {
        var queue: WebhookQueue
        var stopped = false
        /// Events posted after ``stop()``: dropped at once.
        var droppedAfterStop = 0
    }

    /// What the delivery task shares with the callers.
    private final class Shared: Sendable {
        let state: Mutex<State>
        let wakeup = WebhookWakeup()

        init(queue: WebhookQueue) {
            state = Mutex(State(queue: queue))
        }
    }

    /// Where events go.
    public let url: WebhookURL
    private let shared: Shared
    private let clock: any MonotonicClock
    private let logger: Logger
    private let task: Task<Void, Never>

    /// Starts a webhook posting to `url`, signing with `secret`, timing backoff on `clock`, logging to `logger`.
    ///
    /// Throws ``WebhookError`` with a sentence when the URL is not a usable http(s) URL, the secret is empty, or the
    /// extra CA certificate cannot be read. Nothing is sent until ``post(_:id:)``.
    public init(
        url: String, secret: String, clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger,
        options: Options = Options()
    ) throws(WebhookError) {
        let parsed = try WebhookURL(url)
        let signature = try WebhookSignature(secret: secret)
        let poster = try WebhookPoster(url: parsed, options: options.transport, eventLoopGroup: options.eventLoopGroup)
        let shared = Shared(queue: WebhookQueue(policy: options.queue, jitter: options.jitter))
        self.url = parsed
        self.shared = shared
        self.clock = clock
        self.logger = logger
        let unixTime = options.unixTime
        // The task holds the parts, not self, so a webhook nobody stops still ends in deinit.
        task = Task {
            await EventWebhook.deliver(
                shared: shared, poster: poster, signature: signature, clock: clock, unixTime: unixTime, logger: logger)
        }
    }

    deinit {
        task.cancel()
    }

    /// Queues `body` (JSON) as event `id` and returns at once; the oldest waiting event is dropped (and counted)
    /// when the queue is full. After ``stop()`` the event is dropped and counted.
    public func post(_ body: [UInt8], id: String) {
        let dropped = shared.state.withLock { state -> String? in
            guard !state.stopped else {
                state.droppedAfterStop += 1
                return id
            }
            return state.queue.enqueue(body: body, id: id, now: clock.now.nanoseconds)?.id
        }
        shared.wakeup.signal()
        if let dropped {
            logger.debug("webhook: dropped an undelivered event", metadata: ["id": "\(dropped)", "url": "\(url)"])
        }
    }

    /// The counters since the start, with how many events wait now.
    public var stats: WebhookStats {
        shared.state.withLock { state in
            var stats = state.queue.stats
            stats.dropped += state.droppedAfterStop
            return stats
        }
    }

    /// Stops: cancels the request in flight (closing its connection), drops the events still waiting (counted as
    /// dropped), and returns once the delivery task has ended. Later ``post(_:id:)`` calls are dropped.
    public func stop() async {
        let dropped = shared.state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.queue.dropAll()
        }
        task.cancel()
        shared.wakeup.signal()
        await task.value
        if let dropped, dropped > 0 {
            logger.info("webhook stopped with undelivered events", metadata: ["dropped": "\(dropped)", "url": "\(url)"])
        }
    }

    private enum Step {
        case send(WebhookQueue.Delivery)
        case sleep(until: UInt64)
        case idle
        case exit
    }

    /// The delivery loop: send what the queue says, report it, sleep until the queue's next deadline or a new event.
    private static func deliver(
        shared: Shared, poster: WebhookPoster, signature: WebhookSignature, clock: any MonotonicClock,
        unixTime: @escaping @Sendable () -> Int64, logger: Logger
    ) async {
        let url = poster.url
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
                logger.debug(
                    "webhook: sending an event",
                    metadata: ["id": "\(delivery.id)", "attempt": "\(delivery.attempt)", "url": "\(url)"])
                let result: WebhookQueue.AttemptResult
                do {
                    let headers = signature.headers(body: delivery.body, id: delivery.id, timestamp: unixTime())
                    let response = try await poster.post(body: delivery.body, headers: headers)
                    result = .status(response.status, retryAfter: response.retryAfter)
                } catch {
                    result = .error(error)
                }
                let outcome = shared.state.withLock { state in
                    state.queue.finished(id: delivery.id, result: result, now: clock.now.nanoseconds)
                }
                log(outcome, delivery: delivery, now: clock.now.nanoseconds, url: url, logger: logger)
            }
        }
    }

    private static func log(
        _ outcome: WebhookQueue.Outcome, delivery: WebhookQueue.Delivery, now: UInt64, url: WebhookURL, logger: Logger
    ) {
        let id = "\(delivery.id)"
        switch outcome {
        case .delivered(let attempts):
            logger.debug("webhook: event delivered", metadata: ["id": "\(id)", "attempts": "\(attempts)"])
        case .retry(let at, let reason):
            let milliseconds = (at - min(at, now)) / 1_000_000
            logger.debug(
                "webhook: attempt failed, will retry",
                metadata: [
                    "id": "\(id)", "attempt": "\(delivery.attempt)", "retry-in-ms": "\(milliseconds)",
                    "reason": "\(reason)",
                ])
        case .failed(let reason):
            logger.info(
                "webhook: gave up on an event", metadata: ["id": "\(id)", "url": "\(url)", "reason": "\(reason)"])
        case .dropped(let reason):
            logger.debug(
                "webhook: dropped an event the full queue had no room to retry",
                metadata: ["id": "\(id)", "reason": "\(reason)"])
        case .notInFlight:
            break
        }
    }
}
