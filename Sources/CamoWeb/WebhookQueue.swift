import NIOCore

/// The webhook's deliveries as a plain state machine: no I/O, no clock of its own; times are nanoseconds of the
/// caller's monotonic clock.
///
/// A bounded FIFO: at most ``Policy/capacity`` events wait (the oldest is dropped, and counted, to make room) and one
/// is in flight. Events go out in order; an event that must be retried goes back to the head and waits its backoff,
/// and the ones behind it wait too (the receiver is failing for them as well).
///
/// The driver loops: send what ``next(now:)`` returns, report it with ``finished(id:result:now:)``, and when
/// ``next(now:)`` returns nil, sleep until ``nextDeadline`` (or until ``enqueue(body:id:now:)`` adds one to an
/// empty queue).
///
/// An attempt's answer decides:
/// - 2xx: delivered.
/// - 408, 429, 5xx, any ``WebhookError`` (timeouts, refused or broken connections, TLS): retried after
///   ``Policy/baseDelay`` doubled for each earlier attempt (1 s, 2 s, 4 s …), passed through the jitter function
///   and capped at ``Policy/maxDelay``; a `Retry-After` in seconds replaces that delay (capped the same way). The
///   attempt numbered ``Policy/maxAttempts`` is the last: when it fails the event is given up and counted failed.
/// - Any other status (4xx, a 3xx redirect, which is not followed): a permanent failure, counted failed, no retry.
public struct WebhookQueue: Sendable {
    /// How many events wait, how often and how long apart they are tried.
    public struct Policy: Sendable, Equatable {
        /// Events that may wait besides the one in flight (at least 1); default 256.
        public var capacity: Int
        /// Attempts per event before it is given up (at least 1); default 8.
        public var maxAttempts: Int
        /// The wait after the first failed attempt, doubled after each further one; default 1 s.
        public var baseDelay: Duration
        /// The longest wait between attempts, also the cap on a `Retry-After`; default 60 s.
        public var maxDelay: Duration

        /// A policy; the defaults are the agent's.
        public init(
            capacity: Int = 256, maxAttempts: Int = 8, baseDelay: Duration = .seconds(1),
            maxDelay: Duration = .seconds(60)
        ) {
            self.capacity = max(1, capacity)
            self.maxAttempts = max(1, maxAttempts)
            self.baseDelay = max(.zero, baseDelay)
            self.maxDelay = max(.zero, maxDelay)
        }
    }

    /// How the queue's sentences name what it delivers to.
    public struct Labels: Sendable, Equatable {
        /// The receiver, starting a sentence: `The webhook receiver`.
        public var receiver: String
        /// The setting that names it: `webhookURL`.
        public var setting: String
        /// One item: `webhook event`.
        public var item: String

        /// Labels from their parts.
        public init(receiver: String, setting: String, item: String) {
            self.receiver = receiver
            self.setting = setting
            self.item = item
        }

        /// The event webhook's.
        public static let webhook = Labels(receiver: "The webhook receiver", setting: "webhookURL", item: "webhook event")
    }

    /// One event to send now.
    public struct Delivery: Sendable, Equatable {
        /// The event's id (the `X-Camo-Event-Id` header; the same on every attempt).
        public let id: String
        /// The JSON body.
        public let body: [UInt8]
        /// Which attempt this is, from 1.
        public let attempt: Int
    }

    /// What one attempt came to.
    public enum AttemptResult: Sendable, Equatable {
        /// The receiver answered with this status, and a `Retry-After` in seconds if it sent one.
        case status(Int, retryAfter: Duration?)
        /// No answer: a timeout, a refused or broken connection, a TLS failure.
        case error(WebhookError)
    }

    /// What ``finished(id:result:now:)`` did with the event.
    public enum Outcome: Sendable, Equatable {
        /// The receiver took it (2xx) on attempt `attempts`.
        case delivered(attempts: Int)
        /// It will be tried again at `at` (nanoseconds); `reason` is the failed attempt's sentence.
        case retry(at: UInt64, reason: String)
        /// Given up and counted failed: the last allowed attempt failed, or the answer was a permanent 4xx.
        case failed(reason: String)
        /// It was to be retried, but the queue had filled meanwhile and it was the oldest: dropped and counted.
        case dropped(reason: String)
        /// No event with that id is in flight (it was dropped by ``dropAll()``): nothing changed.
        case notInFlight
    }

    private struct Entry {
        var id: String
        var body: [UInt8]
        var attemptsMade: Int
        var notBefore: UInt64
    }

    /// The policy it was made with.
    public let policy: Policy
    /// How its sentences name the receiver.
    public let labels: Labels
    private let jitter: @Sendable (Duration) -> Duration
    private var waiting = CircularBuffer<Entry>()
    private var inFlight: Entry?
    private var counters = WebhookStats()

    /// An empty queue with `policy`; `jitter` turns each computed backoff into the one used (tests pass
    /// `{ $0 }`; the default spreads it over 80–120 %).
    public init(
        policy: Policy = Policy(), labels: Labels = .webhook,
        jitter: @escaping @Sendable (Duration) -> Duration = WebhookQueue.randomJitter
    ) {
        self.policy = policy
        self.labels = labels
        self.jitter = jitter
    }

