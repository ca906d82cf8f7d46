/// Why the event webhook could not be set up or one delivery attempt failed; ``description`` is a sentence that
/// says what went wrong and what to do.
///
/// Setup errors (``invalidURL(_:)``, ``invalidSecret(_:)``, ``invalidCertificate(_:)``) come from
/// ``EventWebhook/init(url:secret:clock:logger:options:)``; the others are one attempt's failure, which
/// ``WebhookQueue`` retries with backoff.
public enum WebhookError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The configured URL cannot be used (the text says why and gives an example).
    case invalidURL(String)
    /// The configured secret cannot be used (the text says why).
    case invalidSecret(String)
    /// The extra CA certificate (PEM) to trust cannot be read (the text says why).
    case invalidCertificate(String)
    /// No TCP connection within the connect timeout.
    case connectTimeout(url: String, seconds: Double)
    /// Connected, but no answer within the request timeout (a server that accepts and never answers).
    case requestTimeout(url: String, seconds: Double)
    /// The connection could not be made or broke (refused, reset, host not found); `reason` is the system's word.
    case connectionFailed(url: String, reason: String)
    /// The TLS handshake failed (an untrusted certificate, a wrong host name).
    case tls(url: String, reason: String)
    /// The server's answer is not HTTP, or it closed the connection before answering.
    case badResponse(url: String, reason: String)
    /// The request was cancelled because the webhook was stopped.
    case cancelled
    /// A push transport's local directory could not be written (retried).
    case localWrite(path: String, reason: String)
    /// What was to be sent no longer exists (a recording removed to make room before it was pushed): not retried.
    case sourceGone(String)

    /// A sentence saying what went wrong and what to do.
    public var description: String {
        switch self {
        case .invalidURL(let text), .invalidSecret(let text), .invalidCertificate(let text):
            text
        case .connectTimeout(let url, let seconds):
            "\(url) could not be reached within \(Self.format(seconds)) s (connect timeout); "
                + "check the host is up and the port is open, it will be retried"
        case .requestTimeout(let url, let seconds):
            "\(url) accepted the connection but did not answer within \(Self.format(seconds)) s; "
                + "check the receiver is not stuck, it will be retried"
        case .connectionFailed(let url, let reason):
            "\(url) could not be reached: \(reason); check the host and port, it will be retried"
        case .tls(let url, let reason):
            "The TLS handshake with \(url) failed: \(reason); check the certificate names that host and "
                + "comes from a CA this machine trusts, or give it (or its CA) as the extra trusted certificate"
        case .badResponse(let url, let reason):
            "\(url) did not answer with HTTP: \(reason); check the URL points at an HTTP receiver"
        case .cancelled:
            "The request was cancelled because the sender was stopped"
        case .localWrite(let path, let reason):
            "Writing to \(path) failed: \(reason); check it exists, is writable and has room, it will be retried"
        case .sourceGone(let text):
            text
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
