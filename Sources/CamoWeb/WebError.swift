/// What the web server answers when a request cannot be served: each case maps to one HTTP status and carries
/// a sentence that says what went wrong and what to do, sent as `{"error": "..."}`.
public enum WebError: Error, Sendable, Equatable {
    /// The agent cannot take more (viewers, sessions): HTTP 503.
    case busy(String)
    /// The request is malformed: HTTP 400.
    case badRequest(String)
    /// The thing named (a media session) does not exist: HTTP 404.
    case notFound(String)
    /// The agent cannot do this at all (no microphone path for talkback): HTTP 501.
    case unsupported(String)
    /// The request conflicts with the current state: HTTP 409.
    case conflict(String)
    /// The agent cannot do this now (no camera yet, shutting down): HTTP 503.
    case unavailable(String)

    /// The HTTP status code this error is answered with.
    public var httpStatus: Int {
        switch self {
        case .busy: 503
        case .badRequest: 400
        case .notFound: 404
        case .unsupported: 501
        case .conflict: 409
        case .unavailable: 503
        }
    }

    /// The sentence sent to the client.
    public var message: String {
        switch self {
        case .busy(let text), .badRequest(let text), .notFound(let text), .unsupported(let text),
            .conflict(let text), .unavailable(let text):
            text
        }
    }
}
