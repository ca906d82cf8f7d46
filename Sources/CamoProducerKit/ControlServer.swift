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

    /// Opens the socket at `path` and answers requests with `handler`. A stale socket file is replaced, so the
    /// caller must hold the state directory's lock (``StateDirectoryLock``) to be sure no live agent owns it.
    public static func start(path: String, logger: Logger, handler: @escaping Handler) async throws -> ControlServer {
        // Owner-only from the moment the socket file exists, not only after the chmod below.
        let previousMask = umask(0o077)
        defer { umask(previousMask) }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ControlConnectionHandler(handler: handler, logger: logger))
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .get()
        guard chmod(path, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            try? await channel.close()
            throw ControlError.cannotSecure(path: path, reason: reason)
        }
        return ControlServer(channel: channel, path: path)
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
    case noAgent(path: String, reason: String)
    case badResponse(String)
    case refused(String)

    public var description: String {
        switch self {
        case .cannotSecure(let path, let reason):
            return "Cannot make the control socket \(path) owner-only: \(reason)."
        case .noAgent(let path, let reason):
            return "No agent answers on \(path) (\(reason)). Start one with `camo-agent run`, or pass the same --state-dir it uses."
        case .badResponse(let text):
            return "The agent sent an answer that could not be read: \(text)"
        case .refused(let text):
            return "The agent refused: \(text)"
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
        let response: ControlResponse
        do {
            let request = try ControlResponse.decoder.decode(ControlRequest.self, from: Data(line))
            response = handler(request)
        } catch {
            response = ControlResponse(ok: false, error: "could not read the request: \(error)")
        }
        reply(response, context: context)
    }

    private func reply(_ response: ControlResponse, context: ChannelHandlerContext) {
        replied = true
        var bytes = (try? ControlResponse.encoder.encode(response)).map(Array.init) ?? Array(#"{"ok":false}"#.utf8)
        bytes.append(UInt8(ascii: "\n"))
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(bytes: bytes))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
