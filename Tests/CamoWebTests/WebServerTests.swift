import CamoTestSupport
import Foundation
import Logging
import Testing

@testable import CamoWeb

/// The real server on 127.0.0.1 (a free port), over HTTPS, driven with curl. Serialized: the machine is small.
@Suite("Web server over HTTPS", .serialized)
struct WebServerTests {
    static let offer = "v=0\r\no=- 7 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"

    /// A started server with a fake backend, its clock, and one valid token.
    struct Harness {
        let server: WebServer
        let backend: FakeBackend
        let clock: ManualClock
        let directory: URL
        let token: String
        let tokenID: String
        var port: Int { server.port ?? 0 }
        var certificate: URL { directory.appendingPathComponent(WebCertificate.certificateFileName) }
        var base: String { "https://localhost:\(port)" }
        var bearer: String { "Authorization: Bearer \(token)" }

        func request(_ method: String, _ path: String, headers: [String] = [], body: String? = nil) async throws -> Curl.Response {
            try await Curl.request(method, base + path, certificate: certificate, headers: headers, body: body.map { Data($0.utf8) })
        }
    }

    static func start(
        backend: FakeBackend = FakeBackend(), leaseSeconds: Int = 120, loopbackWithoutToken: Bool = false
    ) async throws -> Harness {
        let directory = try temporaryStateDirectory()
        let (tokenID, token) = try WebTokenStore(directory: directory).mint(name: "test")
        let clock = ManualClock(now: 1_000_000_000_000)
        var logger = Logger(label: "camo-web-test")
        logger.logLevel = .warning
        let configuration = WebConfiguration(
            host: "127.0.0.1", port: 0, leaseSeconds: leaseSeconds, loopbackWithoutToken: loopbackWithoutToken,
            stateDirectory: directory)
        let server = WebServer(configuration: configuration, backend: backend, clock: clock, logger: logger)
        try await server.start()
        return Harness(server: server, backend: backend, clock: clock, directory: directory, token: token, tokenID: tokenID)
    }

    @Test func whepFlowStartsPatchesExtendsAndDeletes() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let started = try await harness.request(
            "POST", "/whep", headers: [harness.bearer, "Content-Type: application/sdp"], body: Self.offer)
        #expect(started.status == 201)
        #expect(started.body == FakeBackend.answer)
        #expect(started.headers["content-type"] == "application/sdp")
        let id = try #require(started.headers["x-media-session-id"])
        #expect(started.headers["location"] == "/whep/sessions/\(id)")
        #expect(started.headers["x-session-duration"] == "120")
        #expect(harness.backend.calls.withLock { $0.started } == [id])
        #expect(harness.server.viewerCount == 1)

        let patched = try await harness.request(
            "PATCH", "/whep/sessions/\(id)", headers: [harness.bearer, "Content-Type: application/trickle-ice-sdpfrag"],
            body: "a=mid:0\r\na=candidate:1 1 udp 1 127.0.0.1 5000 typ host\r\n")
        #expect(patched.status == 204)
        #expect(harness.backend.calls.withLock { $0.candidates.first?.fragment.contains("candidate:1") } == true)

        let extended = try await harness.request("POST", "/whep/sessions/\(id)/extend", headers: [harness.bearer])
        #expect(extended.status == 200)
        #expect(extended.body.contains("\"sessionDurationSeconds\":120"))

        let talk = try await harness.request(
            "POST", "/api/live/\(id)/talkback", headers: [harness.bearer, "Content-Type: application/json"], body: #"{"on": true}"#)
        #expect(talk.status == 200)
        #expect(harness.backend.calls.withLock { $0.talkback.map(\.on) } == [true])

        let deleted = try await harness.request("DELETE", "/whep/sessions/\(id)", headers: [harness.bearer])
        #expect(deleted.status == 200)
        #expect(harness.backend.calls.withLock { $0.ended.map(\.id) } == [id])
        #expect(harness.server.viewerCount == 0)

        let gone = try await harness.request("POST", "/whep/sessions/\(id)/extend", headers: [harness.bearer])
        #expect(gone.status == 404)
        #expect(gone.body.contains(id))
        let unknownPatch = try await harness.request(
            "PATCH", "/whep/sessions/nope", headers: [harness.bearer, "Content-Type: application/trickle-ice-sdpfrag"],
            body: "a=mid:0\r\n")
        #expect(unknownPatch.status == 404)
    }

