/// The live view leases (the Google Home camera model): a viewer holds its media session for `duration` and
/// must extend it to keep watching; a lease that runs out ends the session.
///
/// A plain value: every method takes the time (`MonotonicInstant.nanoseconds` of the server's injected clock),
/// so tests drive it with numbers and the server sweeps it on a timer.
public struct LiveLeaseBook: Sendable {
    /// One viewer's lease.
    public struct Lease: Sendable, Equatable {
        /// The media session id.
        public var id: String
        /// When the lease started (nanoseconds).
        public var started: UInt64
        /// When it runs out unless extended (nanoseconds).
        public var expires: UInt64
    }

    /// How long a lease lasts from its start or its latest extension.
    public let duration: Duration
    /// How many leases may be held at once.
    public let maxViewers: Int
    private var leases: [String: Lease] = [:]

    /// A book whose leases last `durationSeconds` and that holds at most `maxViewers` at once.
    public init(durationSeconds: Int = 120, maxViewers: Int = 4) {
        self.duration = .seconds(max(1, durationSeconds))
        self.maxViewers = max(1, maxViewers)
    }

    /// The lease duration in whole seconds (as the API reports it).
    public var durationSeconds: Int { Int(duration.components.seconds) }

    /// How many leases are held now.
    public var count: Int { leases.count }

    /// The ids of the leases held now.
    public var ids: [String] { Array(leases.keys) }

    /// The lease of `id`, if it is held.
    public func lease(_ id: String) -> Lease? { leases[id] }

    /// Starts a lease for `id`, running out `duration` after `now`; `.busy` when `maxViewers` already hold one,
    /// `.conflict` when `id` is already held.
    public mutating func start(id: String, now: UInt64) throws(WebError) -> Lease {
        guard leases[id] == nil else { throw .conflict("media session \(id) already exists; start a new one") }
        guard leases.count < maxViewers else {
            throw .busy(
                "busy: \(maxViewers) viewers are watching (the limit, --max-viewers); close a viewer or wait for one "
                    + "to end, then start again")
        }
        let lease = Lease(id: id, started: now, expires: now &+ nanoseconds(duration))
        leases[id] = lease
        return lease
    }

    /// Renews `id` to run out `duration` after `now`; `.notFound` when it is not held (it ended or expired).
    public mutating func extend(id: String, now: UInt64) throws(WebError) -> Lease {
        guard var lease = leases[id] else { throw Self.unknown(id) }
        lease.expires = max(lease.expires, now &+ nanoseconds(duration))
        leases[id] = lease
        return lease
    }

    /// Ends `id` at once and returns its lease; `.notFound` when it is not held.
    @discardableResult
    public mutating func stop(id: String) throws(WebError) -> Lease {
        guard let lease = leases.removeValue(forKey: id) else { throw Self.unknown(id) }
        return lease
    }

    /// Frees `id` if it is held (the viewer ended by itself); returns whether it was.
    @discardableResult
    public mutating func release(id: String) -> Bool {
        leases.removeValue(forKey: id) != nil
    }

    /// Removes and returns the ids of every lease that has run out at `now` (expiry at or before `now`), earliest first.
    public mutating func expire(now: UInt64) -> [String] {
        let ended = leases.values.filter { $0.expires <= now }.sorted { ($0.expires, $0.id) < ($1.expires, $1.id) }
        for lease in ended { leases.removeValue(forKey: lease.id) }
        return ended.map(\.id)
    }

    /// The earliest expiry of the leases held, if any.
    public var nextExpiry: UInt64? { leases.values.map(\.expires).min() }

    /// The error for an id that is not held.
    static func unknown(_ id: String) -> WebError {
        .notFound("no live media session \(id): it ended or its lease expired; start a new one with POST /whep")
    }

    private func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }
}
