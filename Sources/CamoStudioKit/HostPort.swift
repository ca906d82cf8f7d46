import NIOCore
import NIOPosix

/// A `HOST:PORT` address as given on the command line (`[v6]:port` for IPv6 literals).
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    /// Host name or address literal (without brackets).
    public var host: String
    /// TCP port.
    public var port: Int

    /// An address from its parts.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, `[v6]:port`; nil when malformed or the port is not 1...65535.
    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with an IPv6 literal in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension HostPort {
    /// Whether something accepts TCP connections here now (connects and closes at once, 2 s at most).
    /// mDNS caches can name a port an agent left a moment ago; this tells a stale record from a live one.
    public func acceptsConnections(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: group).connectTimeout(.seconds(2)).connect(host: host, port: port).get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }
}