    /// The CI failure of November 27 (curl gave up after 30 s on the first WHEP request): the router's work waited in
    /// Swift's shared pool behind the other suites' tests. Here every thread of that pool is held by a blocked task
    /// while curl asks; the server answers on its own executor. Without it this waits for curl's 30 s and fails.
    @Test func answersWhileTheSharedPoolIsBlocked() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let release = DispatchSemaphore(value: 0)
        let blockers = ProcessInfo.processInfo.activeProcessorCount + 1
        for _ in 0..<blockers {
            // Blocking the pool on purpose; each gives up after 40 s so a regression cannot hang the run.
            Task.detached { _ = release.wait(timeout: .now() + 40) }
        }
        // curl runs and is waited for on this thread (the pool cannot resume an await now).
        let result = Curl.runBlocking(
            "/usr/bin/curl",
            ["-s", "--max-time", "20", "--cacert", harness.certificate.path, "-o", "/dev/null", "-w", "%{http_code}",
             "-H", harness.bearer, harness.base + "/api/status"])
        for _ in 0..<blockers { release.signal() }
        #expect(result.exit == 0 && result.output == "200", "curl exited \(result.exit), printed \(result.output)")
    }

    @Test func googleHomeShapeAndLeaseExpiry() async throws {
        let harness = try await Self.start(leaseSeconds: 10)
        defer { Task { await harness.server.stop() } }
        struct Offer: Encodable { var offerSdp: String }
        let body = String(decoding: try JSONEncoder().encode(Offer(offerSdp: Self.offer)), as: UTF8.self)
        let started = try await harness.request(
            "POST", "/api/live", headers: [harness.bearer, "Content-Type: application/json"], body: body)
        #expect(started.status == 200)
        struct Answer: Decodable { var answerSdp: String; var mediaSessionId: String; var sessionDurationSeconds: Int }
        let answer = try JSONDecoder().decode(Answer.self, from: Data(started.body.utf8))
        #expect(answer.answerSdp == FakeBackend.answer)
        #expect(answer.sessionDurationSeconds == 10)

        // The sweep runs on the manual clock: 9 s later the lease holds, 11 s later it has ended.
        await harness.clock.waitForSleepers(1)
        harness.clock.advance(by: 9_000_000_000)
        await harness.clock.waitForSleepers(1)
        #expect(harness.backend.calls.withLock { $0.ended.isEmpty })
        let extended = try await harness.request("POST", "/api/live/\(answer.mediaSessionId)/extend", headers: [harness.bearer])
        #expect(extended.status == 200)
        harness.clock.advance(by: 9_000_000_000)
        await harness.clock.waitForSleepers(1)
        #expect(harness.backend.calls.withLock { $0.ended.isEmpty })
        harness.clock.advance(by: 2_000_000_000)
        await harness.clock.waitForSleepers(1)
        let ended = harness.backend.calls.withLock { $0.ended }
        #expect(ended.map(\.id) == [answer.mediaSessionId])
        #expect(ended.first?.reason == "lease expired")
        #expect(harness.server.viewerCount == 0)

        // A viewer that ends by itself frees its lease without the backend being asked again.
        let second = try await harness.request(
            "POST", "/whep", headers: [harness.bearer, "Content-Type: application/sdp"], body: Self.offer)
        let id = try #require(second.headers["x-media-session-id"])
        harness.server.viewerEnded(id: id)
        #expect(harness.server.viewerCount == 0)
        #expect(harness.backend.calls.withLock { $0.ended.count } == 1)
    }

    @Test func authenticationRefusesMissingWrongAndRevokedTokens() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let none = try await harness.request("GET", "/api/status")
        #expect(none.status == 401)
        #expect(none.body.contains("camo-agent web token"))
        let wrong = try await harness.request("GET", "/api/status", headers: ["Authorization: Bearer wrong-token"])
        #expect(wrong.status == 401)
        let metricsWithout = try await harness.request("GET", "/metrics")
        #expect(metricsWithout.status == 401)
        let good = try await harness.request("GET", "/api/status", headers: [harness.bearer])
        #expect(good.status == 200)
        #expect(good.body.contains("\"camera\":\"fake\""))
        #expect(good.body.contains("\"maxViewers\":4"))

        // Cookie login, then revocation ends both the bearer and the cookie.
        let login = try await harness.request(
            "POST", "/login", headers: ["Content-Type: application/json"], body: #"{"token": "\#(harness.token)"}"#)
        #expect(login.status == 200)
        let cookie = try #require(login.headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("Secure") && cookie.contains("SameSite=Strict"))
        let session = try #require(cookie.split(separator: ";").first.map(String.init))
        #expect(session.hasPrefix("camo_session="))
        let withCookie = try await harness.request("GET", "/api/settings", headers: ["Cookie: \(session)"])
        #expect(withCookie.status == 200)
        #expect(withCookie.body.contains("fps"))
        let forged = try await harness.request("GET", "/api/settings", headers: ["Cookie: camo_session=forged"])
        #expect(forged.status == 401)

        // Another process (the CLI) revokes the token: the server sees the file change.
        try WebTokenStore(directory: harness.directory).revoke(id: harness.tokenID)
        let revoked = try await harness.request("GET", "/api/status", headers: [harness.bearer])
        #expect(revoked.status == 401)
        let revokedCookie = try await harness.request("GET", "/api/status", headers: ["Cookie: \(session)"])
        #expect(revokedCookie.status == 401)

        // A form login with a token minted meanwhile works without a restart.
        let minted = try WebTokenStore(directory: harness.directory).mint(name: "second")
        let form = try await harness.request(
            "POST", "/login", headers: ["Content-Type: application/x-www-form-urlencoded"], body: "token=\(minted.token)")
        #expect(form.status == 303)
        #expect(form.headers["set-cookie"]?.hasPrefix("camo_session=") == true)
    }

    @Test func sixthWrongTokenFromOneAddressIsRateLimited() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        for attempt in 1...5 {
            let response = try await harness.request("GET", "/api/status", headers: ["Authorization: Bearer wrong-\(attempt)"])
            #expect(response.status == 401)
        }
        let sixth = try await harness.request("GET", "/api/status", headers: ["Authorization: Bearer wrong-6"])
        #expect(sixth.status == 429)
        #expect(sixth.headers["retry-after"] == "60")
        // Even the right token waits out the window; then it works.
        let rightButLimited = try await harness.request("GET", "/api/status", headers: [harness.bearer])
        #expect(rightButLimited.status == 429)
        let login = try await harness.request(
            "POST", "/login", headers: ["Content-Type: application/json"], body: #"{"token": "\#(harness.token)"}"#)
        #expect(login.status == 429)
        harness.clock.advance(by: 60_000_000_000)
        let after = try await harness.request("GET", "/api/status", headers: [harness.bearer])
        #expect(after.status == 200)
    }

    @Test func badBodiesAreRefused() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let wrongType = try await harness.request(
            "POST", "/whep", headers: [harness.bearer, "Content-Type: text/plain"], body: Self.offer)
        #expect(wrongType.status == 415)
        #expect(wrongType.body.contains("application/sdp"))
        let malformedType = try await harness.request(
            "POST", "/whep", headers: [harness.bearer, "Content-Type: ;;;"], body: Self.offer)
        #expect(malformedType.status == 415)
        let empty = try await harness.request("POST", "/whep", headers: [harness.bearer, "Content-Type: application/sdp"], body: "")
        #expect(empty.status == 400)
        let oversized = try await harness.request(
            "POST", "/whep", headers: [harness.bearer, "Content-Type: application/sdp"],
            body: "v=0\r\n" + String(repeating: "a=x\r\n", count: 20_000))
        #expect(oversized.status == 413)
        let huge = try await harness.request(
            "POST", "/whep", headers: [harness.bearer, "Content-Type: application/sdp"],
            body: String(repeating: "x", count: 3 << 20))
        #expect(huge.status == 413)
        let notFound = try await harness.request("GET", "/nothing", headers: [harness.bearer])
        #expect(notFound.status == 404)
        let settings = try await harness.request(
            "PUT", "/api/settings", headers: [harness.bearer, "Content-Type: application/json"], body: #"{"fps": "bad"}"#)
        #expect(settings.status == 400)
        #expect(settings.body.contains("fps must be a number"))
        #expect(harness.server.viewerCount == 0)
        // The server still answers.
        let status = try await harness.request("GET", "/api/status", headers: [harness.bearer])
        #expect(status.status == 200)
    }

    @Test func burstOfAThousandPostsIsAnsweredEveryTime() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let directory = try temporaryStateDirectory()
        let offerURL = directory.appendingPathComponent("offer.sdp")
        try Data(Self.offer.utf8).write(to: offerURL)
        var config = ""
        for _ in 0..<1_000 { config += "url = \"\(harness.base)/whep\"\noutput = \"/dev/null\"\n" }
        let configURL = directory.appendingPathComponent("burst.curl")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let (_, output) = try await Curl.run(
            "/usr/bin/curl",
            [
                "-s", "--cacert", harness.certificate.path, "--parallel", "--parallel-max", "100", "--max-time", "120",
                "-X", "POST", "-H", "Content-Type: application/sdp", "-H", harness.bearer,
                "--data-binary", "@" + offerURL.path, "-w", "%{http_code}\n", "-K", configURL.path,
            ])
        let codes = output.split(separator: "\n").map(String.init)
        let counts = Dictionary(codes.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(codes.count == 1_000)
        #expect(counts["201"] == 4)
        #expect(counts["503"] == 996)
        #expect(counts["000"] == nil)
        #expect(harness.server.viewerCount == 4)
        let status = try await harness.request("GET", "/api/status", headers: [harness.bearer])
        #expect(status.status == 200)
        #expect(status.body.contains("\"viewers\":4"))
    }

    @Test func metricsParseAsPrometheusText() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let response = try await harness.request("GET", "/metrics", headers: [harness.bearer])
        #expect(response.status == 200)
        #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = response.body.split(separator: "\n").map(String.init)
        #expect(lines.contains("# TYPE camo_frames_sent_total counter"))
        #expect(lines.contains("# TYPE camo_temperature_celsius gauge"))
        #expect(lines.contains("# TYPE camo_web_viewers gauge"))
        #expect(lines.contains("# HELP camo_web_viewers Live viewers holding a lease now."))
        #expect(lines.contains("camo_frames_sent_total 1234"))
        #expect(lines.contains(#"camo_temperature_celsius{zone="cpu"} 51.5"#))
        #expect(!response.body.contains("bad name"))
        let sample = try Regex(#"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? [-+0-9.eEa-zA-Z]+$"#)
        for line in lines where !line.hasPrefix("#") {
            #expect(line.wholeMatch(of: sample) != nil, "not a Prometheus sample: \(line)")
        }
        #expect(lines.filter { !$0.hasPrefix("#") }.count >= 8)
    }

    @Test func pageIsHTMLWithTheDocumentedIds() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let page = try await harness.request("GET", "/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.hasPrefix("<!doctype html>"))
        for id in ["video", "start", "talk", "lease", "error", "settings", "paired", "status", "login"] {
            #expect(page.body.contains("id=\"\(id)\""), "missing #\(id)")
        }
        #expect(page.body.contains("window.camoLive"))
        #expect(!page.body.contains("http://") && !page.body.contains("https://"))
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.contains("script-src 'sha256-"))
    }

    @Test func certificateCurlSeesHasTheReportedFingerprint() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let reported = try #require(harness.server.certificateFingerprint)
        #expect(reported.split(separator: ":").count == 32)
        let (_, served) = try await Curl.run(
            "/bin/sh",
            ["-c", "openssl s_client -connect 127.0.0.1:\(harness.port) -servername localhost </dev/null 2>/dev/null"
                + " | openssl x509 -noout -fingerprint -sha256"])
        #expect(served.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("=" + reported))
        let (_, onDisk) = try await Curl.run(
            "/usr/bin/openssl", ["x509", "-in", harness.certificate.path, "-noout", "-fingerprint", "-sha256"])
        #expect(onDisk.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("=" + reported))
        // curl checks the chain against the file for both the name and the address in the SAN.
        let byAddress = try await Curl.request(
            "GET", "https://127.0.0.1:\(harness.port)/", certificate: harness.certificate)
        #expect(byAddress.status == 200)
        let key = harness.directory.appendingPathComponent(WebCertificate.keyFileName)
        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func portInUseAndPlainHTTPOffLoopbackAreClearErrors() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.server.stop() } }
        let second = WebServer(
            configuration: WebConfiguration(host: "127.0.0.1", port: harness.port, stateDirectory: harness.directory),
            backend: FakeBackend(), logger: Logger(label: "test"))
        do {
            try await second.start()
            Issue.record("a second server bound the same port")
            await second.stop()
        } catch {
            #expect(error == .portInUse(host: "127.0.0.1", port: harness.port))
            #expect(error.description.contains("--web-port"))
            #expect(error.description.contains("\(harness.port)"))
        }
        let plain = WebServer(
            configuration: WebConfiguration(host: "0.0.0.0", port: 0, tls: false, stateDirectory: harness.directory),
            backend: FakeBackend(), logger: Logger(label: "test"))
        await #expect(throws: WebServerError.self) { try await plain.start() }
    }

    @Test func loopbackWithoutTokenWhenAllowed() async throws {
        let harness = try await Self.start(loopbackWithoutToken: true)
        defer { Task { await harness.server.stop() } }
        let status = try await harness.request("GET", "/api/status")
        #expect(status.status == 200)
        let metrics = try await harness.request("GET", "/metrics")
        #expect(metrics.status == 200)
    }
}
