import CamoMedia
import Foundation
import Logging
import Synchronization

/// Turns a complete request into a response: authentication, the live view (WHEP and the JSON shape), the API,
/// the page and `/metrics`. Runs off the event loop; no sockets, so it can be driven directly.
final class WebRouter: Sendable {
    let configuration: WebConfiguration
    let backend: any WebBackend
    let clock: any MonotonicClock
    let logger: Logger
    let tokens: WebTokenStore
    let state: Mutex<WebServerState>
    /// Whether cookies get the Secure attribute (true when the server speaks TLS).
    let secureCookies: Bool
    /// The open connections (for `/metrics`).
    let connections: ConnectionRegistry
    /// The metric names last left out of `/metrics` (warned about once, not on every scrape).
    private let skippedMetrics = Mutex<Set<String>>([])

    init(
        configuration: WebConfiguration, backend: any WebBackend, clock: any MonotonicClock, logger: Logger,
        secureCookies: Bool, connections: ConnectionRegistry
    ) {
        self.connections = connections
        self.configuration = configuration
        self.backend = backend
        self.clock = clock
        self.logger = logger
        self.secureCookies = secureCookies
        self.tokens = WebTokenStore(directory: configuration.stateDirectory)
        self.state = Mutex(
            WebServerState(leases: LiveLeaseBook(durationSeconds: configuration.leaseSeconds, maxViewers: configuration.maxViewers)))
    }

    private var now: UInt64 { clock.now.nanoseconds }

    /// Answers `request` (and counts the answer).
    func handle(_ request: WebRequest) async -> WebResponse {
        let response = await route(request)
        count(response.status)
        logger.debug(
            "web request",
            metadata: ["method": "\(request.method)", "path": "\(request.path)", "status": "\(response.status)",
                "client": "\(request.clientAddress)"])
        return response
    }

    /// Counts a response the connection handler sent itself (413, 400 on a malformed request).
    func count(_ status: Int) {
        state.withLock { $0.responses[status, default: 0] += 1 }
    }

    // MARK: Routing

    private func route(_ request: WebRequest) async -> WebResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch (request.method, parts.count) {
        case ("GET", 0), ("HEAD", 0):
            return WebPage.response
        case ("POST", 1) where parts[0] == "login":
            return login(request)
        case ("POST", 1) where parts[0] == "logout":
            return logout(request)
        default:
            break
        }
        if let denied = authenticate(request) { return denied }

