import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One webhook request: an HTTP/1.1 POST of a JSON body with the signature headers, over a new connection
/// (`Connection: close`), plain or TLS.
///
/// HTTPS checks the server's certificate against the system's trust roots (plus ``Options/extraTrustedCertificatePEM``)
/// and its host name, and sends the host name as SNI (not for an IP address, whose certificate must name the
/// address). The connect timeout bounds making the TCP connection; the request timeout then bounds the TLS
/// handshake, sending, and waiting for the status line, so a server that accepts and never answers ends as
/// ``WebhookError/requestTimeout(url:seconds:)`` rather than a hang. Cancelling the calling task closes the
/// connection and throws ``WebhookError/cancelled``.
public struct WebhookPoster: Sendable {
    /// Timeouts and extra trust.
    public struct Options: Sendable, Equatable {
        /// The longest wait for the TCP connection; default 5 s.
        public var connectTimeout: Duration
        /// The longest wait, once connected, for the answer's status line; default 5 s.
        public var requestTimeout: Duration
        /// One or more CA certificates (PEM) to trust besides the system's, for a receiver with a private CA or a
        /// self-signed certificate; default none.
        ///
        /// A self-signed certificate is trusted as itself only when it may sign certificates (no key usage
        /// extension, or one with keyCertSign, as `openssl req -x509` makes them): BoringSSL does not take a
        /// certificate limited to digitalSignature (such as ``WebCertificate``'s) as a trust anchor.
        public var extraTrustedCertificatePEM: String?

        /// Options; the defaults are the agent's.
        public init(
            connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(5),
            extraTrustedCertificatePEM: String? = nil
        ) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.extraTrustedCertificatePEM = extraTrustedCertificatePEM
        }
    }

    /// The receiver's answer.
    public struct Response: Sendable, Equatable {
        /// The HTTP status code.
        public var status: Int
        /// Its `Retry-After` in seconds, if it sent one.
        public var retryAfter: Duration?

        /// A response with `status` and `retryAfter`.
        public init(status: Int, retryAfter: Duration? = nil) {
            self.status = status
            self.retryAfter = retryAfter
        }
    }

    /// Where it posts.
    public let url: WebhookURL
    /// The options it was made with.
    public let options: Options
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?

    /// A poster for `url`, running its connections on `eventLoopGroup` (default NIO's shared singleton group).
    /// Throws ``WebhookError/invalidCertificate(_:)`` when the extra CA PEM cannot be read.
    public init(url: WebhookURL, options: Options = Options(), eventLoopGroup: (any EventLoopGroup)? = nil)
        throws(WebhookError)
    {
        self.url = url
        self.options = options
        self.group = eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        guard url.scheme == .https else {
            sslContext = nil
            return
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let pem = options.extraTrustedCertificatePEM {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            } catch {
                throw .invalidCertificate(
                    "The extra webhook CA certificate is not readable PEM (\(error)); give the CA's certificate as "
                        + "PEM text starting with -----BEGIN CERTIFICATE-----")
            }
            guard !certificates.isEmpty else {
                throw .invalidCertificate(
                    "The extra webhook CA certificate holds no certificate; give PEM text starting with "
                        + "-----BEGIN CERTIFICATE-----")
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        do {
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw .invalidCertificate("Cannot set up TLS for the webhook \(url): \(error)")
        }
    }

    /// POSTs `body` with `Content-Type: application/json` and `headers` (the signature headers); returns the
    /// status, or throws a ``WebhookError`` that says what went wrong.
    public func post(body: [UInt8], headers extra: [(name: String, value: String)]) async throws(WebhookError)
        -> Response
    {
        try await send(method: .POST, name: nil, contentType: "application/json", body: body, headers: extra)
    }

    /// Sends `body` with `method` to the URL, or with `name` to the URL's path plus `/name` (a PUT of a file into a
    /// collection: a recording to a push transport), with `contentType` and `headers`; returns the status, or throws a
    /// ``WebhookError`` that says what went wrong.
    public func send(
        method: HTTPMethod, name: String?, contentType: String, body: [UInt8], headers extra: [(name: String, value: String)]
    ) async throws(WebhookError) -> Response {
        let loop = group.next()
        let promise = loop.makePromise(of: Response.self)
        let urlText = url.description
        let sslContext = self.sslContext
        let serverName = url.scheme == .https && !url.hostIsIPAddress ? url.host : nil
        let requestTimeout = Self.timeAmount(options.requestTimeout)
        let requestSeconds = Self.seconds(options.requestTimeout)

        var headers = HTTPHeaders()
        headers.add(name: "Host", value: url.hostHeader)
        headers.add(name: "User-Agent", value: "camo-agent")
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        for (name, value) in extra { headers.add(name: name, value: value) }
        var uri = url.pathAndQuery
        if let name {
            let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
            uri = (path.hasSuffix("/") ? path : path + "/") + name
        }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)

        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(Self.timeAmount(options.connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(WebhookResponseHandler(promise: promise, url: urlText))
                }
            }
        bootstrap.connect(host: url.host, port: url.port).whenComplete { result in
            switch result {
            case .failure(let error):
                promise.fail(WebhookResponseHandler.describe(error, url: urlText))
            case .success(let channel):
                let timeout = channel.eventLoop.scheduleTask(in: requestTimeout) {
                    promise.fail(WebhookError.requestTimeout(url: urlText, seconds: requestSeconds))
                }
                // Whatever ends the request (answer, error, timeout, cancellation) closes the connection.
                promise.futureResult.whenComplete { _ in
                    timeout.cancel()
                    channel.close(promise: nil)
                }
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(WebhookError.cancelled)
            }
        } catch {
            throw WebhookResponseHandler.describe(error, url: urlText)
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(seconds(duration) * 1e9))
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return max(0, Double(seconds) + Double(attoseconds) / 1e18)
    }
}
