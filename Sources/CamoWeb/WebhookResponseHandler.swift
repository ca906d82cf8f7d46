import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last handler of one webhook request's pipeline: completes the promise with the first final response head
/// (status and `Retry-After`), or with a ``WebhookError`` when the connection fails or closes before an answer.
/// The body is not read: with `Connection: close` the poster closes the connection once the promise completes.
final class WebhookResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<WebhookPoster.Response>
    private let url: String

    init(promise: EventLoopPromise<WebhookPoster.Response>, url: String) {
        self.promise = promise
        self.url = url
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data), head.status.code >= 200 else { return }
        promise.succeed(
            WebhookPoster.Response(status: Int(head.status.code), retryAfter: Self.retryAfter(head.headers)))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(Self.describe(error, url: url))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(WebhookError.badResponse(url: url, reason: "the connection closed before an answer came"))
        context.fireChannelInactive()
    }

    /// `Retry-After` in whole seconds (an HTTP date is not honoured: nil).
    static func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        guard let text = headers.first(name: "Retry-After"), let seconds = Int(text.trimmingASCIISpaces), seconds >= 0
        else { return nil }
        return .seconds(seconds)
    }

    /// Any error of connecting or of the connection, as the webhook's sentence.
    static func describe(_ error: any Error, url: String) -> WebhookError {
        switch error {
        case let error as WebhookError:
            return error
        case ChannelError.connectTimeout(let amount):
            return .connectTimeout(url: url, seconds: Double(amount.nanoseconds) / 1e9)
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return describe(first.error, url: url) }
            if error.dnsAError != nil || error.dnsAAAAError != nil {
                return .connectionFailed(url: url, reason: "the host name \(error.host) could not be resolved")
            }
            return .connectionFailed(url: url, reason: "no address to connect to for \(error.host)")
        case let error as IOError:
            return .connectionFailed(url: url, reason: String(cString: strerror(error.errnoCode)).lowercased())
        case let error as NIOSSLError:
            // BoringSSL says only CERTIFICATE_VERIFY_FAILED for an unknown issuer and for a wrong name alike.
            let text = "\(error)"
            return .tls(
                url: url,
                reason: text.contains("CERTIFICATE_VERIFY_FAILED")
                    ? "its certificate is not trusted by this machine or does not name the host" : text)
        case let error as NIOSSLExtraError:
            return .tls(url: url, reason: "\(error)")
        case let error as HTTPParserError:
            return .badResponse(url: url, reason: "\(error)")
        default:
            return .connectionFailed(url: url, reason: "\(error)")
        }
    }
}

extension String {
    fileprivate var trimmingASCIISpaces: Substring {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
