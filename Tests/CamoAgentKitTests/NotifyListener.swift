import Foundation
import Glibc

/// A datagram socket standing in for systemd's notification socket: what `sd_notify` sends arrives here.
final class NotifyListener: @unchecked Sendable {
    // @unchecked Sendable: fd is set once in init; receive() is called from one test task at a time.
    let path: String
    private let fd: Int32

    init() throws {
        path = NSTemporaryDirectory() + "camo-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every datagram that arrives within `seconds` (or until `until` holds for the ones so far), read on a
    /// Dispatch thread so the cooperative pool stays free for the code under test.
    func receive(seconds: Double, until: @escaping @Sendable ([String]) -> Bool = { _ in false }) async -> [String] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.receiveBlocking(seconds: seconds, until: until)) }
        }
    }

    private func receiveBlocking(seconds: Double, until: ([String]) -> Bool) -> [String] {
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline, !until(messages) {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
        }
        return messages
    }
}
