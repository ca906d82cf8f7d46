/// Why the RTSP server cannot run, in words for the person running the agent.
public enum RTSPError: Error, CustomStringConvertible, Equatable {
    /// GStreamer elements the stream needs are not installed: each with the Debian package that has it.
    case missingElements([(element: String, package: String)])
    /// A value of ``RTSPConfiguration`` that cannot work.
    case invalidConfiguration(String)
    /// No credentials while listening beyond loopback.
    case authenticationRequired(bindAddress: String)
    /// Another program listens on the port.
    case portInUse(port: Int, bindAddress: String)
    /// Listening failed for another reason (an address this machine does not have, a privileged port, ...).
    case bindFailed(port: Int, bindAddress: String, reason: String)
    /// gst-rtsp-server could not be set up.
    case setupFailed(String)

    public var description: String {
        switch self {
        case .missingElements(let missing):
            let packages = Array(Set(missing.map(\.package))).sorted()
            let names = missing.map { "\($0.element) (\($0.package))" }.joined(separator: ", ")
            return "The RTSP server needs GStreamer elements that are not installed: \(names). "
                + "Install them with: sudo apt-get install \(packages.joined(separator: " "))"
        case .invalidConfiguration(let reason):
            return "Invalid RTSP settings: \(reason)."
        case .authenticationRequired(let address):
            return "The RTSP server would listen on \(address) without a password: give it a username and password, "
                + "or bind it to 127.0.0.1 to serve only this machine."
        case .portInUse(let port, let address):
            return "The RTSP port \(port) on \(address) is already in use (another camo-agent, MediaMTX, go2rtc?): "
                + "stop that program or choose another port with --rtsp-port."
        case .bindFailed(let port, let address, let reason):
            return "The RTSP server cannot listen on \(address) port \(port): \(reason). "
                + "Check the bind address, or choose another port with --rtsp-port."
        case .setupFailed(let reason):
            return "The RTSP server could not be set up: \(reason)."
        }
    }

    public static func == (lhs: RTSPError, rhs: RTSPError) -> Bool {
        switch (lhs, rhs) {
        case (.missingElements(let a), .missingElements(let b)):
            return a.map(\.element) == b.map(\.element) && a.map(\.package) == b.map(\.package)
        case (.invalidConfiguration(let a), .invalidConfiguration(let b)): return a == b
        case (.authenticationRequired(let a), .authenticationRequired(let b)): return a == b
        case (.portInUse(let a, let b), .portInUse(let c, let d)): return a == c && b == d
        case (.bindFailed(let a, let b, let c), .bindFailed(let d, let e, let f)): return a == d && b == e && c == f
        case (.setupFailed(let a), .setupFailed(let b)): return a == b
        default: return false
        }
    }
}
