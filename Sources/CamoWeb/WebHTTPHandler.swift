import NIOCore
import NIOHTTP1

/// One connection's HTTP/1.1 exchange: gathers each request with a bounded body, hands it to the router off the
/// event loop (on ``WebTaskExecutor``), and writes the answer. Requests on one connection are answered one at a
/// time (the pipelining handler before this one holds the next until the answer is written).
final class WebHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Phase {
        /// Waiting for a request head.
        case idle
        /// Gathering the body of a request within the limit.
        case receiving(HTTPRequestHead, ByteBuffer)
        /// Reading past a body over the limit, to answer 413 at its end (bytes read so far).
        case discarding(HTTPRequestHead, Int)
        /// The router is working on a request, or the answer is being written.
        case responding
    }

    /// Bytes read past the limit before the connection is answered and closed without waiting for the body's end.
    static let discardLimit = 1 << 20

    private let router: WebRouter
    private let maxBodyBytes: Int
    private let clientAddress: String
    private let verdict: GateVerdict
    private var phase = Phase.idle

    init(router: WebRouter, maxBodyBytes: Int, clientAddress: String, verdict: GateVerdict) {
        self.router = router
        self.maxBodyBytes = maxBodyBytes
        self.clientAddress = clientAddress
        self.verdict = verdict
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), phase) {
        case (.head(let head), .idle):
            let declared = head.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
            if declared > maxBodyBytes {
                phase = .discarding(head, 0)
                if declared > Self.discardLimit { answerTooLarge(context: context, head: head) }
            } else {
                phase = .receiving(head, context.channel.allocator.buffer(capacity: declared))
            }
        case (.body(var chunk), .receiving(let head, var body)):
            if body.readableBytes + chunk.readableBytes > maxBodyBytes {
                phase = .discarding(head, body.readableBytes + chunk.readableBytes)
            } else {
                phase = .idle  // drop the buffer's reference so the write below does not copy it
                body.writeBuffer(&chunk)
                phase = .receiving(head, body)
            }
        case (.body(let chunk), .discarding(let head, let count)):
            let total = count + chunk.readableBytes
            phase = .discarding(head, total)
            if total > Self.discardLimit { answerTooLarge(context: context, head: head) }
        case (.end, .receiving(let head, let body)):
            dispatch(context: context, head: head, body: body)
        case (.end, .discarding(let head, _)):
            answerTooLarge(context: context, head: head)
        default:
            // Parts after an early answer (the connection is closing), or out of order: ignore them.
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            if case .responding = phase { return }
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        router.logger.debug("web: connection error", metadata: ["client": "\(clientAddress)", "error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Answering

    private func dispatch(context: ChannelHandlerContext, head: HTTPRequestHead, body: ByteBuffer) {
        phase = .responding
        if let overLimit = verdict.overLimit {
            router.count(503)
            write(WebResponse.error(503, overLimit), context: context, head: head, keepAlive: false)
            return
        }
        let request = WebRequest(
            method: head.method.rawValue,
            path: head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "/",
            headers: head.headers.map { ($0.name, $0.value) },
            body: Array(body.readableBytesView),
            clientAddress: clientAddress)
        let router = self.router
        let promise = context.eventLoop.makePromise(of: WebResponse.self)
        Task(executorPreference: WebTaskExecutor.shared) { promise.succeed(await router.handle(request)) }
        promise.futureResult.assumeIsolated().whenSuccess { response in
            self.write(response, context: context, head: head, keepAlive: head.isKeepAlive)
        }
    }

    private func answerTooLarge(context: ChannelHandlerContext, head: HTTPRequestHead) {
        phase = .responding
        router.count(413)
        let response = WebResponse.error(
            413, "the body is larger than \(maxBodyBytes) bytes, the most this server takes; send a smaller one")
        write(response, context: context, head: head, keepAlive: false)
    }

    private func write(_ response: WebResponse, context: ChannelHandlerContext, head: HTTPRequestHead, keepAlive: Bool) {
        if let stream = response.stream {
            writeStream(response, stream, context: context, head: head)
            return
        }
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: "\(response.body.count)")
        headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        if !headers.contains(name: "Cache-Control") { headers.add(name: "Cache-Control", value: "no-store") }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let responseHead = HTTPResponseHead(
            version: head.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if head.method != .HEAD && !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if keepAlive {
            phase = .idle
        } else {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// A response whose body goes on (server-sent events): the head and the first bytes, then each piece of
    /// `stream` as it comes (chunked), and the end when the stream ends; the connection closes then. A client
    /// that goes away cancels the reading.
    private func writeStream(_ response: WebResponse, _ stream: AsyncStream<[UInt8]>, context: ChannelHandlerContext, head: HTTPRequestHead) {
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        headers.replaceOrAdd(name: "Cache-Control", value: "no-store")
        headers.replaceOrAdd(name: "Connection", value: "close")
        let responseHead = HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        context.flush()
        let channel = context.channel
        let reader = Task(executorPreference: WebTaskExecutor.shared) {
            for await piece in stream {
                guard channel.isActive else { break }
                // Waits for each piece to be written, so a slow client holds back the reading (a file is not read ahead
                // into memory).
                try? await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(channel.allocator.buffer(bytes: piece)))).get()
            }
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
        channel.closeFuture.whenComplete { _ in reader.cancel() }
    }
}