        // Live session paths carry the media session id third; the pattern has "*" there.
        var pattern = parts
        var id = ""
        if parts.count >= 3 && (parts[0...1] == ["whep", "sessions"] || parts[0...1] == ["api", "live"] || parts[0...1] == ["api", "clips"]) {
            id = parts[2]
            pattern[2] = "*"
        }
        switch (request.method, "/" + pattern.joined(separator: "/")) {
        case ("GET", "/api/status"): return await status()
        case ("GET", "/api/settings"): return .jsonData(200, await backend.settings())
        case ("PUT", "/api/settings"):
            guard request.mediaType == "application/json" else { return unsupportedMediaType("application/json") }
            let (status, body) = await backend.writeSettings(Data(request.body))
            return .jsonData(status, body)
        case ("GET", "/api/paired"): return .jsonData(200, await backend.pairedStudios())
        case ("GET", "/metrics"): return metrics()
        case ("GET", "/api/events"): return events(request)
        case ("GET", "/api/clips"):
            guard let clips = await backend.clips() else {
                return .error(503, "this agent keeps no recordings (started with --no-recordings, config key recordings); start it without that")
            }
            return .jsonData(200, clips)
        case ("GET", "/api/clips/*"): return await clipFile(id: id)

        case ("POST", "/whep"): return await whepStart(request)
        case ("OPTIONS", "/whep"):
            return WebResponse(status: 204, headers: [("Allow", "OPTIONS, POST"), ("Accept-Post", "application/sdp")])
        case ("PATCH", "/whep/sessions/*"): return whepPatch(request, id: id)
        case ("DELETE", "/whep/sessions/*"): return stop(id: id, reason: "stopped by the viewer")
        case ("POST", "/whep/sessions/*/extend"): return extend(id: id)
        case ("GET", "/whep/sessions/*"), ("GET", "/api/live/*"): return session(id: id)

        case ("POST", "/api/live"): return await liveStart(request)
        case ("POST", "/api/live/*/extend"): return extend(id: id)
        case ("POST", "/api/live/*/stop"), ("DELETE", "/api/live/*"): return stop(id: id, reason: "stopped by the viewer")
        case ("POST", "/api/live/*/talkback"): return talkback(request, id: id)

        case (_, "/api/status"), (_, "/api/settings"), (_, "/api/paired"), (_, "/api/events"), (_, "/metrics"), (_, "/whep"), (_, "/api/live"),
            (_, "/whep/sessions/*"), (_, "/whep/sessions/*/extend"), (_, "/api/live/*"), (_, "/api/live/*/extend"),
            (_, "/api/live/*/stop"), (_, "/api/live/*/talkback"):
            return .error(405, "\(request.method) is not allowed on \(request.path); see the API list in the README")
        default:
            return .error(404, "nothing at \(request.path); the page is at /, the API under /api and /whep")
        }
    }

    // MARK: Events

    /// `GET /api/events`: server-sent events, resumed after `Last-Event-ID`, with a comment every 15 s so proxies
    /// and the browser keep the connection.
    private func events(_ request: WebRequest) -> WebResponse {
        let last = request.header("Last-Event-ID").flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        guard let events = backend.eventStream(lastEventID: last) else {
            return .error(503, "this agent runs no event detectors (started with --no-events, config key events); start it without that")
        }
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let pump = Task(executorPreference: WebTaskExecutor.shared) {
            for await event in events { continuation.yield(event.encoded) }
            continuation.finish()
        }
        let keepAlive = Task(executorPreference: WebTaskExecutor.shared) {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(15))
                continuation.yield(Array(": keep-alive\n\n".utf8))
            }
        }
        continuation.onTermination = { _ in
            pump.cancel()
            keepAlive.cancel()
        }
        return WebResponse(
            status: 200, headers: [("Content-Type", "text/event-stream")], body: Array("retry: 2000\n\n".utf8), stream: stream)
    }

    /// A recording's file, read a piece at a time as the client takes it (an hour-long segment is not held in memory).
    private func clipFile(id text: String) async -> WebResponse {
        guard let id = Int64(text), id > 0 else { return .error(400, "'\(text)' is not a recording id; GET /api/clips lists them") }
        guard let file = await backend.clipFile(id: id), let handle = FileHandle(forReadingAtPath: file.path) else {
            return .error(404, "there is no recording \(id) (it may have been removed to make room); GET /api/clips lists them")
        }
        let name = (file.path as NSString).lastPathComponent
        let headers = [("Content-Type", file.contentType), ("Content-Disposition", "inline; filename=\"\(name)\"")]
        let pieces = AsyncStream<[UInt8]>(unfolding: {
            guard let data = try? handle.read(upToCount: 256 << 10), !data.isEmpty else {
                try? handle.close()
                return nil
            }
            return Array(data)
        })
        return WebResponse(status: 200, headers: headers, stream: pieces)
    }

    // MARK: Authentication

    /// nil when the request may go on, else the refusal (401, or 429 while its address is limited).
    private func authenticate(_ request: WebRequest) -> WebResponse? {
        if configuration.loopbackWithoutToken && request.isLoopback { return nil }
        if let token = request.bearerToken {
            if let wait = state.withLock({ $0.limiter.retryAfterSeconds(address: request.clientAddress, now: now) }) {
                return tooManyAttempts(wait)
            }
            if tokens.verify(token: token) != nil {
                return nil
            }
            recordFailure(request, what: "a bearer token")
            return unauthorized("the token is not valid (revoked, or mistyped); make one with `camo-agent web token`")
        }
        if let session = request.cookie(WebSessionBook.cookieName) {
            let tokenID = state.withLock { $0.sessions.tokenID(session: session) }
            if let tokenID {
                if tokens.contains(id: tokenID) { return nil }
                state.withLock { $0.sessions.close(session: session) }
                return unauthorized("the token this browser logged in with was revoked; log in again with another")
            }
            return unauthorized("this login ended (the agent restarted or you logged out); log in again")
        }
        return unauthorized(
            "this needs a token: send `Authorization: Bearer <token>` or log in on the page; make one with "
                + "`camo-agent web token`")
    }

    private func recordFailure(_ request: WebRequest, what: String) {
        state.withLock {
            $0.limiter.recordFailure(address: request.clientAddress, now: now)
            $0.authFailures += 1
        }
        logger.notice("web: rejected \(what)", metadata: ["client": "\(request.clientAddress)"])
    }

    private func unauthorized(_ message: String) -> WebResponse {
        .error(401, message, headers: [("WWW-Authenticate", "Bearer realm=\"camo-agent\"")])
    }

    private func tooManyAttempts(_ seconds: Int) -> WebResponse {
        .error(
            429, "too many wrong tokens from this address; wait \(seconds) s and try again with a valid token",
            headers: [("Retry-After", "\(seconds)")])
    }

    private func login(_ request: WebRequest) -> WebResponse {
        if let wait = state.withLock({ $0.limiter.retryAfterSeconds(address: request.clientAddress, now: now) }) {
            return tooManyAttempts(wait)
        }
        let form = request.mediaType == "application/x-www-form-urlencoded"
        let token: String?
        if form {
            token = Self.formValue("token", in: String(decoding: request.body, as: UTF8.self))
        } else if request.mediaType == "application/json" {
            struct Login: Decodable { var token: String }
            token = (try? JSONDecoder().decode(Login.self, from: Data(request.body)))?.token
        } else {
            return unsupportedMediaType("application/json or application/x-www-form-urlencoded")
        }
        guard let token, !token.isEmpty else {
            return .error(400, "the login needs a token: {\"token\": \"...\"} or the form field token")
        }
        guard let tokenID = tokens.verify(token: token.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            recordFailure(request, what: "a login")
            return .error(401, "the token is not valid (revoked, or mistyped); make one with `camo-agent web token`")
        }
        let session = state.withLock { state in
            state.limiter.recordSuccess(address: request.clientAddress)
            return state.sessions.open(tokenID: tokenID)
        }
        logger.info("web: login", metadata: ["client": "\(request.clientAddress)", "token-id": "\(tokenID)"])
        let cookie = "\(WebSessionBook.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict" + (secureCookies ? "; Secure" : "")
        if form {
            return WebResponse(status: 303, headers: [("Location", "/"), ("Set-Cookie", cookie)])
        }
        return .json(200, ["ok": true], headers: [("Set-Cookie", cookie)])
    }

    private func logout(_ request: WebRequest) -> WebResponse {
        if let session = request.cookie(WebSessionBook.cookieName) {
            state.withLock { $0.sessions.close(session: session) }
        }
        let cookie = "\(WebSessionBook.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secureCookies ? "; Secure" : "")
        return .json(200, ["ok": true], headers: [("Set-Cookie", cookie)])
    }

    /// The value of `name` in a urlencoded form.
    static func formValue(_ name: String, in form: String) -> String? {
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }

    // MARK: Live view

    private struct LiveStarted: Encodable {
        var answerSdp: String
        var mediaSessionId: String
        var sessionDurationSeconds: Int
    }

    private struct LiveExtended: Encodable {
        var mediaSessionId: String
        var sessionDurationSeconds: Int
    }

    /// Starts a viewer: reserves a lease, asks the backend, and renews the lease from when the answer is ready.
    private func startViewer(offer: String) async throws(WebError) -> LiveStarted {
        guard !offer.isEmpty else { throw .badRequest("the offer is empty: send the browser's SDP offer") }
        guard offer.hasPrefix("v=0") else {
            throw .badRequest("the body is not an SDP offer (it must start with v=0)")
        }
        let id = Self.randomID()
        let duration = try state.withLock { state throws(WebError) in
            _ = try state.leases.start(id: id, now: now)
            return state.leases.durationSeconds
        }
        let answer: String
        do {
            answer = try await backend.startViewer(offer: offer, id: id)
        } catch {
            state.withLock { _ = $0.leases.release(id: id) }
            logger.notice("web: viewer did not start", metadata: ["id": "\(id)", "error": "\(error.message)"])
            throw error
        }
        let renewed = state.withLock { state -> Bool in
            guard (try? state.leases.extend(id: id, now: now)) != nil else { return false }
            state.viewersStarted += 1
            return true
        }
        guard renewed else {
            backend.endViewer(id: id, reason: "stopped while starting")
            throw LiveLeaseBook.unknown(id)
        }
        logger.info("web: viewer started", metadata: ["id": "\(id)"])
        return LiveStarted(answerSdp: answer, mediaSessionId: id, sessionDurationSeconds: duration)
    }

    private func whepStart(_ request: WebRequest) async -> WebResponse {
        guard request.mediaType == "application/sdp" else { return unsupportedMediaType("application/sdp") }
        do {
            let started = try await startViewer(offer: String(decoding: request.body, as: UTF8.self))
            return WebResponse(
                status: 201,
                headers: [
                    ("Content-Type", "application/sdp"),
                    ("Location", "/whep/sessions/\(started.mediaSessionId)"),
                    ("X-Media-Session-Id", started.mediaSessionId),
                    ("X-Session-Duration", "\(started.sessionDurationSeconds)"),
                ],
                body: Array(started.answerSdp.utf8))
        } catch {
            return busyAware(error)
        }
    }

    private func liveStart(_ request: WebRequest) async -> WebResponse {
        guard request.mediaType == "application/json" else { return unsupportedMediaType("application/json") }
        struct Offer: Decodable { var offerSdp: String }
        guard let offer = try? JSONDecoder().decode(Offer.self, from: Data(request.body)) else {
            return .error(400, "the body must be JSON {\"offerSdp\": \"<the browser's SDP offer>\"}")
        }
        do {
            return .json(200, try await startViewer(offer: offer.offerSdp))
        } catch {
            return busyAware(error)
        }
    }

    /// The error response, with Retry-After on busy (a viewer's lease frees a slot within one lease).
    private func busyAware(_ error: WebError) -> WebResponse {
        guard case .busy = error else { return .error(error) }
        return .error(error.httpStatus, error.message, headers: [("Retry-After", "\(configuration.leaseSeconds)")])
    }

    private func whepPatch(_ request: WebRequest, id: String) -> WebResponse {
        guard request.mediaType == "application/trickle-ice-sdpfrag" else {
            return unsupportedMediaType("application/trickle-ice-sdpfrag")
        }
        guard state.withLock({ $0.leases.lease(id) }) != nil else { return .error(LiveLeaseBook.unknown(id)) }
        do {
            try backend.addCandidates(id: id, fragment: String(decoding: request.body, as: UTF8.self))
            return WebResponse(status: 204)
        } catch {
            return .error(error)
        }
    }

    /// A live session while its lease holds: its id, duration and the seconds left; 404 once it ended.
    private func session(id: String) -> WebResponse {
        let now = self.now
        guard let lease = state.withLock({ $0.leases.lease(id) }) else { return .error(LiveLeaseBook.unknown(id)) }
        struct Session: Encodable {
            var mediaSessionId: String
            var sessionDurationSeconds: Int
            var secondsLeft: Double
        }
        let left = lease.expires > now ? Double(lease.expires - now) / 1e9 : 0
        return .json(200, Session(
            mediaSessionId: id, sessionDurationSeconds: state.withLock { $0.leases.durationSeconds }, secondsLeft: left))
    }

    private func extend(id: String) -> WebResponse {
        let result = state.withLock { state -> Result<Int, WebError> in
            do throws(WebError) {
                _ = try state.leases.extend(id: id, now: now)
                return .success(state.leases.durationSeconds)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let seconds): return .json(200, LiveExtended(mediaSessionId: id, sessionDurationSeconds: seconds))
        case .failure(let error): return .error(error)
        }
    }

    private func stop(id: String, reason: String) -> WebResponse {
        let held = state.withLock { $0.leases.release(id: id) }
        guard held else { return .error(LiveLeaseBook.unknown(id)) }
        backend.endViewer(id: id, reason: reason)
        logger.info("web: viewer stopped", metadata: ["id": "\(id)", "reason": "\(reason)"])
        return .json(200, ["mediaSessionId": id, "ended": reason])
    }

    private func talkback(_ request: WebRequest, id: String) -> WebResponse {
        guard request.mediaType == "application/json" else { return unsupportedMediaType("application/json") }
        struct Talkback: Decodable { var on: Bool }
        guard let body = try? JSONDecoder().decode(Talkback.self, from: Data(request.body)) else {
            return .error(400, "the body must be JSON {\"on\": true} or {\"on\": false}")
        }
        guard backend.talkbackSupported else {
            return .error(.unsupported("this agent has no speaker to play talkback on; connect one and restart the agent"))
        }
        guard state.withLock({ $0.leases.lease(id) }) != nil else { return .error(LiveLeaseBook.unknown(id)) }
        do {
            try backend.setTalkback(id: id, on: body.on)
            struct Answer: Encodable { var mediaSessionId: String; var talkback: Bool }
            return .json(200, Answer(mediaSessionId: id, talkback: body.on))
        } catch {
            return .error(error)
        }
    }

    /// Ends every lease that ran out; returns their ids.
    @discardableResult
    func sweep() -> [String] {
        let expired = state.withLock { state in
            let ids = state.leases.expire(now: now)
            state.leasesExpired += ids.count
            return ids
        }
        for id in expired {
            logger.info("web: viewer lease expired", metadata: ["id": "\(id)"])
            backend.endViewer(id: id, reason: "lease expired")
        }
        return expired
    }

    /// Frees the lease of a viewer that ended by itself.
    func viewerEnded(id: String) {
        if state.withLock({ $0.leases.release(id: id) }) {
            logger.info("web: viewer ended by itself", metadata: ["id": "\(id)"])
        }
    }

    /// Ends every viewer (the server stops).
    func endAll(reason: String) {
        let ids = state.withLock { state in
            let ids = state.leases.ids
            for id in ids { state.leases.release(id: id) }
            return ids
        }
        for id in ids { backend.endViewer(id: id, reason: reason) }
    }

    var viewerCount: Int { state.withLock { $0.leases.count } }

    // MARK: Status and metrics

    private func status() async -> WebResponse {
        var status = await backend.status()
        let (viewers, leases) = state.withLock { state in
            (state.leases.count, state.leases)
        }
        let now = self.now
        let leaseList: [JSONValue] = leases.ids.sorted().compactMap { id in
            guard let lease = leases.lease(id) else { return nil }
            let left = lease.expires > now ? Double(lease.expires - now) / 1e9 : 0
            return .object(["mediaSessionId": .string(id), "secondsLeft": .number(left.rounded())])
        }
        status["web"] = .object([
            "viewers": .number(Double(viewers)),
            "maxViewers": .number(Double(leases.maxViewers)),
            "leaseSeconds": .number(Double(leases.durationSeconds)),
            "talkbackSupported": .bool(backend.talkbackSupported),
            "leases": .array(leaseList),
        ])
        return .json(200, status)
    }

    private func metrics() -> WebResponse {
        let snapshot = state.withLock { $0 }
        let (open, refused) = connections.counts
        var samples = backend.metrics()
        samples.append(WebMetric(name: "camo_web_viewers", help: "Live viewers holding a lease now.", kind: .gauge,
            value: Double(snapshot.leases.count)))
        samples.append(WebMetric(name: "camo_web_max_viewers", help: "Live viewers allowed at once (--max-viewers).",
            kind: .gauge, value: Double(snapshot.leases.maxViewers)))
        samples.append(WebMetric(name: "camo_web_viewers_started_total", help: "Live viewers started.", kind: .counter,
            value: Double(snapshot.viewersStarted)))
        samples.append(WebMetric(name: "camo_web_leases_expired_total", help: "Live view leases that ran out.",
            kind: .counter, value: Double(snapshot.leasesExpired)))
        samples.append(WebMetric(name: "camo_web_auth_failures_total", help: "Rejected tokens (bearer or login).",
            kind: .counter, value: Double(snapshot.authFailures)))
        samples.append(WebMetric(name: "camo_web_connections", help: "Web connections open now.", kind: .gauge,
            value: Double(open)))
        samples.append(WebMetric(name: "camo_web_connections_refused_total",
            help: "Connections closed at once because of the connection limits.", kind: .counter,
            value: Double(refused)))
        for (code, count) in snapshot.responses.sorted(by: { $0.key < $1.key }) {
            samples.append(WebMetric(name: "camo_web_responses_total", help: "Web responses sent, by status code.",
                kind: .counter, value: Double(count), labels: ["code": "\(code)"]))
        }
        let (text, skipped) = MetricsRenderer.render(samples)
        let skippedNames = Set(skipped)
        let changed = skippedMetrics.withLock { last in
            defer { last = skippedNames }
            return last != skippedNames
        }
        if changed && !skippedNames.isEmpty {
            logger.warning("web: metrics left out (invalid or inconsistent)", metadata: ["names": "\(skippedNames.sorted())"])
        }
        return WebResponse(status: 200, headers: [("Content-Type", MetricsRenderer.contentType)], body: Array(text.utf8))
    }

    // MARK: Helpers

    private func unsupportedMediaType(_ wanted: String) -> WebResponse {
        .error(415, "the body must be \(wanted) (set Content-Type accordingly)", headers: [("Accept", wanted)])
    }

    /// 16 random bytes, lowercase hex.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }
}
