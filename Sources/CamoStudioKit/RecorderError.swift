/// Why a recording failed.
public enum RecorderError: Error, Sendable, CustomStringConvertible {
    /// Connecting, the handshake or the hello failed.
    case connection(StudioClientError)
    /// The session ended before the recording was complete (the files hold what arrived).
    case sessionEnded(StudioCloseReason)
    /// An output file could not be written.
    case output(String)

    /// A human sentence.
    public var description: String {
        switch self {
        case .connection(let error):
            return error.description
        case .sessionEnded(let reason):
            switch reason {
            case .agentError(let code, let reason), .agentGoodbye(let code, let reason):
                return "agent closed the session: \(reason) (code \(code))"
            default:
                return reason.description
            }
        case .output(let why):
            return why
        }
    }
}
