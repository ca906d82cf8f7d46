import Foundation
import Glibc

/// Tells systemd how a `Type=notify` service is doing (`sd_notify(3)`'s protocol: one datagram to the Unix
/// socket named by `$NOTIFY_SOCKET`). Without `$NOTIFY_SOCKET` (not run by systemd) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket path (a leading `@` is an abstract socket), nil when not under systemd.
    public let socketPath: String?
    /// The watchdog interval systemd expects (`$WATCHDOG_USEC`, only when `$WATCHDOG_PID` is unset or ours).
    public let watchdogInterval: Duration?

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let forUs = environment["WATCHDOG_PID"].map { $0 == String(getpid()) } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 {
            watchdogInterval = .microseconds(Int64(clamping: usec))
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (`READY=1`, `STATUS=...`, `WATCHDOG=1`, `STOPPING=1`, lines joined by newlines).
    /// - Returns: false when not under systemd or the datagram could not be sent.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { buffer in
                    sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        return sent == bytes.count
    }
}
