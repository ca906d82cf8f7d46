/// How the RTSP server listens and whom it lets in.
public struct RTSPConfiguration: Sendable {
    /// The TCP port (RTSP's usual 8554); 0 lets the system pick one (see ``RTSPLiveServer/url``).
    public var port: Int
    /// The stream's path, starting with "/": rtsp://host:port/camo.
    public var path: String
    /// The address to listen on: "0.0.0.0" for every IPv4 interface, "127.0.0.1" for this machine only.
    public var bindAddress: String
    /// The username and password NVRs give (RTSP DIGEST authentication, the password never crosses the network).
    /// nil serves without authentication, which is only allowed on a loopback address.
    public var credentials: (username: String, password: String)?
    /// The DIGEST realm clients show when they ask for a password.
    public var realm: String

    /// A configuration; the defaults serve rtsp://0.0.0.0:8554/camo, which needs `credentials`.
    public init(
        port: Int = 8554, path: String = "/camo", bindAddress: String = "0.0.0.0",
        credentials: (username: String, password: String)? = nil, realm: String = "camo-agent"
    ) {
        self.port = port
        self.path = path
        self.bindAddress = bindAddress
        self.credentials = credentials
        self.realm = realm
    }

    /// Whether `bindAddress` only reaches this machine (127.0.0.0/8, ::1, localhost).
    public var isLoopback: Bool {
        let address = bindAddress.lowercased()
        return address == "localhost" || address == "::1" || address == "[::1]" || address.hasPrefix("127.")
    }

    /// Checks the values a server cannot run with.
    /// - Throws: ``RTSPError/invalidConfiguration(_:)`` or ``RTSPError/authenticationRequired(bindAddress:)``.
    public func validate() throws(RTSPError) {
        guard (0...65535).contains(port) else {
            throw .invalidConfiguration("the RTSP port \(port) is not a TCP port (0 to 65535, 0 picks a free one); choose another with --rtsp-port")
        }
        guard path.hasPrefix("/"), path.count > 1, !path.contains(where: { $0 == " " || $0 == "?" || $0 == "#" }) else {
            throw .invalidConfiguration("the RTSP path \"\(path)\" must start with / and hold no spaces, ? or #")
        }
        guard !bindAddress.isEmpty else { throw .invalidConfiguration("the RTSP bind address is empty") }
        if let credentials {
            guard !credentials.username.isEmpty, !credentials.username.contains(":") else {
                throw .invalidConfiguration("the RTSP username must be non-empty and hold no colon")
            }
            guard !credentials.password.isEmpty else { throw .invalidConfiguration("the RTSP password is empty") }
        } else if !isLoopback {
            throw .authenticationRequired(bindAddress: bindAddress)
        }
    }
}
