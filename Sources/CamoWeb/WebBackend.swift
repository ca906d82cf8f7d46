import Foundation

/// What the web server asks of the agent: live viewers (WebRTC through WHEP), talkback, status, settings, paired
/// studios and metrics. The agent implements it; the server never touches the camera itself.
///
/// Every method may be called from any task, several at once.
public protocol WebBackend: Sendable {
    /// Starts a WebRTC viewer from the browser's SDP `offer` and returns the SDP answer.
    ///
    /// `id` is the media session id the server chose (it names the viewer in every later call). The server holds a
    /// lease slot for the viewer while this runs; when it throws, the slot is freed and the viewer is not ended.
    func startViewer(offer: String, id: String) async throws(WebError) -> String

    /// Adds trickled ICE candidates (an `application/trickle-ice-sdpfrag` body) to viewer `id`.
    func addCandidates(id: String, fragment: String) throws(WebError)

    /// Ends viewer `id` at once: the viewer stopped it, its lease ran out ("lease expired") or the server stops.
    func endViewer(id: String, reason: String)

    /// Turns talkback (the viewer's microphone played on the agent's speaker) on or off for viewer `id`.
    func setTalkback(id: String, on: Bool) throws(WebError)

    /// Whether this agent can play talkback at all (it has a speaker). When false, the server answers 501.
    var talkbackSupported: Bool { get }

    /// What `GET /api/status` shows (the server adds a `"web"` member with its viewers and leases).
    func status() async -> [String: JSONValue]

    /// The settings as JSON, for `GET /api/settings`: an array (or `{"settings": [...]}`) of objects
    /// `{"name": String, "value": any, "writable": Bool, "description": String?, "choices": [String]?}`.
    func settings() async -> Data

    /// Applies a `PUT /api/settings` body (the page sends `{"<name>": <value>}`), answering with an HTTP status and a
    /// JSON body (on refusal `{"error": "..."}`, whose text the page shows).
    func writeSettings(_ body: Data) async -> (status: Int, body: Data)

    /// The paired studios as a JSON array of objects, for `GET /api/paired` (the page shows one row each).
    func pairedStudios() async -> Data

    /// The agent's metrics, rendered with the server's own at `/metrics` in Prometheus text format.
    func metrics() -> [WebMetric]

    /// The camera's events for `GET /api/events` (server-sent events): the ones kept after `lastEventID` (the
    /// browser's `Last-Event-ID` on a reconnect), then each new one, until the client goes. Nil: the agent runs
    /// no event detectors (the server answers 503). The default has none.
    func eventStream(lastEventID: UInt64?) -> AsyncStream<ServerSentEvent>?

    /// The recordings for `GET /api/clips`: a JSON object (`{"recording": {...}, "clips": [...]}`). Nil: the agent
    /// keeps no recordings (the server answers 503). The default has none.
    func clips() async -> Data?

    /// Recording `id`'s file for `GET /api/clips/ID`: its path and content type. Nil: no such recording (404).
    func clipFile(id: Int64) async -> (path: String, contentType: String)?
}

extension WebBackend {
    /// No events.
    public func eventStream(lastEventID: UInt64?) -> AsyncStream<ServerSentEvent>? { nil }
    /// No recordings.
    public func clips() async -> Data? { nil }
    /// No recordings.
    public func clipFile(id: Int64) async -> (path: String, contentType: String)? { nil }
}

/// One server-sent event (`text/event-stream`): `id:`, `event:` and `data:` lines and a blank line.
public struct ServerSentEvent: Sendable, Hashable {
    /// The id the browser sends back as `Last-Event-ID` when it reconnects.
    public var id: String?
    /// The event's type (`started`, `updated`, `ended`); nil is the default `message`.
    public var event: String?
    /// The data: one line of JSON.
    public var data: String

    /// An event from its parts.
    public init(id: String? = nil, event: String? = nil, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }

    /// Its bytes on the wire. Line breaks in the data become separate `data:` lines (the browser joins them).
    public var encoded: [UInt8] {
        var text = ""
        if let id { text += "id: \(id)\n" }
        if let event { text += "event: \(event)\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return Array((text + "\n").utf8)
    }
}

/// One metric sample for `/metrics`.
public struct WebMetric: Sendable, Equatable {
    /// Whether a metric goes up and down or only up.
    public enum Kind: String, Sendable {
        /// A value that goes up and down (viewers now, temperature).
        case gauge
        /// A running total since the agent started (frames sent, bytes).
        case counter
    }

    /// The metric name, `[a-zA-Z_:][a-zA-Z0-9_:]*` (for instance `camo_frames_sent_total`).
    public var name: String
    /// One line saying what it measures.
    public var help: String
    /// Gauge or counter (a counter's value must not be negative).
    public var kind: Kind
    /// The value now.
    public var value: Double
    /// Labels of this sample; every sample of one name must have the same label names.
    public var labels: [String: String]

    /// A sample named `name` with the given help, kind, value and labels.
    public init(name: String, help: String, kind: Kind, value: Double, labels: [String: String] = [:]) {
        self.name = name
        self.help = help
        self.kind = kind
        self.value = value
        self.labels = labels
    }
}
