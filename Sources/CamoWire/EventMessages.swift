/// One change of a camera event as it travels to a studio (`eventNotice`, 0x13, protocol 1.3): the agent's
/// `EventNotice` with the trigger, kind and end reason as their JSON names, so a studio reads triggers a later agent
/// adds without knowing them. Sent only to studios that asked (`eventsRequest`, 0x12).
///
/// JSON body (behind a u32 length): `{"sequence":12,"kind":"started","id":7,"trigger":"motion","zoneID":2,
/// "start":…,"updates":[…],"end":…,"endReason":"timeout","time":1764180000.25}`.
public struct WireEvent: Sendable, Hashable, Codable {
    /// Counts the agent's notices from 1 in this run; a gap means the studio lost some.
    public var sequence: UInt64
    /// `started`, `updated` or `ended`.
    public var kind: String
    /// The event's id.
    public var id: UInt64
    /// What triggered it: `motion`, `sound`, `smokeAlarm`, `coAlarm`, `doorbellPress`, …
    public var trigger: String
    /// The activity zone of a motion event.
    public var zoneID: UInt16?
    /// When it started, ns of the agent's monotonic clock.
    public var start: UInt64
    /// When activity extended it, same clock.
    public var updates: [UInt64]
    /// When it ended, same clock.
    public var end: UInt64?
    /// Why it ended: `timeout`, `maxDuration` or `disabled`.
    public var endReason: String?
    /// The agent's wall clock at the change, Unix seconds.
    public var time: Double?

    /// The largest number of updates sent (an event that runs for its maximum has a few dozen at most).
    public static let maxUpdates = 1_024

    /// A notice from its parts.
    public init(
        sequence: UInt64, kind: String, id: UInt64, trigger: String, zoneID: UInt16? = nil, start: UInt64, updates: [UInt64] = [],
        end: UInt64? = nil, endReason: String? = nil, time: Double? = nil
    ) {
        self.sequence = sequence
        self.kind = kind
        self.id = id
        self.trigger = trigger
        self.zoneID = zoneID
        self.start = start
        self.updates = updates
        self.end = end
        self.endReason = endReason
        self.time = time
    }

    /// One line: `12 started motion zone 2 (event 7)`, with the reason when it ended.
    public var summary: String {
        var line = "\(sequence) \(kind) \(trigger)"
        if let zoneID { line += " zone \(zoneID)" }
        line += " (event \(id))"
        if kind == "ended", let endReason { line += ": \(endReason)" }
        return line
    }
}
