import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal TCP peer on 127.0.0.1 for client error paths: it accepts one connection, reads the
/// preamble, then refuses with an unauthenticated error record, hangs up, or stays silent.
final class FakeAgent: Sendable {
    enum Behavior: Sendable {
        case refuse(code: UInt16, reason: String)
        case hangUp
        case silent
    }

    let port: Int

    /// A loopback port that nothing listens on (bound, then closed again).
    static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return try bindLoopback(fd, listening: false)
    }

    /// Binds `fd` to 127.0.0.1 on a free port (and listens); returns the port.
    private static func bindLoopback(_ fd: Int32, listening: Bool) throws -> Int {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && (!listening || listen(fd, 4) == 0) && getsockname(fd, sa, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    init(_ behavior: Behavior) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        do {
            port = try Self.bindLoopback(listener, listening: true)
        } catch {
            close(listener)
            throw error
        }
        DispatchQueue.global().async {
            // This thread alone owns the listener's descriptor (closing it from elsewhere could race with
            // another test reusing the number); it waits at most 60 s for the client (a full parallel test run can
            // keep a client's task queued for many seconds).
            var pollfd = Glibc.pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollfd, 1, 60_000) == 1
            let connection = ready ? accept(listener, nil, nil) : -1
            close(listener)
            guard connection >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(connection, &buffer, buffer.count)   // the preamble and the first handshake record
            switch behavior {
            case .refuse(let code, let reason):
                let text = Array(reason.utf8)
                let body: [UInt8] = [0x7F, UInt8(code >> 8), UInt8(code & 0xFF), UInt8(text.count >> 8), UInt8(text.count & 0xFF)] + text
                let record = [UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
                _ = record.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                Self.closeGracefully(connection, buffer: &buffer)
            case .hangUp:
                Self.closeGracefully(connection, buffer: &buffer)
            case .silent:
                // Wait until the client gives up (read returns 0 or fails), then close.
                while read(connection, &buffer, buffer.count) > 0 {}
                close(connection)
            }
        }
    }

    /// Half-closes, drains what the client still sends, then closes, so the kernel sends FIN, not RST
    /// (a reset could discard the refusal before the client reads it).
    private static func closeGracefully(_ connection: Int32, buffer: inout [UInt8]) {
        shutdown(connection, Int32(SHUT_WR))
        while read(connection, &buffer, buffer.count) > 0 {}
        close(connection)
    }
}
