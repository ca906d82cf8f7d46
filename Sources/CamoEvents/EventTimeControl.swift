/// Why an event ended.
public enum EventEndReason: String, Sendable, Hashable, Codable {
    /// No activity extended it: its initial duration, plus any augmentations, ran out.
    case timeout
    /// Activity would have extended it beyond its maximum duration.
    case maxDuration
    /// Its trigger was turned off, or its zone removed or changed.
    case disabled
}

/// Turns activity observations (motion on a frame, a loud sound window, an alarm pattern) into events with a start,
/// extensions and an end: the model's `motionTimeControl`. A plain value: every call says what time it is (ns of
/// the caller's monotonic clock), so it is tested with explicit times.
///
/// - **Start.** Activity while idle starts an event lasting ``MotionTimeControl/initialDuration``: `.started`.
/// - **Extension.** Activity during an event whose end is less than ``MotionTimeControl/augmentationDuration``
///   away moves the end later by the augmentation: `.updated`. So continuous activity extends the event in steps
///   of the augmentation (one `.updated` per step, not one per frame), and the end always lies at least the
///   augmentation after the last activity, until the maximum.
/// - **Maximum.** No extension goes beyond start + ``MotionTimeControl/maxDuration``; an event that activity
///   would have extended further ends with reason `.maxDuration`, any other with `.timeout`.
/// - **End and blind.** The event ends at its end time (`.ended`, at that time, however late the call that notices
///   it); for ``MotionTimeControl/blindDuration`` after it, activity starts nothing. Activity after that starts a
///   new event.
///
/// Call ``tick(now:)`` at ``nextDeadline`` (or on any timer) so events end without further activity; ``activity(now:)``
/// handles the passing of time itself. A time earlier than one already seen counts as the latest seen.
public struct EventTimeControl: Sendable {
    /// One change of the event.
    public enum Transition: Sendable, Hashable {
        /// An event started at `at`; it ends at `end` unless extended.
        case started(at: UInt64, end: UInt64)
        /// Activity at `at` extended the event; it now ends at `end`.
        case updated(at: UInt64, end: UInt64)
        /// The event ended at `at`.
        case ended(at: UInt64, reason: EventEndReason)
    }

    /// Where the state machine is.
    public enum Phase: Sendable, Hashable {
        /// No event, and new activity starts one.
        case idle
        /// An event is running.
        case active(start: UInt64, end: UInt64)
        /// An event ended; activity starts nothing until `until`.
        case blind(until: UInt64)
    }

    /// The durations in use.
    public let control: MotionTimeControl
    /// Where the state machine is.
    public private(set) var phase: Phase = .idle

    /// Whether activity asked for more than the maximum duration during the running event.
    private var capped = false
    private var latest: UInt64 = 0

    private static let second: UInt64 = 1_000_000_000

    /// A state machine with no event. The control should be valid (``MotionTimeControl/validate()``); an initial
    /// duration beyond the maximum is cut to it.
    public init(control: MotionTimeControl) {
        self.control = control
    }

    /// When something happens next without activity: the running event's end, or the blind period's; nil when
    /// idle.
    public var nextDeadline: UInt64? {
        switch phase {
        case .idle: nil
        case .active(_, let end): end
        case .blind(let until): until
        }
    }

    /// Whether an event is running.
    public var isActive: Bool {
        if case .active = phase { return true }
        return false
    }

    /// Time passed to `now`: ends the event if its end has come, ends the blind period if its end has come.
    public mutating func tick(now: UInt64) -> [Transition] {
        let now = advance(now)
        var transitions: [Transition] = []
        if case .active(_, let end) = phase, now >= end {
            transitions.append(.ended(at: end, reason: capped ? .maxDuration : .timeout))
            capped = false
            let blind = UInt64(control.blindDuration) * Self.second
            phase = blind == 0 ? .idle : .blind(until: end + blind)
        }
        if case .blind(let until) = phase, now >= until {
            phase = .idle
        }
        return transitions
    }

    /// Activity observed at `now`: starts an event, extends the running one, or (blind) nothing. Time passes
    /// first, as in ``tick(now:)``, so the result may end one event and start the next.
    public mutating func activity(now: UInt64) -> [Transition] {
        var transitions = tick(now: now)
        let now = latest
        let maxLength = UInt64(control.maxDuration) * Self.second
        switch phase {
        case .idle:
            let end = min(now + UInt64(control.initialDuration) * Self.second, now + maxLength)
            phase = .active(start: now, end: end)
            capped = false
            transitions.append(.started(at: now, end: end))
        case .active(let start, let end):
            let augmentation = UInt64(control.augmentationDuration) * Self.second
            guard augmentation > 0, end - now < augmentation else { break }
            let wanted = end + augmentation
            let newEnd = min(wanted, start + maxLength)
            if wanted > newEnd { capped = true }
            if newEnd > end {
                phase = .active(start: start, end: newEnd)
                transitions.append(.updated(at: now, end: newEnd))
            }
        case .blind:
            break
        }
        return transitions
    }

    private mutating func advance(_ now: UInt64) -> UInt64 {
        latest = max(latest, now)
        return latest
    }
}
