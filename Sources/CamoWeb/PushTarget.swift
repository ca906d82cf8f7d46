import CamoMedia
import CamoStorage
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Where a push transport sends recordings, with the webhook's bounded queue and retries (``WebhookQueue``): an
/// https URL, to which each file is PUT as `URL/NAME` (CMAF ingest's way of sending a file into a collection), or a
/// local directory, into which each file is copied (``AtomicFile``: written beside, synced, then renamed, so a reader
/// never sees half a file).
///
/// ``push(path:name:contentType:)`` never blocks. The file is read when it is sent, so the queue holds names, not
/// bytes; one that is gone by then (removed to make room) is given up and counted failed. HTTPS checks the server's
/// certificate against the system's roots plus a given CA; a token goes as `Authorization: Bearer` and is never
/// logged. Plain http is refused: recordings are private.
public final class PushTarget: Sendable {
    /// The queue's policy and the timeouts.
    public struct Options: Sendable {
        /// Files that may wait (default 64), attempts (default 10,000: a receiver down for hours loses nothing
        /// within the bound), backoff 1 s doubling up to 30 s.
        public var queue = WebhookQueue.Policy(capacity: 64, maxAttempts: 10_000, baseDelay: .seconds(1), maxDelay: .seconds(30))
        /// Connect 5 s; the upload of one file and its answer 120 s.
        public var transport = WebhookPoster.Options(connectTimeout: .seconds(5), requestTimeout: .seconds(120))
        /// Tests pass `{ $0 }`.
        public var jitter: @Sendable (Duration) -> Duration = WebhookQueue.randomJitter
        /// The defaults.
        public init() {}
    }

    /// What the target is.
    public enum Destination: Sendable, Hashable, CustomStringConvertible {
        /// Files are PUT to the URL.
        case https(WebhookURL)
        /// Files are copied into the directory.
        case directory(String)

        public var description: String {
            switch self {
            case .https(let url): url.description
            case .directory(let path): path
            }
        }
    }

    /// Where files go.
    public let destination: Destination
    private let loop: DeliveryLoop

    /// A target for `url` (`https://…` or an absolute directory path).
    /// - Throws: ``WebhookError/invalidURL(_:)`` for anything else (http:// included), ``WebhookError/invalidCertificate(_:)``
    ///   for an unreadable CA.
    public init(
        url: String, trustedCAPEM: String? = nil, token: String? = nil, clock: any MonotonicClock, label: String, logger: Logger,
        options: Options = Options()
    ) throws(WebhookError) {
        let destination = try Self.destination(url)
        self.destination = destination
        let queue = WebhookQueue(
            policy: options.queue, labels: WebhookQueue.Labels(receiver: "The push transport \(destination)", setting: "its url", item: "recording"),
            jitter: options.jitter)
        let send: @Sendable (WebhookQueue.Delivery) async -> WebhookQueue.AttemptResult
        switch destination {
        case .directory(let directory):
            send = { delivery in Self.copy(delivery, into: directory) }
        case .https(let parsed):
            var transport = options.transport
            transport.extraTrustedCertificatePEM = trustedCAPEM
            let poster = try WebhookPoster(url: parsed, options: transport)
            let headers = token.map { [(name: "Authorization", value: "Bearer \($0)")] } ?? []
            send = { delivery in
                guard let item = Item(delivery.body) else { return .error(.sourceGone("a queued recording could not be read back")) }
                guard let data = FileManager.default.contents(atPath: item.path) else {
                    return .error(.sourceGone("\(item.name) was removed (to make room?) before it could be pushed"))
                }
                do throws(WebhookError) {
                    let response = try await poster.send(method: .PUT, name: item.name, contentType: item.contentType, body: Array(data), headers: headers)
                    return .status(response.status, retryAfter: response.retryAfter)
                } catch {
                    return .error(error)
                }
            }
        }
        loop = DeliveryLoop(queue: queue, clock: clock, label: label, logger: logger, send: send)
    }

    /// Queues the file at `path` to be sent as `name`; the oldest waiting is dropped (and counted) when the queue is
    /// full.
    public func push(path: String, name: String, contentType: String) {
        loop.enqueue(Item(path: path, name: name, contentType: contentType).encoded, id: name)
    }

    /// Sent, retried, failed, dropped and waiting, with the last error.
    public var stats: WebhookStats { loop.stats }

    /// Stops; what waits is dropped and counted.
    public func stop() async {
        await loop.stop()
    }

    /// What `text` names: an https URL or an absolute directory; why not otherwise.
    public static func destination(_ text: String) throws(WebhookError) -> Destination {
        if text.hasPrefix("/") {
            guard !text.contains("\0"), text.count > 1 else { throw .invalidURL("\(text) is not a usable directory path") }
            return .directory(text.count > 1 && text.hasSuffix("/") ? String(text.dropLast()) : text)
        }
        guard text.lowercased().hasPrefix("https://") else {
            throw .invalidURL(
                "A push transport's url must be https:// (recordings are private; plain http would send them in the clear) or an absolute directory path, not \(text.split(separator: "/").first.map(String.init) ?? text)")
        }
        return .https(try WebhookURL(text))
    }

    /// One queued file.
    struct Item: Codable {
        var path: String
        var name: String
        var contentType: String

        init(path: String, name: String, contentType: String) {
            self.path = path
            self.name = name
            self.contentType = contentType
        }

        init?(_ bytes: [UInt8]) {
            guard let item = try? JSONDecoder().decode(Item.self, from: Data(bytes)) else { return nil }
            self = item
        }

        var encoded: [UInt8] { (try? JSONEncoder().encode(self)).map(Array.init) ?? [] }
    }

    /// Copies the file into `directory` with ``AtomicFile`` (written beside, synced, renamed, the directory synced).
    private static func copy(_ delivery: WebhookQueue.Delivery, into directory: String) -> WebhookQueue.AttemptResult {
        guard let item = Item(delivery.body) else { return .error(.sourceGone("a queued recording could not be read back")) }
        guard let data = FileManager.default.contents(atPath: item.path) else {
            return .error(.sourceGone("\(item.name) was removed (to make room?) before it could be pushed"))
        }
        do {
            try AtomicFile.write(Array(data), to: directory + "/" + item.name, permissions: 0o600)
        } catch {
            return .error(.localWrite(path: directory, reason: "\(error)"))
        }
        return .status(201, retryAfter: nil)
    }
}
