/// Why ``StudioClient/connect(host:port:configuration:group:logger:)`` or a request failed.
public enum StudioClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The agent refused before the handshake completed (an unauthenticated error record).
    case agentRefused(code: UInt16, reason: String)
    /// The session ended before the agent's hello, or a request was made on a closed session.
    case sessionEnded(StudioCloseReason)
    /// The handshake and hello did not complete within the handshake deadline.
    case handshakeTimeout
    /// TCP connect failed.
    case connectFailed(String)
    /// A parameter is out of range (message says which).
    case invalidArgument(String)

    /// A human sentence.
    public var description: String {
        switch self {
        case .agentRefused(let code, let reason): "agent refused: \(reason) (code \(code))"
        case .sessionEnded(let why): "session ended: \(why)"
        case .handshakeTimeout: "the agent did not complete the handshake in time"
        case .connectFailed(let why): "cannot connect: \(why)"
        case .invalidArgument(let why): why
        }
    }
}
