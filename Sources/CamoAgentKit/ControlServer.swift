import CamoProducerKit
import CamoSystem
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The agent's local control socket: a Unix domain socket, owner-only (0600), one JSON request per line and
/// one JSON response per line. `camo-agent status` and the other subcommands talk to the running agent here.
public final class ControlServer: Sendable {
    /// Answers one request (called on an event-loop thread; keep it quick).
    public typealias Handler = @Sendable (ControlRequest) -> ControlResponse

    private let channel: Channel
    /// The socket's path.
    public let path: String

    private init(channel: Channel, path: String) {
        self.channel = channel
        self.path = path
    }

    /// The longest path a Unix socket address holds (108 bytes with the NUL).
    public static let maxPathLength = 107

    /// Opens the socket at `path` and answers requests with `handler`. A stale socket file is replaced, so the
    /// caller must hold the state directory's lock (``StateDirectoryLock``) to be sure no live agent owns it.
    ///
    /// The socket's directory is made owner-only (0700) when it does not exist, and must belong to this user:
    /// that, not a process-wide umask, keeps others out before the socket itself is made 0600.
    /// - Throws: ``ControlError/cannotOpen(path:reason:remedy:)`` saying what went wrong and what to do.
    public static func start(path: String, logger: Logger, handler: @escaping Handler) async throws -> ControlServer {
        guard path.utf8.count <= maxPathLength else {
            throw ControlError.cannotOpen(
                path: path, reason: "the path is \(path.utf8.count) bytes, and a Unix socket's is at most \(maxPathLength)",
                remedy: "Pass a shorter --runtime-dir.")
        }
        let directory = (path as NSString).deletingLastPathComponent
        try prepareDirectory(directory)
        let channel: Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ControlConnectionHandler(handler: handler, logger: logger))
                    }
                }
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
                .get()
        } catch {
            throw ControlError.cannotOpen(
                path: path, reason: "\(error)",
                remedy: "The runtime directory must be on a local file system that has Unix sockets (not a shared 9p or SMB folder); pass another with --runtime-dir.")
        }
        guard chmod(path, 0o600) == 0 else {
            let reason = SystemCallError.message(errno)
            try? await channel.close()
            throw ControlError.cannotSecure(path: path, reason: reason)
        }
        return ControlServer(channel: channel, path: path)
    }

    /// Makes `directory` (0700) when missing; refuses one that another user owns or that is open to others (group or
    /// other bits), so nobody else can reach the socket in the moment before it is made 0600.
    private static func prepareDirectory(_ directory: String) throws {
        var info = stat()
        if stat(directory, &info) != 0 {
            guard errno == ENOENT else {
                throw ControlError.cannotOpen(path: directory, reason: SystemCallError.message(errno), remedy: "Pass another --runtime-dir.")
            }
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ControlError.cannotOpen(
                    path: directory, reason: "the runtime directory cannot be made: \(error.localizedDescription)",
                    remedy: "Create it for this user, or pass another --runtime-dir.")
            }
            return
        }
        guard info.st_uid == getuid() else {
            throw ControlError.cannotOpen(
                path: directory, reason: "the runtime directory belongs to user \(info.st_uid), not this user (\(getuid()))",
                remedy: "Pass a runtime directory of this user's with --runtime-dir.")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw ControlError.cannotOpen(
                path: directory, reason: "the runtime directory is open to others (mode \(String(info.st_mode & 0o777, radix: 8)))",
                remedy: "Make it owner-only (chmod 700), or pass another --runtime-dir.")
        }
    }

    /// Closes the socket and removes its file.
    public func stop() async {
        try? await channel.close()
        unlink(path)
    }
}

/// Errors of the control socket, on both ends.
public enum ControlError: Error, CustomStringConvertible {
    case cannotSecure(path: String, reason: String)
    /// The socket could not be opened: where, why, and what to do.
    case cannotOpen(path: String, reason: String, remedy: String)
    case noAgent(path: String, reason: String)
    case badResponse(String)
    case refused(String)
    /// The agent no longer knows the pairing attempt being followed.
    case pairingLost

    public var description: String {
        switch self {
        case .cannotSecure(let path, let reason):
            return "Cannot make the control socket \(path) owner-only: \(reason)."
        case .cannotOpen(let path, let reason, let remedy):
            return "Cannot open the control socket \(path): \(reason). \(remedy)"
        case .noAgent(let path, let reason):
            return "No agent answers on \(path) (\(reason)). Start one with `camo-agent run`, or pass the same --state-dir (and --runtime-dir) it uses."
        case .badResponse(let text):
            return "The agent sent an answer that could not be read: \(text)"
        case .refused(let text):
            return "The agent refused: \(text)"
        case .pairingLost:
            return "The agent lost track of this pairing (was it restarted?)."
        }
    }
}

/// Reads one line, answers it, closes.
private final class ControlConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let handler: ControlServer.Handler
    private let logger: Logger
    private var pending: [UInt8] = []
    private var replied = false

    init(handler: @escaping ControlServer.Handler, logger: Logger) {
        self.handler = handler
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !replied else { return }
        var buffer = unwrapInboundIn(data)
        // Safe: readBytes(length: readableBytes) always succeeds.
        pending += buffer.readBytes(length: buffer.readableBytes)!
        guard let newline = pending.firstIndex(of: UInt8(ascii: "\n")) else {
            if pending.count > 64 * 1024 { reply(ControlResponse(ok: false, error: "request too long"), context: context) }
            return
        }
        let line = Array(pending[..<newline])
        let request: ControlRequest
        do {
            request = try ControlResponse.decoder.decode(ControlRequest.self, from: Data(line))
        } catch {
            reply(ControlResponse(ok: false, error: "could not read the request: \(error)"), context: context)
            return
        }
        // The answer may wait (the settings read the camera's controls through its device node): off the event loop.
        replied = true
        let handler = self.handler
        let channel = context.channel
        DispatchQueue.global().async {
            let response = handler(request)
            channel.eventLoop.execute { Self.write(response, to: channel) }
        }
    }

    private func reply(_ response: ControlResponse, context: ChannelHandlerContext) {
        replied = true
        Self.write(response, to: context.channel)
    }

    private static func write(_ response: ControlResponse, to channel: any Channel) {
        var bytes = (try? ControlResponse.encoder.encode(response)).map(Array.init) ?? Array(#"{"ok":false}"#.utf8)
        bytes.append(UInt8(ascii: "\n"))
        channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
