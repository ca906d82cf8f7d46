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

    /// Where events go.
    public let url: WebhookURL
    private let loop: DeliveryLoop
    private let logger: Logger

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
        self.url = parsed
        self.logger = logger
        let unixTime = options.unixTime
        loop = DeliveryLoop(
            queue: WebhookQueue(policy: options.queue, jitter: options.jitter), clock: clock, label: "webhook \(parsed)", logger: logger
        ) { delivery in
            do throws(WebhookError) {
                let headers = signature.headers(body: delivery.body, id: delivery.id, timestamp: unixTime())
                let response = try await poster.post(body: delivery.body, headers: headers)
                return .status(response.status, retryAfter: response.retryAfter)
            } catch {
                return .error(error)
            }
        }
    }

    /// Queues `body` (JSON) as event `id` and returns at once; the oldest waiting event is dropped (and counted)
    /// when the queue is full. After ``stop()`` the event is dropped and counted.
    public func post(_ body: [UInt8], id: String) {
        if let dropped = loop.enqueue(body, id: id) {
            logger.debug("webhook: dropped an undelivered event", metadata: ["id": "\(dropped)", "url": "\(url)"])
        }
    }

    /// The counters since the start, with how many events wait now.
    public var stats: WebhookStats { loop.stats }

    /// Stops: cancels the request in flight (closing its connection), drops the events still waiting (counted as
    /// dropped), and returns once the delivery task has ended. Later ``post(_:id:)`` calls are dropped.
    public func stop() async {
        if let dropped = await loop.stop(), dropped > 0 {
            logger.info("webhook stopped with undelivered events", metadata: ["dropped": "\(dropped)", "url": "\(url)"])
        }
    }
}
