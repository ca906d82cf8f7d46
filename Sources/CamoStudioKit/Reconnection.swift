import CamoWire

/// Which session endings and failed attempts the ``Recorder`` reconnects after. Pure.
public enum ReconnectPolicy {
    /// Refusals that trying again will not change: another protocol version or pattern, a studio the agent
    /// does not know (`notPaired`), an unpaired studio the agent does not accept (`unpairedNotAllowed`).
    public static let permanentCodes: Set<UInt16> = Set(
        [WireErrorCode.unsupportedVersion, .unsupportedPattern, .notPaired, .unpairedNotAllowed].map(\.rawValue))

    /// Whether to reconnect after a session ended with `reason`: not after a close this studio asked for,
    /// nor after a permanent refusal; after anything else (a reset or end of the connection, an agent's
    /// goodbye or error, a keepalive timeout, a protocol error, a media stall).
    public static func shouldReconnect(after reason: StudioCloseReason) -> Bool {
        switch reason {
        case .requested:
            false
        case .agentError(let code, _), .agentGoodbye(let code, _):
            !permanentCodes.contains(code)
        case .keepaliveTimeout, .protocolError, .connectionLost:
            true
        }
    }

    /// Whether a failed connection attempt ends the reconnection (a permanent refusal, or an invalid
    /// configuration) instead of moving on to the next address or round.
    public static func isPermanent(_ error: StudioClientError) -> Bool {
        switch error {
        case .agentRefused(let code, _):
            permanentCodes.contains(code)
        case .sessionEnded(let reason):
            !shouldReconnect(after: reason) && reason != .requested
        case .invalidArgument:
            true
        case .connectFailed, .handshakeTimeout:
            false
        }
    }
}

/// What the reconnections of one recording were: the address of each session, and each reconnection's gap.
/// Pure; times are monotonic nanoseconds the caller passes in.
public struct ReconnectLog: Sendable, Equatable {
    /// Each address a session was established to, in order (the first is the first session's).
    public private(set) var addresses: [HostPort] = []
    /// For each reconnection: from detecting the loss before it to the first media message after it
    /// (nil while none has come).
    public private(set) var gapsNanos: [UInt64?] = []
    private var lostAt: UInt64?
    private var openGaps: [Int] = []
    private var openStarts: [UInt64] = []

    /// An empty log.
    public init() {}

    /// Sessions after the first.
    public var reconnects: Int { max(0, addresses.count - 1) }

    /// The gaps in milliseconds (nil while open).
    public var gapsMs: [Double?] { gapsNanos.map { $0.map { Double($0) / 1e6 } } }

    /// A session was established to `address` (the first, or a reconnection after ``lost(at:)``).
    public mutating func established(_ address: HostPort) {
        addresses.append(address)
        guard addresses.count > 1 else { return }
        gapsNanos.append(nil)
        if let lostAt {
            openGaps.append(gapsNanos.count - 1)
            openStarts.append(lostAt)
        }
        lostAt = nil
    }

    /// The current session was found lost at `now`.
    public mutating func lost(at now: UInt64) {
        lostAt = now
    }

    /// A media message (video or audio) arrived at `now`: closes every open gap.
    public mutating func media(at now: UInt64) {
        guard !openGaps.isEmpty else { return }
        for (index, start) in zip(openGaps, openStarts) {
            gapsNanos[index] = now >= start ? now - start : 0
        }
        openGaps.removeAll()
        openStarts.removeAll()
    }
}

/// When the recorder tries addresses while reconnecting: rounds that start at least ``roundIntervalNanos``
/// apart, each attempt with ``connectTimeoutNanos`` for TCP (cut to what is left), none at or after the
/// ``deadline``. Pure; times are monotonic nanoseconds.
public struct ReconnectSchedule: Sendable, Equatable {
    /// No attempt starts at or after this.
    public var deadline: UInt64
    /// The TCP connect timeout of one attempt.
    public var connectTimeoutNanos: UInt64
    /// The least time from the start of one round to the start of the next.
    public var roundIntervalNanos: UInt64

