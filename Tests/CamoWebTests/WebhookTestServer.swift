import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A webhook receiver for tests on 127.0.0.1 (or another loopback address; a free port), plain or HTTPS: it answers
/// the requests in the order they arrive with `replies` (then `fallback`) and records each one.
final class WebhookTestServer: Sendable {
    /// How to answer one request.
    enum Reply: Sendable, Equatable {
        /// A status line, an empty body, and `Retry-After: <seconds>` when given.
        case status(Int, retryAfter: Int? = nil)
        /// Read the request and never answer (the connection stays open until the server stops).
        case hang
        /// Close the connection without answering.
        case close
    }

    /// One request as it arrived.
    struct Request: Sendable {
        var method: HTTPMethod
        var uri: String
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    private struct State {
        var replies: [Reply]
        var fallback: Reply
        var requests: [Request] = []
        var connections = 0
        var closed = 0
        var children: [any Channel] = []
    }

    /// The port it listens on.
    let port: Int
    private let channel: any Channel
    private let box: Box

    private init(channel: any Channel, box: Box) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.box = box
    }

    /// A certificate (PEM, leaf first) and its private key (PEM) to serve HTTPS with.
    struct Identity: Sendable {
        var certificatePEM: String
        var privateKeyPEM: String
    }

    /// Starts a server on `host` answering with `replies`, then `fallback`; over TLS with `identity` when given.
    static func start(
        replies: [Reply] = [], fallback: Reply = .status(200), identity: Identity? = nil, host: String = "127.0.0.1"
    ) async throws -> WebhookTestServer {
        var sslContext: NIOSSLContext?
        if let identity {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8))
            let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
            sslContext = try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        }
        let box = Box(state: State(replies: replies, fallback: fallback))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [sslContext] child in
                box.accepted(child)
                return child.eventLoop.makeCompletedFuture {
                    let sync = child.pipeline.syncOperations
                    if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    try sync.configureHTTPServerPipeline()
                    try sync.addHandler(RequestHandler(box: box))
                }
            }
            .bind(host: host, port: 0).get()
        return WebhookTestServer(channel: channel, box: box)
    }

    /// The requests so far, in order.
    var requests: [Request] { box.state.withLock { $0.requests } }

    /// How many connections it accepted.
    var connections: Int { box.state.withLock { $0.connections } }

    /// How many of them have closed (from either side).
    var closedConnections: Int { box.state.withLock { $0.closed } }

    /// Stops listening and closes every connection (a hanging one too).
    func stop() async {
        try? await channel.close()
        for child in box.state.withLock({ $0.children }) { try? await child.close() }
    }

    /// A port on 127.0.0.1 where nothing listens (bound, learnt, closed).
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 1
        try await channel.close()
        return port
    }

    /// The state, shared with the handlers before the server exists.
    private final class Box: Sendable {
        let state: Mutex<State>

        init(state: State) { self.state = Mutex(state) }

        func accepted(_ channel: any Channel) {
            state.withLock {
                $0.connections += 1
                $0.children.append(channel)
            }
            channel.closeFuture.whenComplete { [self] _ in state.withLock { $0.closed += 1 } }
        }

        func record(_ request: Request) -> Reply {
            state.withLock { state in
                state.requests.append(request)
                let index = state.requests.count - 1
                return index < state.replies.count ? state.replies[index] : state.fallback
            }
        }
    }

    private final class RequestHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let box: Box
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(box: Box) { self.box = box }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(let buffer):
                body += buffer.readableBytesView
            case .end:
                guard let head else { return }
                let reply = box.record(Request(method: head.method, uri: head.uri, headers: head.headers, body: body))
                switch reply {
                case .hang:
                    break
                case .close:
                    context.close(promise: nil)
                case .status(let code, let retryAfter):
                    var headers = HTTPHeaders([("Content-Length", "0"), ("Connection", "close")])
                    if let retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
                    let response = HTTPResponseHead(
                        version: .http1_1, status: HTTPResponseStatus(statusCode: code), headers: headers)
                    context.write(wrapOutboundOut(.head(response)), promise: nil)
                    let channel = context.channel
                    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
                }
            }
        }
    }
}
