/// Failed logins and bearer tokens per client address: after `limit` failures within `window`, that address is
/// refused (HTTP 429 with Retry-After) until its oldest failure leaves the window.
///
/// A plain value; times are nanoseconds of the server's injected clock.
public struct LoginRateLimiter: Sendable {
    /// Failures allowed within the window before the address is refused.
    public let limit: Int
    /// The window failures count in.
    public let window: Duration
    /// How many addresses are remembered at most (the oldest are forgotten first).
    public let maxAddresses: Int
    private var failures: [String: [UInt64]] = [:]

    /// A limiter allowing `limit` failures per `window` per address.
    public init(limit: Int = 5, window: Duration = .seconds(60), maxAddresses: Int = 10_000) {
        self.limit = max(1, limit)
        self.window = window
        self.maxAddresses = max(1, maxAddresses)
    }

    /// How long `address` must wait before trying again, or nil when it may try now.
    public func retryAfter(address: String, now: UInt64) -> Duration? {
        let recent = recentFailures(address: address, now: now)
        guard recent.count >= limit, let oldest = recent.first else { return nil }
        let until = oldest &+ windowNanoseconds
        return .nanoseconds(Int64(until - min(until, now)))
    }

    /// Whole seconds to put in Retry-After (at least 1), or nil when `address` may try now.
    public func retryAfterSeconds(address: String, now: UInt64) -> Int? {
        guard let wait = retryAfter(address: address, now: now) else { return nil }
        let (seconds, attoseconds) = wait.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }

    /// Counts a failed attempt from `address`.
    public mutating func recordFailure(address: String, now: UInt64) {
        var recent = recentFailures(address: address, now: now)
        recent.append(now)
        if recent.count > limit { recent.removeFirst(recent.count - limit) }
        failures[address] = recent
        if failures.count > maxAddresses { prune(now: now) }
    }

    /// Forgets the failures of `address` (after it logged in).
    public mutating func recordSuccess(address: String) {
        failures.removeValue(forKey: address)
    }

    /// How many addresses have failures remembered.
    public var addressCount: Int { failures.count }

    private var windowNanoseconds: UInt64 {
        let (seconds, attoseconds) = window.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }

    private func recentFailures(address: String, now: UInt64) -> [UInt64] {
        (failures[address] ?? []).filter { $0 &+ windowNanoseconds > now }
    }

    private mutating func prune(now: UInt64) {
        let window = windowNanoseconds
        failures = failures.filter { $0.value.contains { $0 &+ window > now } }
        while failures.count > maxAddresses {
            guard let oldest = failures.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) }) else { break }
            failures.removeValue(forKey: oldest.key)
        }
    }
}
