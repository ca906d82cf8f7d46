import CamoMedia
import CamoTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import CamoWeb

/// The poster and the service against a real receiver on 127.0.0.1 (``WebhookTestServer``), plain and HTTPS.
/// Backoff is 10 ms (or on a manual clock); waits for an outcome are bounded only to turn a hang into a failure.
@Suite("Webhook delivery", .serialized)
struct WebhookDeliveryTests {
    static let secret = "whsec_delivery_test"
    static let unixTime: Int64 = 1_700_000_000
    static let body = Array(#"{"event":"motion","zone":"door","at":"2026-01-01T00:00:00Z"}"#.utf8)

    static func options(
        capacity: Int = 256, maxAttempts: Int = 8, base: Duration = .milliseconds(10), requestTimeout: Duration = .seconds(5),
        trusting pem: String? = nil
    ) -> EventWebhook.Options {
        EventWebhook.Options(
            queue: .init(capacity: capacity, maxAttempts: maxAttempts, baseDelay: base, maxDelay: base * 10),
            transport: .init(connectTimeout: .seconds(5), requestTimeout: requestTimeout, extraTrustedCertificatePEM: pem),
            jitter: { $0 }, unixTime: { unixTime })
    }

    static func logger(_ capture: WebhookLogCapture? = nil) -> Logger {
        Logger(label: "camo-webhook-test") { _ -> any LogHandler in
            if let capture { return capture }
            var handler = StreamLogHandler.standardError(label: "camo-webhook-test")
            handler.logLevel = .warning
            return handler
        }
    }

    /// Polls `condition` every 5 ms; gives up after 20 s so that a hang fails instead of stalling the suite.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<4_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    // MARK: (a) 200

    @Test func twoHundredIsDeliveredOnceWithABodyAndSignatureTheReceiverVerifies() async throws {
        let server = try await WebhookTestServer.start()
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/api/webhook/camo?source=test", secret: Self.secret,
            logger: Self.logger(), options: Self.options())
        webhook.post(Self.body, id: "evt-1")
        #expect(await Self.eventually { webhook.stats.delivered == 1 })
        await webhook.stop()
        await server.stop()

        let requests = server.requests
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request.method == .POST)
        #expect(request.uri == "/api/webhook/camo?source=test")
        #expect(request.body == Self.body)
        #expect(request.headers["Content-Type"] == ["application/json"])
        #expect(request.headers["Content-Length"] == [String(Self.body.count)])
        #expect(request.headers["Connection"] == ["close"])
        #expect(request.headers["Host"] == ["127.0.0.1:\(server.port)"])
        #expect(request.headers["X-Camo-Event-Id"] == ["evt-1"])
        let signature = try #require(request.headers.first(name: "X-Camo-Signature"))
        #expect(signature.hasPrefix("t=1700000000,v1="))
        try WebhookSignature.verify(header: signature, body: request.body, secret: Self.secret, now: Self.unixTime)
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: signature, body: request.body, secret: "wrong", now: Self.unixTime)
        }
        var expected = WebhookStats()
        expected.enqueued = 1
        expected.delivered = 1
        #expect(webhook.stats == expected)
    }

    // MARK: (b) 500, 500, 200

    @Test func twoFiveHundredsThenTwoHundredIsDeliveredWithTwoRetries() async throws {
        let server = try await WebhookTestServer.start(replies: [.status(500), .status(500)], fallback: .status(200))
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/hook", secret: Self.secret, logger: Self.logger(), options: Self.options())
        webhook.post(Self.body, id: "evt-2")
        #expect(await Self.eventually { webhook.stats.delivered == 1 })
        await webhook.stop()
        await server.stop()

        let stats = webhook.stats
        #expect(stats.retried == 2)
        #expect(stats.failed == 0)
        #expect(stats.dropped == 0)
        #expect(stats.lastError?.contains("HTTP 500") == true)
        let requests = server.requests
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.headers["X-Camo-Event-Id"] == ["evt-2"] && $0.body == Self.body })
    }

    @Test func backoffAndRetryAfterAreTimedOnTheInjectedClock() async throws {
        let server = try await WebhookTestServer.start(
            replies: [.status(503), .status(429, retryAfter: 7)], fallback: .status(200))
        let start: UInt64 = 1_000 * 1_000_000_000
        let clock = ManualClock(now: start)
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/", secret: Self.secret, clock: clock, logger: Self.logger(),
            options: Self.options(base: .seconds(1)))
        webhook.post(Self.body, id: "evt-clock")
        // 503: the first backoff, 1 s.
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == start + 1_000_000_000)
        #expect(server.requests.count == 1)
        #expect(webhook.stats.retried == 1)
        clock.advance(by: 1_000_000_000)
        // 429 with Retry-After: 7: 7 s instead of the second backoff (2 s).
        #expect(await Self.eventually { webhook.stats.retried == 2 })
        await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == start + 8_000_000_000)
        #expect(server.requests.count == 2)
        clock.advance(to: start + 8_000_000_000)
        #expect(await Self.eventually { webhook.stats.delivered == 1 })
        #expect(server.requests.count == 3)
        await webhook.stop()
        await server.stop()
    }

    // MARK: (c) a receiver that never answers

    @Test func postNeverWaitsForAReceiverThatNeverAnswers() async throws {
        let server = try await WebhookTestServer.start(fallback: .hang)
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/", secret: Self.secret, logger: Self.logger(),
            options: Self.options(requestTimeout: .seconds(600)))
        webhook.post(Self.body, id: "first")
        #expect(await Self.eventually { server.requests.count == 1 })
        // The first request hangs for up to 600 s; these calls return anyway, counted, none sent.
        for index in 0..<50 { webhook.post(Self.body, id: "next-\(index)") }
        let stats = webhook.stats
        #expect(stats.enqueued == 51)
        #expect(stats.pending == 50)
        #expect(stats.inFlight)
        #expect(stats.delivered + stats.retried + stats.failed == 0)
        #expect(server.requests.count == 1)
        // stop() cancels the hanging request: its connection closes and everything unsent is counted dropped.
        await webhook.stop()
        #expect(await Self.eventually { server.closedConnections == 1 })
        #expect(webhook.stats.dropped == 51)
        #expect(webhook.stats.pending == 0)
        #expect(!webhook.stats.inFlight)
        await server.stop()
    }

    @Test func aReceiverThatNeverAnswersIsATimeoutAndACountedRetry() async throws {
        let server = try await WebhookTestServer.start(fallback: .hang)
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/", secret: Self.secret, logger: Self.logger(),
            options: Self.options(maxAttempts: 2, requestTimeout: .milliseconds(200)))
        webhook.post(Self.body, id: "stuck")
        #expect(await Self.eventually { webhook.stats.failed == 1 })
        await webhook.stop()
        await server.stop()
        let stats = webhook.stats
        #expect(stats.retried == 1)
        #expect(stats.delivered == 0)
        #expect(server.requests.count == 2)
        let lastError = try #require(stats.lastError)
        #expect(lastError.contains("Gave up on webhook event stuck after 2 attempts"))
        #expect(lastError.contains("accepted the connection but did not answer within 0.2 s"))
    }

    // MARK: (d) 404

    @Test func fourOhFourIsAPermanentFailureWithoutRetry() async throws {
        let server = try await WebhookTestServer.start(fallback: .status(404))
        let capture = WebhookLogCapture()
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/wrong", secret: Self.secret, logger: Self.logger(capture),
            options: Self.options())
        webhook.post(Self.body, id: "evt-404")
        #expect(await Self.eventually { webhook.stats.failed == 1 })
        let stats = webhook.stats
        #expect(stats.retried == 0)
        #expect(stats.delivered == 0)
        #expect(stats.pending == 0)
        #expect(!stats.inFlight)
        #expect(stats.lastError?.contains("HTTP 404") == true)
        #expect(server.requests.count == 1)
        #expect(capture.entries.contains { $0.level == .info && $0.text.contains("gave up") && $0.text.contains("HTTP 404") })
        #expect(capture.entries.contains { $0.level == .debug && $0.text.contains("webhook") && $0.text.contains("sending") })
        await webhook.stop()
        await server.stop()
    }

    // MARK: (e) connection refused

    @Test func aRefusedConnectionIsRetriedThenGivenUp() async throws {
        let port = try await WebhookTestServer.closedPort()
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(port)/", secret: Self.secret, logger: Self.logger(), options: Self.options(maxAttempts: 3))
        webhook.post(Self.body, id: "evt-refused")
        #expect(await Self.eventually { webhook.stats.failed == 1 })
        await webhook.stop()
        let stats = webhook.stats
        #expect(stats.retried == 2)
        #expect(stats.delivered == 0)
        let lastError = try #require(stats.lastError)
        #expect(lastError.contains("after 3 attempts"))
        #expect(lastError.contains("could not be reached: connection refused"))
    }

    // MARK: (f) overflow

    @Test func aFullQueueDropsTheOldestAndCountsIt() async throws {
        let server = try await WebhookTestServer.start(fallback: .hang)
        let webhook = try EventWebhook(
            url: "http://127.0.0.1:\(server.port)/", secret: Self.secret, logger: Self.logger(),
            options: Self.options(capacity: 2, requestTimeout: .seconds(600)))
        webhook.post(Self.body, id: "e0")
        #expect(await Self.eventually { server.requests.count == 1 })
        for index in 1...4 { webhook.post(Self.body, id: "e\(index)") }
        var stats = webhook.stats
        #expect(stats.enqueued == 5)
        #expect(stats.pending == 2)
        #expect(stats.inFlight)
        #expect(stats.dropped == 2)
        await webhook.stop()
        stats = webhook.stats
        #expect(stats.dropped == 5)
        webhook.post(Self.body, id: "after-stop")
        #expect(webhook.stats.dropped == 6)
        #expect(webhook.stats.enqueued == 5)
        #expect(server.requests.map { $0.headers["X-Camo-Event-Id"] } == [["e0"]])
        await server.stop()
    }

    // MARK: (g) HTTPS

    /// The agent's own kind of self-signed certificate (``WebCertificate``) on the receiver, as a server
    /// identity for the test server.
    static func webCertificateIdentity() throws -> WebhookTestServer.Identity {
        let certificate = try WebCertificate.loadOrCreate(directory: try temporaryStateDirectory(), hostnames: [])
        return .init(certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
    }

    /// Runs Debian's openssl in `directory` (its messages go to the failure, if it fails).
    static func openssl(_ arguments: [String], in directory: URL) async throws {
        let script = "cd \"$0\" && exec openssl \"$@\" 2>&1"
        let result = try await Curl.run("/bin/sh", ["-c", script, directory.path] + arguments)
        try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.output)")
    }

    /// A certificate and key written by openssl in `directory`.
    static func identity(_ name: String, in directory: URL) throws -> WebhookTestServer.Identity {
        WebhookTestServer.Identity(
            certificatePEM: try String(contentsOf: directory.appendingPathComponent("\(name).pem"), encoding: .utf8),
            privateKeyPEM: try String(contentsOf: directory.appendingPathComponent("\(name).key"), encoding: .utf8))
    }

    /// A self-signed certificate for localhost and 127.0.0.1 made the way receivers' guides say
    /// (`openssl req -x509`), and a private CA with a leaf it signed for the same names.
    static func opensslIdentities() async throws
        -> (selfSigned: WebhookTestServer.Identity, ca: WebhookTestServer.Identity, leaf: WebhookTestServer.Identity)
    {
        let directory = try temporaryStateDirectory()
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let selfSigned = ["req", "-x509", "-days", "2"] + key
        let names = "subjectAltName=DNS:localhost,IP:127.0.0.1"
        try await openssl(
            selfSigned + ["-keyout", "self.key", "-out", "self.pem", "-subj", "/CN=receiver", "-addext", names],
            in: directory)
        try await openssl(
            selfSigned + ["-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=camo-test-ca"], in: directory)
        try await openssl(["req"] + key + ["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"], in: directory)
        try names.write(to: directory.appendingPathComponent("leaf.ext"), atomically: true, encoding: .utf8)
        try await openssl(
            [
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "2", "-days", "2",
                "-extfile", "leaf.ext", "-out", "leaf.pem",
            ], in: directory)
        return (
            try identity("self", in: directory), try identity("ca", in: directory), try identity("leaf", in: directory)
        )
    }

    @Test func httpsToAnUntrustedSelfSignedCertificateIsAClearTLSError() async throws {
        let server = try await WebhookTestServer.start(identity: try Self.webCertificateIdentity())
        let webhook = try EventWebhook(
            url: "https://localhost:\(server.port)/", secret: Self.secret, logger: Self.logger(),
            options: Self.options(maxAttempts: 2))
        webhook.post(Self.body, id: "evt-untrusted")
        #expect(await Self.eventually { webhook.stats.failed == 1 })
        await webhook.stop()
        await server.stop()
        #expect(webhook.stats.retried == 1)
        let lastError = try #require(webhook.stats.lastError)
        #expect(lastError.contains("The TLS handshake with https://localhost:\(server.port)/ failed"))
        #expect(lastError.contains("not trusted"))
        #expect(server.requests.isEmpty)
    }

    @Test func httpsWithTheExtraTrustedCertificate() async throws {
        let identities = try await Self.opensslIdentities()
        // A self-signed receiver certificate, trusted as itself; a leaf of a private CA, trusted through the CA.
        let cases: [(WebhookTestServer.Identity, String)] = [
            (identities.selfSigned, identities.selfSigned.certificatePEM), (identities.leaf, identities.ca.certificatePEM),
        ]
        for (identity, trusted) in cases {
            let server = try await WebhookTestServer.start(identity: identity)
            for host in ["localhost", "127.0.0.1"] {
                let webhook = try EventWebhook(
                    url: "https://\(host):\(server.port)/api/webhook/camo", secret: Self.secret, logger: Self.logger(),
                    options: Self.options(maxAttempts: 1, trusting: trusted))
                webhook.post(Self.body, id: "evt-\(host)")
                #expect(await Self.eventually { webhook.stats.delivered + webhook.stats.failed == 1 })
                await webhook.stop()
                #expect(webhook.stats.delivered == 1, "over https://\(host): \(webhook.stats.lastError ?? "")")
            }
            await server.stop()
            let requests = server.requests
            #expect(requests.map { $0.headers["X-Camo-Event-Id"] } == [["evt-localhost"], ["evt-127.0.0.1"]])
            for request in requests {
                let signature = try #require(request.headers.first(name: "X-Camo-Signature"))
                try WebhookSignature.verify(header: signature, body: request.body, secret: Self.secret, now: Self.unixTime)
                #expect(request.body == Self.body)
            }
        }
    }

    @Test func aTrustedCertificateForAnotherNameIsRefused() async throws {
        // The certificate names localhost and 127.0.0.1 only; Linux routes all of 127/8 to loopback.
        let identities = try await Self.opensslIdentities()
        let server = try await WebhookTestServer.start(identity: identities.leaf, host: "127.0.0.2")
        let poster = try WebhookPoster(
            url: WebhookURL("https://127.0.0.2:\(server.port)/"),
            options: .init(extraTrustedCertificatePEM: identities.ca.certificatePEM))
        await #expect {
            _ = try await poster.post(body: Self.body, headers: [])
        } throws: { error in
            guard case WebhookError.tls = error else { return false }
            return true
        }
        await server.stop()
        #expect(server.requests.isEmpty)
    }

    // MARK: The poster alone

    @Test func posterReturnsTheStatusAndRetryAfter() async throws {
        let server = try await WebhookTestServer.start(replies: [.status(503, retryAfter: 3), .status(204)])
        let poster = try WebhookPoster(url: WebhookURL("http://127.0.0.1:\(server.port)/p"))
        #expect(try await poster.post(body: Self.body, headers: []) == .init(status: 503, retryAfter: .seconds(3)))
        #expect(try await poster.post(body: Self.body, headers: [("X-Extra", "1")]) == .init(status: 204, retryAfter: nil))
        #expect(server.requests.last?.headers["X-Extra"] == ["1"])
        await server.stop()
    }

    @Test func posterErrorsAreTypedSentences() async throws {
        let server = try await WebhookTestServer.start(replies: [.close, .hang])
        // The closing receiver with the default timeout (a loaded machine must not turn the close into a timeout),
        // the hanging one with a short one.
        let patient = try WebhookPoster(url: WebhookURL("http://127.0.0.1:\(server.port)/"))
        let poster = try WebhookPoster(
            url: WebhookURL("http://127.0.0.1:\(server.port)/"), options: .init(requestTimeout: .milliseconds(100)))
        let closed = WebhookError.badResponse(
            url: "http://127.0.0.1:\(server.port)/", reason: "the connection closed before an answer came")
        await #expect(throws: closed) {
            _ = try await patient.post(body: Self.body, headers: [])
        }
        await #expect(throws: WebhookError.requestTimeout(url: "http://127.0.0.1:\(server.port)/", seconds: 0.1)) {
            _ = try await poster.post(body: Self.body, headers: [])
        }
        await server.stop()
        let port = try await WebhookTestServer.closedPort()
        let refused = try WebhookPoster(url: WebhookURL("http://127.0.0.1:\(port)/"))
        await #expect(throws: WebhookError.connectionFailed(url: "http://127.0.0.1:\(port)/", reason: "connection refused")) {
            _ = try await refused.post(body: Self.body, headers: [])
        }
    }

    @Test func cancellingThePostClosesTheConnection() async throws {
        let server = try await WebhookTestServer.start(fallback: .hang)
        let poster = try WebhookPoster(
            url: WebhookURL("http://127.0.0.1:\(server.port)/"), options: .init(requestTimeout: .seconds(600)))
        let task = Task { try await poster.post(body: Self.body, headers: []) }
        #expect(await Self.eventually { server.requests.count == 1 })
        task.cancel()
        await #expect(throws: WebhookError.cancelled) { _ = try await task.value }
        #expect(await Self.eventually { server.closedConnections == 1 })
        await server.stop()
    }

    // MARK: Setup errors

    @Test func setupErrorsAreSentences() {
        #expect(throws: WebhookError.self) {
            _ = try EventWebhook(url: "ftp://hub.example/", secret: Self.secret, logger: Self.logger())
        }
        #expect {
            _ = try EventWebhook(url: "https://hub.example/", secret: "", logger: Self.logger())
        } throws: { error in
            guard case WebhookError.invalidSecret = error else { return false }
            return true
        }
        #expect {
            _ = try EventWebhook(
                url: "https://hub.example/", secret: Self.secret, logger: Self.logger(),
                options: .init(transport: .init(extraTrustedCertificatePEM: "not a certificate")))
        } throws: { error in
            guard case WebhookError.invalidCertificate(let text) = error else { return false }
            return text.contains("BEGIN CERTIFICATE")
        }
    }
}

/// Keeps what the webhook logs, with levels.
final class WebhookLogCapture: LogHandler, Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var text: String
    }

    private let stored = Mutex<[Entry]>([])

    var entries: [Entry] { stored.withLock { $0 } }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}  // the webhook sets none; nothing to keep
    }

    var logLevel: Logger.Level {
        get { .trace }
        set {}  // always everything
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let entry = Entry(level: event.level, text: "\(event.message) \(event.metadata ?? [:])")
        stored.withLock { $0.append(entry) }
    }
}
