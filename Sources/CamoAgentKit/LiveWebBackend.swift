import CamoLive
import CamoProducerKit
import CamoRecording
import CamoWeb
import CamoWire
import Foundation

/// What the page's server asks of the agent: viewers (WebRTC through ``LiveView``), talkback, the status, the
/// settings model (the same one studios and the command line see), the paired studios and the metrics.
struct LiveWebBackend: WebBackend {
    let live: LiveView
    let status: @Sendable () -> AgentStatus
    /// The event detectors, when they run.
    let events: EventMonitor?
    /// The recordings, when they are kept.
    let recordings: ClipRecorder?

    /// `{"recording": status, "clips": [...]}`, newest first.
    func clips() async -> Data? {
        guard let recordings else { return nil }
        struct Listing: Encodable {
            var recording: RecordingStatus
            var clips: [ClipRecord]
        }
        return try? Self.encoder.encode(Listing(recording: recordings.status, clips: recordings.store.list()))
    }

    /// The file of a kept recording.
    func clipFile(id: Int64) async -> (path: String, contentType: String)? {
        guard let recordings, let record = recordings.store.record(id: id) else { return nil }
        return (recordings.store.path(of: record), record.contentType)
    }

    /// The kept notices after `lastEventID`, then each new one, as server-sent events (`id` the notice's sequence,
    /// `event` its kind, `data` its JSON).
    func eventStream(lastEventID: UInt64?) -> AsyncStream<ServerSentEvent>? {
        guard let events else { return nil }
        // An id beyond the newest kept is from before a restart (the numbers start again): replay all that is kept.
        let latest = events.history.last?.sequence ?? 0
        let after = lastEventID.map { $0 <= latest ? $0 : 0 } ?? 0
        let notices = events.follow(replay: lastEventID != nil)
        return AsyncStream { continuation in
            let task = Task {
                for await notice in notices where notice.sequence > after {
                    guard let data = try? Self.encoder.encode(notice) else { continue }
                    continuation.yield(ServerSentEvent(id: "\(notice.sequence)", event: notice.kind.rawValue, data: String(decoding: data, as: UTF8.self)))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private func webrtc() throws(WebError) -> WebRTCLiveView {
        let (webrtc, problem) = live.parts.withLock { ($0.webrtc, $0.webrtcProblem) }
        guard let webrtc else {
            throw WebError.unavailable("Live view in browsers is off on this agent: \(problem ?? "it did not start"). The agent's log says more.")
        }
        return webrtc
    }

    func startViewer(offer: String, id: String) async throws(WebError) -> String {
        let webrtc = try webrtc()
        guard !live.controller.isPaused else {
            throw WebError.unavailable(
                "The camera is off (the privacy switch is on: streamingEnabled false, transportStatus inactive): turn streamingEnabled on (or transportStatus active) in the settings to watch.")
        }
        live.ensureFeed()
        do {
            return try await webrtc.answer(offer: offer, id: id)
        } catch {
            throw Self.webError(error)
        }
    }

    func addCandidates(id: String, fragment: String) throws(WebError) {
        do {
            try webrtc().addRemoteCandidates(id: id, sdpFragment: fragment)
        } catch let error as WebError {
            throw error
        } catch {
            throw Self.webError(error)
        }
    }

    func endViewer(id: String, reason: String) {
        if let webrtc = live.parts.withLock({ $0.webrtc }) { live.teardown.async { webrtc.stop(id: id) } }
        live.logger.info("Live viewer stopped", metadata: ["id": "\(id)", "reason": "\(reason)"])
    }

    func setTalkback(id: String, on: Bool) throws(WebError) {
        let webrtc = try webrtc()
        if !on {
            // Stopping drains the speaker (up to 2 s): off the request's thread.
            live.teardown.async { webrtc.stopTalkback(id: id) }
            return
        }
        do {
            try webrtc.startTalkback(id: id)
        } catch {
            throw Self.webError(error)
        }
    }

    var talkbackSupported: Bool { live.parts.withLock { $0.webrtc?.talkbackSupported ?? false } }

    /// Live view's errors as HTTP errors.
    static func webError(_ error: any Error) -> WebError {
        guard let error = error as? LiveViewError else { return .unavailable("\(error)") }
        switch error {
        case .malformedOffer, .noVideo, .noH264, .noMicrophoneInOffer: return .badRequest(error.description)
        case .unknownViewer: return .notFound(error.description)
        case .talkerBusy: return .conflict(error.description)
        case .talkbackUnsupported: return .unsupported(error.description)
        default: return .unavailable(error.description)
        }
    }

    // MARK: JSON

    func status() async -> [String: JSONValue] {
        var current = status()
        current.live = live.status
        current.events = events?.status
        guard let data = try? Self.encoder.encode(current),
            let object = try? JSONDecoder().decode([String: JSONValue].self, from: data)
        else { return [:] }
        return object
    }

    /// One setting as the page shows it: the model's descriptor flattened for a table row (a rectangle as its
    /// text `x1,y1-x2,y2`, allowed numbers as choices, the label, range and note as one description).
    struct PageSetting: Encodable {
        var name: String
        var label: String
        var group: String
        var kind: String
        var value: SettingValue?
        var writable: Bool
        var supported: Bool
        var choices: [String]?
        var description: String
    }

    func settings() async -> Data {
        let rows = live.controller.settingsModel().map { descriptor -> PageSetting in
            var value = descriptor.value
            if case .rectangle(let rectangle)? = value { value = .text(rectangle.description) }
            var about = [descriptor.label]
            if descriptor.writable && descriptor.supported && !descriptor.range.isEmpty { about.append(descriptor.range) }
            if let note = descriptor.note { about.append(descriptor.supported ? note : "unsupported: " + note) }
            return PageSetting(
                name: descriptor.name, label: descriptor.label, group: descriptor.group, kind: descriptor.kind.rawValue,
                value: value, writable: descriptor.writable && descriptor.supported, supported: descriptor.supported,
                choices: descriptor.choices ?? descriptor.allowed?.map(String.init), description: about.joined(separator: "; "))
        }
        return (try? Self.encoder.encode(["settings": rows])) ?? Data("[]".utf8)
    }

    func writeSettings(_ body: Data) async -> (status: Int, body: Data) {
        let values: [String: SettingValue]
        do {
            values = try JSONDecoder().decode([String: SettingValue].self, from: body)
        } catch {
            let text = "The body must be a JSON object of setting names and values, e.g. {\"imageRotation\": 90, \"microphoneMuted\": true}."
            return (400, (try? Self.encoder.encode(["error": text])) ?? Data())
        }
        guard !values.isEmpty, values.count <= 256 else {
            return (400, (try? Self.encoder.encode(["error": "Write 1 to 256 settings at once."])) ?? Data())
        }
        // A form sends text: for a number, a rectangle or a switch, read it as the command line does.
        let model = Dictionary(live.controller.settingsModel().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var typed: [String: SettingValue] = [:]
        for (name, value) in values {
            if case .text(let text) = value, let descriptor = model[name], descriptor.kind != .choice {
                typed[name] = descriptor.parse(text)
            } else {
                typed[name] = value
            }
        }
        let result = live.controller.writeSettings(typed, by: "the web page")
        guard result.refused.isEmpty else {
            // The page shows `error`; the refusals and what did apply come along for scripts.
            struct Refused: Encodable {
                var error: String
                var result: SettingsResult
            }
            let text = result.refused.map { "\($0.name): \($0.reason)" }.joined(separator: "; ")
            return (422, (try? Self.encoder.encode(Refused(error: text, result: result))) ?? Data())
        }
        return (200, (try? Self.encoder.encode(result)) ?? Data())
    }

    func pairedStudios() async -> Data {
        struct Studio: Encodable {
            var id: String
            var name: String
            var pairedAt: Date
            var lastSeen: Date?
            var settingsReadOnly: Bool
        }
        let studios = live.controller.pairedDevices.map {
            Studio(id: $0.id, name: $0.name, pairedAt: $0.pairedAt, lastSeen: $0.lastSeen, settingsReadOnly: !$0.maySetSettings)
        }
        return (try? Self.encoder.encode(studios)) ?? Data("[]".utf8)
    }

    func metrics() -> [WebMetric] {
        let current = status()
        let liveNow = live.status
        var list: [WebMetric] = [
            WebMetric(name: "camo_studio_sessions", help: "Studio sessions now", kind: .gauge, value: Double(current.connections.count)),
            WebMetric(name: "camo_live_viewers", help: "WebRTC live viewers now", kind: .gauge, value: Double(liveNow.viewers)),
            WebMetric(name: "camo_rtsp_clients", help: "RTSP clients now", kind: .gauge, value: Double(liveNow.rtspClients)),
            WebMetric(name: "camo_live_frames_per_second", help: "Live view H.264 access units per second", kind: .gauge, value: Double(liveNow.framesPerSecond)),
            WebMetric(name: "camo_live_bitrate_bits_per_second", help: "Live view H.264 bitrate", kind: .gauge, value: Double(liveNow.bitrate)),
            WebMetric(name: "camo_live_frames_total", help: "Live view access units delivered", kind: .counter, value: Double(liveNow.framesDelivered)),
            WebMetric(name: "camo_privacy_switch_on", help: "1 while the camera is off (privacy switch)", kind: .gauge, value: current.paused ? 1 : 0),
        ]
        for connection in current.connections {
            let labels = ["studio": connection.studio, "studio_id": connection.studioId, "codec": connection.codec]
            list.append(WebMetric(name: "camo_frames_sent_total", help: "Video frames sent to a studio", kind: .counter, value: Double(connection.framesSent), labels: labels))
            list.append(WebMetric(name: "camo_frames_dropped_total", help: "Frames a studio missed (slower than the camera)", kind: .counter, value: Double(connection.framesDropped), labels: labels))
            list.append(WebMetric(name: "camo_frames_repeated_total", help: "Frames that repeated the previous camera frame", kind: .counter, value: Double(connection.framesRepeated), labels: labels))
            if let rtt = connection.roundTripMs {
                list.append(WebMetric(name: "camo_round_trip_seconds", help: "A studio's keep-alive round trip", kind: .gauge, value: rtt / 1000, labels: labels))
            }
        }
        return list
    }
}
