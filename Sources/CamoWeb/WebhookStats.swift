/// The event webhook's counters since it started, as ``WebhookQueue`` keeps them and ``EventWebhook/stats`` reports.
public struct WebhookStats: Sendable, Equatable, Codable {
    /// Events accepted into the queue.
    public var enqueued = 0
    /// Events the receiver answered with 2xx.
    public var delivered = 0
    /// Attempts that failed and were scheduled again (5xx, 408, 429, timeouts, connection errors).
    public var retried = 0
    /// Events given up on: a permanent 4xx, or the last allowed attempt failed.
    public var failed = 0
    /// Events dropped unsent: the oldest when the queue was full, and those left when the webhook stopped.
    public var dropped = 0
    /// The last failed attempt's sentence (a status or a transport error), if any attempt failed.
    public var lastError: String?
    /// Events waiting now (not counting the one in flight).
    public var pending = 0
    /// Whether a request is in flight now.
    public var inFlight = false

    /// No events yet.
    public init() {}
}
