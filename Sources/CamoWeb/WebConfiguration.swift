import Foundation

/// How the web server listens and what it allows.
public struct WebConfiguration: Sendable {
    /// The address to listen on (default every IPv4 address, "0.0.0.0").
    public var host: String
    /// The TCP port (default 8443; 0 picks a free one, see ``WebServer/port``).
    public var port: Int
    /// Whether to speak HTTPS (default true). Plain HTTP is refused unless `host` is a loopback address.
    public var tls: Bool
    /// How long a live view lease lasts unless extended, in seconds (default 120).
    public var leaseSeconds: Int
    /// How many live viewers at once (default 4, `--max-viewers`).
    public var maxViewers: Int
    /// Whether requests from loopback addresses may go without a token (default false).
    public var loopbackWithoutToken: Bool
    /// The agent's state directory: `web-tokens.json`, `web-key.pem` and `web-cert.pem` live here.
    public var stateDirectory: URL
    /// Extra names and addresses for the certificate's SAN (localhost and 127.0.0.1 are always in it).
    public var certificateHostnames: [String]
    /// The largest request body accepted, in bytes (default 64 KiB); larger ones get 413.
    public var maxBodyBytes: Int
    /// How many connections at once from one address (default 64); more are closed at once.
    public var maxConnectionsPerAddress: Int
    /// How many connections at once in all (default 512).
    public var maxConnections: Int

    /// A configuration with the defaults above, keeping its files in `stateDirectory`.
    public init(
        host: String = "0.0.0.0", port: Int = 8443, tls: Bool = true, leaseSeconds: Int = 120, maxViewers: Int = 4,
        loopbackWithoutToken: Bool = false, stateDirectory: URL, certificateHostnames: [String] = [],
        maxBodyBytes: Int = 64 * 1024, maxConnectionsPerAddress: Int = 64, maxConnections: Int = 512
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.leaseSeconds = leaseSeconds
        self.maxViewers = maxViewers
        self.loopbackWithoutToken = loopbackWithoutToken
        self.stateDirectory = stateDirectory
        self.certificateHostnames = certificateHostnames
        self.maxBodyBytes = maxBodyBytes
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.maxConnections = maxConnections
    }

    /// Throws when the configuration cannot be served: plain HTTP off loopback, a port out of range, no viewers.
    public func validate() throws(WebServerError) {
        guard (0...65_535).contains(port) else {
            throw .invalidConfiguration("web port \(port) is not a TCP port (0...65535); choose another with --web-port")
        }
        guard leaseSeconds >= 1 else {
            throw .invalidConfiguration("the live view lease must be at least 1 second (it is \(leaseSeconds))")
        }
        guard maxViewers >= 1 else {
            throw .invalidConfiguration("--max-viewers must be at least 1 (it is \(maxViewers))")
        }
        if !tls && !ClientAddress.isLoopback(host: host) {
            throw .invalidConfiguration(
                "plain HTTP (TLS off) is allowed only on a loopback address, not \(host): tokens and cookies would "
                    + "cross the network in clear; keep TLS on or bind to 127.0.0.1")
        }
    }
}

/// Why the web server could not start.
public enum WebServerError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Another program holds the port.
    case portInUse(host: String, port: Int)
    /// The configuration cannot be served (the text says why and what to change).
    case invalidConfiguration(String)
    /// The certificate or key could not be made or loaded.
    case certificate(String)
    /// Listening failed for another reason.
    case bind(String)

    /// A sentence saying what went wrong and what to do.
    public var description: String {
        switch self {
        case .portInUse(let host, let port):
            "the web port \(port) on \(host) is in use by another program; stop it or choose another port with --web-port"
        case .invalidConfiguration(let text): text
        case .certificate(let text): text
        case .bind(let text): text
        }
    }
}