    /// The default jitter: the delay times a random factor from 0.8 to 1.2, so many agents that failed together do
    /// not retry together.
    public static let randomJitter: @Sendable (Duration) -> Duration = { delay in
        delay * Double.random(in: 0.8...1.2)
    }

    /// The counters, with how many events wait now and whether one is in flight.
    public var stats: WebhookStats {
        var stats = counters
        stats.pending = waiting.count
        stats.inFlight = inFlight != nil
        return stats
    }

    /// When ``next(now:)`` will next have something to send: nil while one is in flight (wait for its
    /// ``finished(id:result:now:)``) or when nothing waits.
    public var nextDeadline: UInt64? {
        inFlight == nil ? waiting.first?.notBefore : nil
    }

    /// Adds an event at the back, to be sent from `now`. When ``Policy/capacity`` events already wait, the oldest
    /// waiting one is dropped, counted, and returned.
    @discardableResult
    public mutating func enqueue(body: [UInt8], id: String, now: UInt64) -> Delivery? {
        var dropped: Entry?
        if waiting.count >= policy.capacity {
            dropped = waiting.removeFirst()
            counters.dropped += 1
        }
        waiting.append(Entry(id: id, body: body, attemptsMade: 0, notBefore: now))
        counters.enqueued += 1
        return dropped.map { Delivery(id: $0.id, body: $0.body, attempt: $0.attemptsMade) }
    }

    /// The event to send now, marked in flight; nil while another is in flight, when nothing waits, or when the head
    /// is still waiting out its backoff.
    public mutating func next(now: UInt64) -> Delivery? {
        guard inFlight == nil, let head = waiting.first, head.notBefore <= now else { return nil }
        var entry = waiting.removeFirst()
        entry.attemptsMade += 1
        inFlight = entry
        return Delivery(id: entry.id, body: entry.body, attempt: entry.attemptsMade)
    }

    /// Reports how the in-flight event `id` went at `now` and decides what comes next (see the type's rules).
    public mutating func finished(id: String, result: AttemptResult, now: UInt64) -> Outcome {
        guard let entry = inFlight, entry.id == id else { return .notInFlight }
        inFlight = nil
        let retryAfter: Duration?
        let reason: String
        switch result {
        case .status(let status, _) where (200...299).contains(status):
            counters.delivered += 1
            return .delivered(attempts: entry.attemptsMade)
        case .status(let status, let after) where Self.isRetryable(status: status):
            retryAfter = after
            reason = "\(labels.receiver) answered HTTP \(status) (\(Self.kind(status))); it will be retried"
        case .status(let status, _):
            let text =
                (300...399).contains(status)
                ? "\(labels.receiver) answered HTTP \(status) (a redirect, which is not followed); set \(labels.setting) "
                    + "to the address it redirects to"
                : "\(labels.receiver) answered HTTP \(status), which is not retried; check \(labels.setting) and what the "
                    + "receiver expects"
            counters.failed += 1
            counters.lastError = text
            return .failed(reason: text)
        case .error(.sourceGone(let text)):
            counters.failed += 1
            counters.lastError = text
            return .failed(reason: text)
        case .error(let error):
            retryAfter = nil
            reason = error.description
        }
        guard entry.attemptsMade < policy.maxAttempts else {
            let text = "Gave up on \(labels.item) \(entry.id) after \(entry.attemptsMade) attempts; the last: \(reason)"
            counters.failed += 1
            counters.lastError = text
            return .failed(reason: text)
        }
        counters.lastError = reason
        let delay = retryAfter.map { min($0, policy.maxDelay) } ?? backoff(afterAttempt: entry.attemptsMade)
        var retried = entry
        retried.notBefore = now &+ Self.nanoseconds(delay)
        waiting.prepend(retried)
        if waiting.count > policy.capacity {
            waiting.removeFirst()
            counters.dropped += 1
            return .dropped(reason: reason)
        }
        counters.retried += 1
        return .retry(at: retried.notBefore, reason: reason)
    }

    /// Drops every event, waiting or in flight (a later ``finished(id:result:now:)`` for it changes nothing);
    /// counts them dropped and returns how many there were.
    @discardableResult
    public mutating func dropAll() -> Int {
        let count = waiting.count + (inFlight == nil ? 0 : 1)
        waiting.removeAll()
        inFlight = nil
        counters.dropped += count
        return count
    }

    /// The wait after attempt `attempt` (from 1) failed: base × 2^(attempt − 1), through the jitter, capped.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        let doublings = min(max(0, attempt - 1), 40)
        let raw = policy.baseDelay * (1 << doublings)
        return min(max(.zero, jitter(min(raw, policy.maxDelay))), policy.maxDelay)
    }

    static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || !(200...499).contains(status)
    }

    private static func kind(_ status: Int) -> String {
        switch status {
        case 408: "request timeout"
        case 429: "too many requests"
        case 500...599: "a server error"
        default: "not a final answer"
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
    }
}
