/// The webhook's address, checked: `http` or `https`, a host, an optional port, an optional path and query.
///
/// Anything else is refused with a ``WebhookError/invalidURL(_:)`` sentence that names the problem and shows an
/// example: another scheme (`ftp://`), no host, spaces or control characters, a `user:password@` part (the shared
/// secret authenticates the agent; credentials in a URL end up in logs), a fragment, a bad port, non-ASCII text.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    /// The two schemes a webhook may use.
    public enum Scheme: String, Sendable, Hashable {
        /// Plain HTTP (port 80 unless given).
        case http
        /// HTTP over TLS (port 443 unless given), checked against the system's trust roots.
        case https
    }

    /// The example every error sentence ends with.
    public static let example = "https://homeassistant.local:8123/api/webhook/camo"

    /// The scheme.
    public let scheme: Scheme
    /// The host name (lower-case) or IP address (IPv6 without brackets).
    public let host: String
    /// The port: the one given, else 80 for http and 443 for https.
    public let port: Int
    /// The path and query sent in the request line, starting with `/` (`/` when the URL has none).
    public let pathAndQuery: String

    /// Parses and checks `text`; throws ``WebhookError/invalidURL(_:)`` with a sentence when it cannot be used.
    public init(_ text: String) throws(WebhookError) {
        func invalid(_ problem: String, shown: String = text) -> WebhookError {
            .invalidURL("The webhook URL \"\(shown)\" \(problem); set webhookURL to e.g. \(Self.example)")
        }
        if text.isEmpty { throw invalid("is empty") }
        if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw invalid("contains a space or control character (percent-encode a space in a path as %20)")
        }
        if !text.unicodeScalars.allSatisfy(\.isASCII) {
            throw invalid("contains characters that are not ASCII (percent-encode them)")
        }
        guard let separator = text.range(of: "://") else {
            throw invalid("is not an absolute URL: it has no scheme such as https://")
        }
        let schemeText = text[..<separator.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            throw invalid("is not http or https: it uses \"\(schemeText)\"")
        }
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var remainder = String(rest[authorityEnd...])
        if let at = authority.lastIndex(of: "@") {
            let redacted = "\(schemeText)://…@\(authority[authority.index(after: at)...])\(remainder)"
            throw invalid(
                "contains a user name or password (the user:password@ part); remove it, the webhook secret "
                    + "authenticates the agent", shown: redacted)
        }
        if remainder.contains("#") { throw invalid("has a fragment (#…), which is never sent; remove it") }

        var hostText: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw invalid("has an IPv6 address without a closing ]")
            }
            hostText = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("has text after the IPv6 address that is not a :port") }
                portText = after.dropFirst()
            }
            guard !hostText.isEmpty, hostText.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("has an IPv6 address that is not valid")
            }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else {
                throw invalid("has more than one colon in its host (write IPv6 addresses in [ ])")
            }
            hostText = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            let allowed = hostText.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" }
            if !hostText.isEmpty && !allowed {
                throw invalid("has a host name with characters a host name cannot have")
            }
        }
        if hostText.isEmpty { throw invalid("has no host") }
        var port = scheme == .https ? 443 : 80
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isNumber), let number = Int(portText),
                (1...65_535).contains(number)
            else { throw invalid("has a port that is not a number from 1 to 65535") }
            port = number
        }
        if remainder.isEmpty || remainder.hasPrefix("?") { remainder = "/" + remainder }
        self.scheme = scheme
        self.host = hostText.lowercased()
        self.port = port
        self.pathAndQuery = remainder
    }

    /// Whether ``host`` is an IP address rather than a name (no SNI is sent for an address).
    public var hostIsIPAddress: Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." })
    }

    /// The `Host` header: the host (IPv6 in brackets), with the port when it is not the scheme's default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == .https ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// The URL written out again, normalized (lower-case scheme and host, the default port left out).
    public var description: String { "\(scheme.rawValue)://\(hostHeader)\(pathAndQuery)" }
}
