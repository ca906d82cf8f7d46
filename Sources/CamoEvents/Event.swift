/// One event as it is delivered: what triggered it, where (motion), and when it started, was extended and ended.
/// Times are ns of the clock the detectors and ``EventTimeControl`` were fed (the agent's monotonic clock); the
/// deliverer adds wall-clock time if the receiver needs it.
///
/// JSON (Codable): `{"id":7,"trigger":"motion","zoneID":2,"start":…,"updates":[…],"end":…,"endReason":"timeout"}`;
/// `zoneID`, `end` and `endReason` are left out when nil.
public struct Event: Sendable, Hashable, Codable, Identifiable {
    /// Unique among the agent's events (the caller assigns it).
    public var id: UInt64
    /// What started it.
    public var trigger: EventTrigger
    /// The activity zone motion was seen in; nil for sound triggers, or motion over the whole picture.
    public var zoneID: UInt16?
    /// When it started, ns.
    public var start: UInt64
    /// When activity extended it, ns, in order.
    public var updates: [UInt64]
    /// When it ended, ns; nil while it runs.
    public var end: UInt64?
    /// Why it ended; nil while it runs.
    public var endReason: EventEndReason?

    /// An event from its parts.
    public init(
        id: UInt64, trigger: EventTrigger, zoneID: UInt16? = nil, start: UInt64, updates: [UInt64] = [], end: UInt64? = nil,
        endReason: EventEndReason? = nil
    ) {
        self.id = id
        self.trigger = trigger
        self.zoneID = zoneID
        self.start = start
        self.updates = updates
        self.end = end
        self.endReason = endReason
    }

    /// Whether it has not ended yet.
    public var isOngoing: Bool { end == nil }

    /// Records an ``EventTimeControl`` transition of this event: an update adds its time, an end sets the end and
    /// reason. A start changes nothing (it made the event).
    public mutating func apply(_ transition: EventTimeControl.Transition) {
        switch transition {
        case .started: break
        case .updated(let at, _): updates.append(at)
        case .ended(let at, let reason):
            end = at
            endReason = reason
        }
    }
}
