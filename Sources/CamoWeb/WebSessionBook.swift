/// Browser logins: a random session id (the cookie) mapped, in memory only, to the id of the token that logged in.
///
/// A plain value. The server checks the token still exists on every request, so revoking a token ends its
/// cookies too; an agent restart ends them all (the page then shows its login form again).
public struct WebSessionBook: Sendable {
    /// The cookie's name.
    public static let cookieName = "camo_session"

    /// How many sessions are kept at most (the oldest is dropped first).
    public let maxSessions: Int
    private var sessions: [String: (tokenID: String, order: UInt64)] = [:]
    private var nextOrder: UInt64 = 0

    /// A book keeping at most `maxSessions` logins.
    public init(maxSessions: Int = 1_000) {
        self.maxSessions = max(1, maxSessions)
    }

    /// Starts a session for token `tokenID` and returns its id (32 random bytes, base64url) for the cookie.
    public mutating func open<Generator: RandomNumberGenerator>(tokenID: String, using generator: inout Generator) -> String {
        let sessionID = WebTokenStore.base64URL((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        sessions[sessionID] = (tokenID, nextOrder)
        nextOrder += 1
        if sessions.count > maxSessions, let oldest = sessions.min(by: { $0.value.order < $1.value.order }) {
            sessions.removeValue(forKey: oldest.key)
        }
        return sessionID
    }

    /// Starts a session with the system's random generator.
    public mutating func open(tokenID: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return open(tokenID: tokenID, using: &generator)
    }

    /// The token id session `sessionID` logged in with, if it is open.
    public func tokenID(session sessionID: String) -> String? {
        sessions[sessionID]?.tokenID
    }

    /// Ends session `sessionID` (logout, or its token was revoked).
    public mutating func close(session sessionID: String) {
        sessions.removeValue(forKey: sessionID)
    }

    /// How many sessions are open.
    public var count: Int { sessions.count }
}
