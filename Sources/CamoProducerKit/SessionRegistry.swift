import CamoWire

/// The controller's studios: the established sessions (primary first) and the connections still in their
/// handshake, with the limits on both, and the controller state they imply.
///
/// A plain value, kept under the controller's lock and tested without sockets; `Session` is the controller's
/// handle in production and anything in tests.
struct SessionRegistry<Session> {
    /// At most this many established sessions.
    let maxSessions: Int
    /// At most this many connections in their handshake.
    let maxPendingHandshakes: Int
    /// Established sessions in the order they were admitted; the first is the primary.
    private(set) var sessions: [Session] = []
    /// Connections that hold a handshake slot.
    private(set) var pendingHandshakes = 0

    init(maxSessions: Int, maxPendingHandshakes: Int) {
        self.maxSessions = maxSessions
        self.maxPendingHandshakes = maxPendingHandshakes
    }

    /// Takes a handshake slot; false when all are taken (the connection is refused as busy).
    mutating func reserveHandshake() -> Bool {
        guard pendingHandshakes < maxPendingHandshakes else { return false }
        pendingHandshakes += 1
        return true
    }

    /// Gives a handshake slot back (never below zero).
    mutating func releaseHandshake() {
        pendingHandshakes = max(0, pendingHandshakes - 1)
    }

    /// Adds an established session, or says why not.
    mutating func admit(_ session: Session) -> WireError? {
        guard sessions.count < maxSessions else {
            return WireError(code: .tooManyConnections, reason: "The agent already serves \(maxSessions) studios; close one and try again.")
        }
        sessions.append(session)
        return nil
    }

    /// Removes the sessions that match.
    mutating func remove(where matches: (Session) -> Bool) {
        sessions.removeAll(where: matches)
    }

    /// Removes every session and handshake slot, returning the sessions (the controller is stopping).
    mutating func removeAll() -> [Session] {
        defer {
            sessions.removeAll()
            pendingHandshakes = 0
        }
        return sessions
    }

    /// The controller's state: nil when not running; else the first session that has a connection decides
    /// `active` or `paused` (the privacy switch, or that studio's own pause); with none, `notConnected`.
    func state(running: Bool, paused: Bool, connection: (Session) -> CamoConnection?) -> CamoControllerState? {
        guard running else { return nil }
        guard let primary = sessions.lazy.compactMap(connection).first else { return .notConnected }
        return paused || primary.pausedByStudio ? .paused(primary) : .active(primary)
    }
}