    /// A schedule from its parts.
    public init(deadline: UInt64, connectTimeoutNanos: UInt64, roundIntervalNanos: UInt64) {
        self.deadline = deadline
        self.connectTimeoutNanos = connectTimeoutNanos
        self.roundIntervalNanos = roundIntervalNanos
    }

    /// The connect timeout for an attempt starting at `now`; nil when the deadline has come.
    public func attemptTimeout(at now: UInt64) -> UInt64? {
        guard now < deadline else { return nil }
        return max(1, min(connectTimeoutNanos, deadline - now))
    }

    /// How long to wait at `now` before the round after the one that started at `roundStart` (0: at once);
    /// nil when that round would start at or after the deadline.
    public func pauseAfterRound(startedAt roundStart: UInt64, now: UInt64) -> UInt64? {
        let next = max(now, roundStart + roundIntervalNanos)
        guard next < deadline else { return nil }
        return next - now
    }
}

/// Keeps the agent's timestamps increasing over reconnections. They are the agent host's `CLOCK_MONOTONIC`:
/// a restarted agent process continues it, a rebooted host starts again near zero. When a new session's first
/// media time is not after the latest one recorded, that session's times are shifted to continue the
/// timeline after the wall-clock time that passed, so the slot-time span stays counted from the very first
/// frame. Pure.
public struct AgentTimeline: Sendable, Equatable {
    /// What is added to the current session's times.
    public private(set) var offsetNanos: UInt64 = 0
    /// The latest time given out.
    public private(set) var latest: UInt64?
    private var awaitingFirst = false

    /// An empty timeline.
    public init() {}

    /// A new session starts: its first media time decides its offset.
    public mutating func beginSession() {
        awaitingFirst = true
    }

    /// `time` from the current session on the recording's timeline. `wallNanosSinceLatest` is how long ago
    /// (on this host) the latest media message arrived; it is used only for a new session's first time.
    public mutating func adjust(_ time: UInt64, wallNanosSinceLatest: UInt64) -> UInt64 {
        if awaitingFirst {
            awaitingFirst = false
            if let latest, time &+ offsetNanos <= latest {
                let target = latest + max(wallNanosSinceLatest, 1)
                offsetNanos = target >= time ? target - time : 0
            }
        }
        let adjusted = time &+ offsetNanos
        latest = max(latest ?? adjusted, adjusted)
        return adjusted
    }
}

/// Whether the link to the agent is dead: while streaming (not paused by either side) nothing at all has
/// arrived for ``timeoutNanos``. The agent sends 30 frames a second, audio, and a keepalive every second, so
/// silence that long is no slow agent. Reading paused by this studio (its consumer is behind) is not the
/// agent's silence. Pure; times are monotonic nanoseconds.
public struct MediaStallDetector: Sendable, Equatable {
    /// Silence longer than this is a stall.
    public var timeoutNanos: UInt64
    /// When something last arrived (or the watch last restarted).
    public private(set) var lastArrival: UInt64
    /// The agent said the stream is paused (by it or by this studio).
    public private(set) var paused = false

    /// A detector that starts watching at `now`.
    public init(timeoutNanos: UInt64, now: UInt64) {
        self.timeoutNanos = timeoutNanos
        self.lastArrival = now
    }

    /// Bytes arrived from the agent at `now`.
    public mutating func arrived(at now: UInt64) {
        lastArrival = max(lastArrival, now)
    }

    /// The agent's stream state changed at `now`: paused states stop the watch, others restart it.
    public mutating func streamState(_ state: AgentStreamState, at now: UInt64) {
        switch state {
        case .pausedByAgent, .pausedByStudio: paused = true
        case .streaming, .cameraLost: paused = false
        }
        arrived(at: now)
    }

    /// This side is not reading (its consumer is behind) at `now`: the silence is not the agent's.
    public mutating func notReading(at now: UInt64) {
        arrived(at: now)
    }

    /// Whether the link counts as dead at `now`.
    public func isStalled(at now: UInt64) -> Bool {
        !paused && now > lastArrival && now - lastArrival > timeoutNanos
    }
}
