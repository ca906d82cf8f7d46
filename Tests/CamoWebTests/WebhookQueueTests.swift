import Testing

@testable import CamoWeb

/// The delivery state machine with explicit times: no sockets, no sleeps. Times are nanoseconds.
@Suite("Webhook queue")
struct WebhookQueueTests {
    private static let second: UInt64 = 1_000_000_000
    private static let millisecond: UInt64 = 1_000_000
    private let second = Self.second
    private let body = Array(#"{"event":"motion"}"#.utf8)

    private func queue(
        capacity: Int = 256, maxAttempts: Int = 8, base: Duration = .seconds(1), max: Duration = .seconds(60),
        jitter: @escaping @Sendable (Duration) -> Duration = { $0 }
    ) -> WebhookQueue {
        WebhookQueue(
            policy: .init(capacity: capacity, maxAttempts: maxAttempts, baseDelay: base, maxDelay: max), jitter: jitter)
    }

    @Test func defaultPolicyIsTheAgents() {
        let policy = WebhookQueue.Policy()
        #expect(policy.capacity == 256)
        #expect(policy.maxAttempts == 8)
        #expect(policy.baseDelay == .seconds(1))
        #expect(policy.maxDelay == .seconds(60))
        let clamped = WebhookQueue.Policy(capacity: 0, maxAttempts: -3, baseDelay: .seconds(-1), maxDelay: .seconds(-1))
        #expect(clamped.capacity == 1)
        #expect(clamped.maxAttempts == 1)
        #expect(clamped.baseDelay == .zero)
        #expect(clamped.maxDelay == .zero)
    }

    @Test func emptyQueueHasNothingToSendAndNoDeadline() {
        var queue = queue()
        #expect(queue.next(now: 0) == nil)
        #expect(queue.nextDeadline == nil)
        #expect(queue.stats == WebhookStats())
    }

    @Test func twoHundredIsDeliveredOnce() {
        var queue = queue()
        #expect(queue.enqueue(body: body, id: "e1", now: 5 * second) == nil)
        #expect(queue.nextDeadline == 5 * second)
        #expect(queue.stats.pending == 1)
        let delivery = queue.next(now: 5 * second)
        #expect(delivery == WebhookQueue.Delivery(id: "e1", body: body, attempt: 1))
        #expect(queue.stats.inFlight)
        #expect(queue.stats.pending == 0)
        #expect(queue.nextDeadline == nil)
        #expect(queue.next(now: 5 * second) == nil)
        #expect(queue.finished(id: "e1", result: .status(200, retryAfter: nil), now: 6 * second) == .delivered(attempts: 1))
        var expected = WebhookStats()
        expected.enqueued = 1
        expected.delivered = 1
        #expect(queue.stats == expected)
        #expect(queue.next(now: 100 * second) == nil)
        #expect(queue.nextDeadline == nil)
    }

    @Test(arguments: [200, 201, 202, 204, 299])
    func everyTwoHundredIsDelivered(status: Int) {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        _ = queue.next(now: 0)
        #expect(queue.finished(id: "e", result: .status(status, retryAfter: nil), now: 0) == .delivered(attempts: 1))
    }

    @Test func atMostOneInFlightAndFirstInFirstOut() {
        var queue = queue()
        for index in 0..<3 { queue.enqueue(body: body, id: "e\(index)", now: 0) }
        #expect(queue.next(now: 0)?.id == "e0")
        #expect(queue.next(now: 0) == nil)
        #expect(queue.finished(id: "e0", result: .status(204, retryAfter: nil), now: 0) == .delivered(attempts: 1))
        #expect(queue.next(now: 0)?.id == "e1")
        _ = queue.finished(id: "e1", result: .status(200, retryAfter: nil), now: 0)
        #expect(queue.next(now: 0)?.id == "e2")
    }

    @Test func fiveHundredsBackOffExponentiallyCappedThenGiveUpAfterEightAttempts() {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        var now: UInt64 = 0
        // Waits after attempts 1…7: 1, 2, 4, 8, 16, 32 s, then 64 s capped at 60 s.
        let waits: [UInt64] = [1, 2, 4, 8, 16, 32, 60]
        for (index, wait) in waits.enumerated() {
            let delivery = queue.next(now: now)
            #expect(delivery?.attempt == index + 1)
            now += 100 * Self.millisecond  // the attempt took 100 ms
            let outcome = queue.finished(id: "e", result: .status(500, retryAfter: nil), now: now)
            guard case .retry(let at, let reason) = outcome else {
                Issue.record("attempt \(index + 1): expected a retry, got \(outcome)")
                return
            }
            #expect(at == now + wait * second)
            #expect(reason.contains("HTTP 500"))
            #expect(queue.nextDeadline == at)
            #expect(queue.next(now: at - 1) == nil)
            now = at
        }
        #expect(queue.next(now: now)?.attempt == 8)
        let outcome = queue.finished(id: "e", result: .status(503, retryAfter: nil), now: now)
        guard case .failed(let reason) = outcome else {
            Issue.record("expected the eighth failure to give up, got \(outcome)")
            return
        }
        #expect(reason.contains("Gave up on webhook event e after 8 attempts"))
        #expect(reason.contains("HTTP 503"))
        let stats = queue.stats
        #expect(stats.retried == 7)
        #expect(stats.failed == 1)
        #expect(stats.delivered == 0)
        #expect(stats.lastError == reason)
        #expect(queue.nextDeadline == nil)
        #expect(queue.next(now: now + 3_600 * second) == nil)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 599])
    func retryableStatusesAreRetried(status: Int) {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        _ = queue.next(now: 0)
        let outcome = queue.finished(id: "e", result: .status(status, retryAfter: nil), now: 0)
        #expect(outcome == .retry(at: second, reason: queue.stats.lastError ?? ""))
        #expect(queue.stats.retried == 1)
        #expect(queue.stats.lastError?.contains("HTTP \(status)") == true)
        #expect(queue.next(now: second)?.attempt == 2)
    }

    @Test(arguments: [400, 401, 403, 404, 405, 410, 413, 422])
    func otherFourHundredsFailAtOnceWithTheStatus(status: Int) {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        queue.enqueue(body: body, id: "next", now: 0)
        _ = queue.next(now: 0)
        let outcome = queue.finished(id: "e", result: .status(status, retryAfter: .seconds(30)), now: 0)
        guard case .failed(let reason) = outcome else {
            Issue.record("expected a permanent failure, got \(outcome)")
            return
        }
        #expect(reason.contains("HTTP \(status)"))
        #expect(reason.contains("not retried"))
        #expect(queue.stats.failed == 1)
        #expect(queue.stats.retried == 0)
        #expect(queue.stats.lastError == reason)
        // The next event goes at once; the failed one never comes back.
        #expect(queue.next(now: 0)?.id == "next")
    }

    @Test func aRedirectIsAPermanentFailureThatSaysSo() {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        _ = queue.next(now: 0)
        let outcome = queue.finished(id: "e", result: .status(301, retryAfter: nil), now: 0)
        guard case .failed(let reason) = outcome else {
            Issue.record("expected a permanent failure, got \(outcome)")
            return
        }
        #expect(reason.contains("redirect"))
        #expect(queue.stats.failed == 1)
    }

    @Test func transportErrorsAreRetriedWithTheirSentence() {
        let errors: [WebhookError] = [
            .requestTimeout(url: "http://127.0.0.1:9/", seconds: 5),
            .connectTimeout(url: "http://127.0.0.1:9/", seconds: 5),
            .connectionFailed(url: "http://127.0.0.1:9/", reason: "connection refused"),
            .tls(url: "https://x/", reason: "bad certificate"),
            .badResponse(url: "http://x/", reason: "closed"),
        ]
        var queue = queue(maxAttempts: 10)
        queue.enqueue(body: body, id: "e", now: 0)
        var now: UInt64 = 0
        for (index, error) in errors.enumerated() {
            #expect(queue.next(now: now)?.attempt == index + 1)
            let outcome = queue.finished(id: "e", result: .error(error), now: now)
            guard case .retry(let at, let reason) = outcome else {
                Issue.record("expected a retry for \(error), got \(outcome)")
                return
            }
            #expect(reason == error.description)
            #expect(queue.stats.lastError == error.description)
            now = at
        }
        #expect(queue.stats.retried == errors.count)
    }

    @Test func retryAfterReplacesTheBackoffAndIsCapped() {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        _ = queue.next(now: 0)
        #expect(queue.finished(id: "e", result: .status(429, retryAfter: .seconds(10)), now: 0).retryTime == 10 * second)
        _ = queue.next(now: 10 * second)
        let capped = queue.finished(id: "e", result: .status(503, retryAfter: .seconds(3_600)), now: 10 * second)
        #expect(capped.retryTime == 70 * second)
        _ = queue.next(now: 70 * second)
        #expect(queue.finished(id: "e", result: .status(503, retryAfter: .zero), now: 70 * second).retryTime == 70 * second)
        // Without Retry-After the exponential backoff goes on from the attempt count (attempt 4: 8 s).
        _ = queue.next(now: 70 * second)
        #expect(queue.finished(id: "e", result: .status(503, retryAfter: nil), now: 70 * second).retryTime == 78 * second)
    }

    @Test func jitterIsAppliedAndTheResultCapped() {
        var doubled = queue(jitter: { $0 * 2 })
        #expect(doubled.backoff(afterAttempt: 1) == .seconds(2))
        #expect(doubled.backoff(afterAttempt: 5) == .seconds(32))
        #expect(doubled.backoff(afterAttempt: 6) == .seconds(60))
        let negative = queue(jitter: { _ in .seconds(-5) })
        #expect(negative.backoff(afterAttempt: 3) == .zero)
        doubled.enqueue(body: body, id: "e", now: 0)
        _ = doubled.next(now: 0)
        #expect(doubled.finished(id: "e", result: .status(500, retryAfter: nil), now: 0).retryTime == 2 * second)
    }

    @Test func defaultJitterStaysWithinTwentyPercent() {
        let queue = WebhookQueue()
        for attempt in 1...6 {
            let nominal = Duration.seconds(1 << (attempt - 1))
            let wait = queue.backoff(afterAttempt: attempt)
            #expect(wait >= nominal * 0.8 && wait <= nominal * 1.2)
        }
        #expect(queue.backoff(afterAttempt: 30) <= .seconds(60))
    }

    @Test func backoffTable() {
        let queue = queue(base: .milliseconds(10), max: .milliseconds(200))
        let table = (1...8).map { queue.backoff(afterAttempt: $0) }
        #expect(table == [10, 20, 40, 80, 160, 200, 200, 200].map { Duration.milliseconds($0) })
        #expect(queue.backoff(afterAttempt: 10_000) == .milliseconds(200))
    }

    @Test func aRetryingHeadHoldsBackTheEventsBehindIt() {
        var queue = queue()
        queue.enqueue(body: body, id: "a", now: 0)
        queue.enqueue(body: body, id: "b", now: 0)
        _ = queue.next(now: 0)
        _ = queue.finished(id: "a", result: .status(500, retryAfter: nil), now: 0)
        #expect(queue.next(now: second - 1) == nil)
        #expect(queue.nextDeadline == second)
        #expect(queue.next(now: second) == WebhookQueue.Delivery(id: "a", body: body, attempt: 2))
        _ = queue.finished(id: "a", result: .status(200, retryAfter: nil), now: second)
        #expect(queue.next(now: second) == WebhookQueue.Delivery(id: "b", body: body, attempt: 1))
    }

    @Test func whenFullTheOldestIsDroppedAndCounted() {
        var queue = queue(capacity: 3)
        for index in 0..<3 { #expect(queue.enqueue(body: body, id: "e\(index)", now: 0) == nil) }
        #expect(queue.enqueue(body: body, id: "e3", now: 0)?.id == "e0")
        #expect(queue.enqueue(body: body, id: "e4", now: 0)?.id == "e1")
        #expect(queue.stats.enqueued == 5)
        #expect(queue.stats.dropped == 2)
        #expect(queue.stats.pending == 3)
        #expect(queue.next(now: 0)?.id == "e2")
    }

    @Test func theInFlightEventIsNotDroppedButIsTheOldestWhenItComesBackToAFullQueue() {
        var queue = queue(capacity: 2)
        queue.enqueue(body: body, id: "a", now: 0)
        #expect(queue.next(now: 0)?.id == "a")
        queue.enqueue(body: body, id: "b", now: 0)
        queue.enqueue(body: body, id: "c", now: 0)
        // Two wait besides the one in flight: the queue is full, so d pushes out b (the oldest waiting).
        #expect(queue.enqueue(body: body, id: "d", now: 0)?.id == "b")
        #expect(queue.stats.pending == 2)
        #expect(queue.stats.inFlight)
        let outcome = queue.finished(id: "a", result: .status(500, retryAfter: nil), now: 0)
        guard case .dropped(let reason) = outcome else {
            Issue.record("expected a to be dropped on its way back, got \(outcome)")
            return
        }
        #expect(reason.contains("HTTP 500"))
        #expect(queue.stats.dropped == 2)
        #expect(queue.stats.retried == 0)
        #expect(queue.next(now: 0)?.id == "c")
    }

    @Test func aRetryComesBackToTheHeadWhenThereIsRoom() {
        var queue = queue(capacity: 2)
        queue.enqueue(body: body, id: "a", now: 0)
        _ = queue.next(now: 0)
        queue.enqueue(body: body, id: "b", now: 0)
        let outcome = queue.finished(id: "a", result: .status(500, retryAfter: nil), now: 0)
        #expect(outcome == .retry(at: second, reason: queue.stats.lastError ?? ""))
        #expect(queue.stats.pending == 2)
        #expect(queue.next(now: second)?.id == "a")
    }

    @Test func oneAttemptPolicyGivesUpOnTheFirstFailure() {
        var queue = queue(maxAttempts: 1)
        queue.enqueue(body: body, id: "e", now: 0)
        _ = queue.next(now: 0)
        let refused = WebhookError.connectionFailed(url: "http://x/", reason: "connection refused")
        let outcome = queue.finished(id: "e", result: .error(refused), now: 0)
        guard case .failed(let reason) = outcome else {
            Issue.record("expected a give-up, got \(outcome)")
            return
        }
        #expect(reason.contains("after 1 attempts"))
        #expect(reason.contains("connection refused"))
        #expect(queue.stats.failed == 1)
        #expect(queue.stats.retried == 0)
    }

    @Test func dropAllCountsWaitingAndInFlightAndIgnoresTheLateAnswer() {
        var queue = queue()
        for index in 0..<4 { queue.enqueue(body: body, id: "e\(index)", now: 0) }
        #expect(queue.next(now: 0)?.id == "e0")
        #expect(queue.dropAll() == 4)
        #expect(queue.finished(id: "e0", result: .error(.cancelled), now: 0) == .notInFlight)
        let stats = queue.stats
        #expect(stats.dropped == 4)
        #expect(stats.retried == 0)
        #expect(stats.failed == 0)
        #expect(stats.pending == 0)
        #expect(!stats.inFlight)
        #expect(stats.lastError == nil)
        #expect(queue.next(now: 0) == nil)
        #expect(queue.dropAll() == 0)
    }

    @Test func anAnswerForAnEventNotInFlightChangesNothing() {
        var queue = queue()
        queue.enqueue(body: body, id: "a", now: 0)
        #expect(queue.finished(id: "a", result: .status(200, retryAfter: nil), now: 0) == .notInFlight)
        _ = queue.next(now: 0)
        #expect(queue.finished(id: "b", result: .status(200, retryAfter: nil), now: 0) == .notInFlight)
        #expect(queue.stats.delivered == 0)
        #expect(queue.stats.inFlight)
    }

    @Test func anEventIsSentFromItsEnqueueTime() {
        var queue = queue()
        queue.enqueue(body: body, id: "later", now: 10 * second)
        #expect(queue.next(now: 9 * second) == nil)
        #expect(queue.nextDeadline == 10 * second)
        #expect(queue.next(now: 10 * second)?.id == "later")
    }

    @Test func aSuccessAfterRetriesCountsTheAttempts() {
        var queue = queue()
        queue.enqueue(body: body, id: "e", now: 0)
        var now: UInt64 = 0
        for _ in 0..<2 {
            _ = queue.next(now: now)
            now = queue.finished(id: "e", result: .status(500, retryAfter: nil), now: now).retryTime ?? now
        }
        _ = queue.next(now: now)
        #expect(queue.finished(id: "e", result: .status(200, retryAfter: nil), now: now) == .delivered(attempts: 3))
        #expect(queue.stats.retried == 2)
        #expect(queue.stats.delivered == 1)
        #expect(queue.stats.lastError?.contains("HTTP 500") == true)
    }
}

extension WebhookQueue.Outcome {
    /// The retry time of a ``retry(at:reason:)``, else nil.
    fileprivate var retryTime: UInt64? {
        if case .retry(let at, _) = self { at } else { nil }
    }
}
