/// One change of an event, as it is delivered (to studios, `camo-agent events`, server-sent events, a webhook):
/// it started, activity extended it, or it ended. Carries the whole event as it now is.
///
/// JSON: `{"sequence":12,"kind":"started","event":{…},"time":1764180000.25}`; `time` (Unix seconds, the
/// wall clock when the change happened) is left out when the deliverer did not add it.
public struct EventNotice: Sendable, Hashable, Codable {
    /// What changed.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The event started.
        case started
        /// Activity extended it.
        case updated
        /// It ended (``Event/endReason`` says why).
        case ended
    }

    /// Counts the notices of one agent run from 1; a receiver that sees a gap lost some.
    public var sequence: UInt64
    /// What changed.
    public var kind: Kind
    /// The event after the change.
    public var event: Event
    /// The wall clock of the change, Unix seconds; nil until the deliverer adds it.
    public var time: Double?

    /// A notice from its parts.
    public init(sequence: UInt64, kind: Kind, event: Event, time: Double? = nil) {
        self.sequence = sequence
        self.kind = kind
        self.event = event
        self.time = time
    }

    /// One line for a terminal: `12 started motion zone 2 (event 7)`, with the end's reason when it ended.
    public var summary: String {
        var line = "\(sequence) \(kind.rawValue) \(event.trigger.rawValue)"
        if let zone = event.zoneID { line += " zone \(zone)" }
        line += " (event \(event.id))"
        if kind == .ended, let reason = event.endReason { line += ": \(reason.rawValue)" }
        return line
    }
}
