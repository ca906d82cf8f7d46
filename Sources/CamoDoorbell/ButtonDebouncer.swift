/// One change of a button's level, as the kernel stamped it.
public struct ButtonEdge: Sendable, Hashable {
    /// When it happened: CLOCK_MONOTONIC, ns (the kernel's timestamp of the GPIO interrupt or input event).
    public var time: UInt64
    /// Whether the button is pressed after this edge (for the default active-low GPIO button: a falling edge).
    public var pressed: Bool

    /// An edge at `time` to `pressed`.
    public init(time: UInt64, pressed: Bool) {
        self.time = time
        self.pressed = pressed
    }
}

/// What the debouncer makes of the edges: one `pressed` per press, at its first edge, and one `released` once the
/// button has stayed up for the debounce time.
public enum ButtonEvent: Sendable, Hashable {
    /// The button went down at `at` (ns): reported at once, with the time of its first edge.
    case pressed(at: UInt64)
    /// The press that began at `pressedAt` ended at `at` (the edge after which the button stayed up).
    case released(pressedAt: UInt64, at: UInt64)

    /// How long the press was held, ns (0 for `pressed`).
    public var held: UInt64 {
        switch self {
        case .pressed: 0
        case .released(let pressedAt, let at): at - pressedAt
        }
    }
}

/// Turns a bouncing button's edges into presses. A pure state machine: time comes only from the edges and from
/// ``settle(now:)``, so every case is tested with explicit times.
///
/// - A press is reported at its first edge (no waiting: the chime starts at once). The edges that follow within
///   the bounce are the same press.
/// - A release counts once the button has stayed up for `debounce` (30 ms by default): a contact that opens and
///   closes again within that time is still the same press. The released event carries the time of the last up
///   edge, so the held time is what the finger did, not the bounce.
/// - A down edge within `debounce` of a counted release is that release's bounce, not a new press.
/// - Repeated edges of one level (a bounce whose other half the kernel folded away) change nothing but the time the
///   level was last seen to change.
public struct ButtonDebouncer: Sendable {
    /// How long the button must stay up before a release counts (and how long after it a down edge is ignored), ns.
    public let debounce: UInt64

    private enum State: Sendable, Hashable {
        /// Up since `at` (nil: since watching began).
        case released(at: UInt64?)
        /// Down since `at`; `reported` is false for a button already held when watching began.
        case pressed(at: UInt64, reported: Bool)
    }

    private var state: State
    /// The raw level after the last edge, and when it was reached.
    private var level: Bool
    private var levelSince: UInt64

    /// A debouncer for a button that is up (or, with `pressedAtStart`, already held at `now`: that press is never
    /// reported).
    public init(debounce: UInt64 = 30_000_000, pressedAtStart: Bool = false, now: UInt64 = 0) {
        self.debounce = debounce
        state = pressedAtStart ? .pressed(at: now, reported: false) : .released(at: nil)
        level = pressedAtStart
        // Up: no time yet, so an edge stamped before the debouncer was made still counts at its own time.
        levelSince = pressedAtStart ? now : 0
    }

    /// Whether the debounced button is down.
    public var isPressed: Bool {
        if case .pressed = state { return true }
        return false
    }

    /// When ``settle(now:)`` may next report something (a release waiting to be confirmed), or nil when nothing
    /// is pending. The watching thread waits for the next edge until then.
    public var deadline: UInt64? {
        guard case .pressed = state, !level else { return nil }
        return levelSince + debounce
    }

    /// Takes one edge; returns what it completes (a release confirmed by the time of this edge, then a press).
    /// Edges must come in time order; an earlier time is taken as the last one seen.
    public mutating func handle(_ edge: ButtonEdge) -> [ButtonEvent] {
        let time = max(edge.time, levelSince)
        var events = settle(now: time).map { [$0] } ?? []
        switch state {
        case .released(let at):
            if edge.pressed && !level {
                level = true
                levelSince = time
                // A down edge right after a counted release is its bounce.
                if at.map({ time >= $0 + debounce }) ?? true {
                    state = .pressed(at: time, reported: true)
                    events.append(.pressed(at: time))
                }
            } else if !edge.pressed && level {
                // The bounce of a release ended up again.
                level = false
                levelSince = time
            } else if !edge.pressed {
                levelSince = time
            }
        case .pressed:
            if edge.pressed != level {
                level = edge.pressed
                levelSince = time
            } else if !edge.pressed {
                // Up again without a down between: the bounce's down edge was folded away; the button is up since now.
                levelSince = time
            }
        }
        return events
    }

    /// Confirms a release when the button has stayed up for the debounce time by `now` (ns, CLOCK_MONOTONIC).
    public mutating func settle(now: UInt64) -> ButtonEvent? {
        guard case .pressed(let at, let reported) = state, !level, now >= levelSince + debounce else { return nil }
        state = .released(at: levelSince)
        return reported ? .released(pressedAt: at, at: levelSince) : nil
    }
}
