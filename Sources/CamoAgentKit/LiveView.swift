import CamoCapture
import CamoLive
import CamoMedia
import CamoProducerKit
import CamoWeb
import Foundation
import Logging
import Synchronization

/// Live view beyond the studios: WebRTC viewers in browsers (WHEP, with a lease and talkback) and the RTSP server
/// for NVRs, both fed by one ``LiveFeed`` on the controller's shared H.264 rendition, and the HTTPS page that
/// carries WHEP, the JSON API and `/metrics`.
///
/// Each part that cannot start (a port in use, GStreamer's elements missing, no speaker) is off with its reason,
/// logged and shown in the status; the studios stream on regardless. The feed exists only while someone watches,
/// so an agent nobody watches in a browser or an NVR encodes nothing for them.
final class LiveView: Sendable {
    struct Parts {
        var webrtc: WebRTCLiveView?
        var rtsp: RTSPLiveServer?
        var web: WebServer?
        var feed: LiveFeed?
        /// Seconds in a row with nobody watching (the feed goes after 3).
        var idleSeconds = 0
        /// Why talkback cannot play (nil: it can).
        var speakerProblem: String?
        var rtspURL: String?
        var rtspProblem: String?
        var webProblem: String?
        var webrtcProblem: String?
        /// The last access unit's source frame number and capture time (the browser test's latency reference).
        var lastFrame: (sequence: UInt64, captureTime: UInt64)?
        var frames = RateMeter()
        var bytes = RateMeter()
        var framesDelivered: UInt64 = 0
    }

    let controller: CamoController
    let configuration: AgentConfiguration
    let logger: Logger
    let clock: any MonotonicClock
    let parts = Mutex(Parts())
    let speaker: SpeakerSettings?
    private let watcher = Mutex<Task<Void, Never>?>(nil)
    /// Where pipelines are torn down and the speaker drained (GStreamer's state changes may block for a while):
    /// never on the tasks' shared threads, which the pacer runs on too.
    let teardown = DispatchQueue(label: "camo.live.teardown")

    private init(controller: CamoController, configuration: AgentConfiguration, clock: any MonotonicClock, logger: Logger, speaker: SpeakerSettings?) {
        self.controller = controller
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.speaker = speaker
    }

    /// Starts what the configuration asks for. Never throws: a part that cannot start is off, with its reason.
    static func start(
        configuration: AgentConfiguration, controller: CamoController, clock: any MonotonicClock,
        status: @escaping @Sendable () -> AgentStatus, events: EventMonitor? = nil, recordings: ClipRecorder? = nil, logger: Logger
    ) async -> LiveView {
        var parts = Parts()
        if configuration.web || configuration.rtsp {
            let version = GStreamerRuntime.shared.start()
            logger.info("Live view uses \(version)")
        }
        if configuration.web {
            let speakerChoice = configuration.speaker
            parts.speakerProblem = speakerChoice == "none" ? "talkback is off (--speaker none)" : SpeakerProbe.problem(with: speakerChoice)
            let output: SpeakerOutput
            if let path = speakerChoice.wavFilePath {
                output = .wavFile(path: path)
                parts.speakerProblem = nil
            } else {
                output = parts.speakerProblem == nil ? .alsa(device: speakerChoice == "auto" ? "default" : speakerChoice) : .none
            }
            do {
                var webrtcConfiguration = WebRTCConfiguration()
                webrtcConfiguration.speaker = output
                do {
                    parts.webrtc = try WebRTCLiveView(configuration: webrtcConfiguration, logger: logger)
                } catch let error where output != .none {
                    // Talkback's elements missing must not take live view with it: without a speaker, once more.
                    parts.speakerProblem = "\(error)"
                    webrtcConfiguration.speaker = .none
                    parts.webrtc = try WebRTCLiveView(configuration: webrtcConfiguration, logger: logger)
                }
            } catch {
                parts.webrtcProblem = "\(error)"
                logger.error("Live view in browsers is off", metadata: ["reason": "\(error)"])
            }
            if let problem = parts.speakerProblem {
                logger.notice("Talkback is unsupported", metadata: ["reason": "\(problem)"])
            }
        }
        var speaker: SpeakerSettings?
        if let webrtc = parts.webrtc, webrtc.talkbackSupported {
            speaker = SpeakerSettings(
                speaker: configuration.speaker, saved: { controller.savedSetting($0) },
                apply: { level in webrtc.setSpeaker(volumePercent: level.volume, muted: level.muted) })
        }
        let live = LiveView(controller: controller, configuration: configuration, clock: clock, logger: logger, speaker: speaker)
        if let speaker { controller.addSettingsProvider(speaker) }
        parts.webrtc?.onKeyframeNeeded = { [weak live] in live?.requestKeyframe() }
        parts.webrtc?.onViewerEnded = { [weak live] id, reason in live?.viewerEnded(id: id, reason: reason) }

        if configuration.rtsp {
            do {
                let password = try RTSPPassword.loadOrCreate(configured: configuration.rtspPassword, stateDirectory: configuration.stateDir)
                var rtspConfiguration = RTSPConfiguration()
                rtspConfiguration.port = configuration.rtspPort
                rtspConfiguration.bindAddress = configuration.rtspHost
                rtspConfiguration.credentials = (username: configuration.rtspUser, password: password)
                let server = try RTSPLiveServer(configuration: rtspConfiguration, logger: logger)
                // A client's stream starts (or one joins it): the feed starts now if it is not running, with a keyframe.
                server.onKeyframeNeeded = { [weak live] in
                    live?.ensureFeed()
                    live?.requestKeyframe()
                }
                try server.start()
                parts.rtsp = server
                parts.rtspURL = server.url
                logger.info("RTSP for NVRs", metadata: ["url": "\(server.url)", "user": "\(configuration.rtspUser)"])
            } catch {
                parts.rtspProblem = "\(error)"
                logger.error("RTSP is off", metadata: ["reason": "\(error)"])
            }
        }
        live.parts.withLock { $0 = parts }

        if configuration.web {
            var webConfiguration = WebConfiguration(stateDirectory: URL(fileURLWithPath: configuration.stateDir))
            webConfiguration.host = configuration.webHost
            webConfiguration.port = configuration.webPort
            webConfiguration.leaseSeconds = configuration.leaseSeconds
            webConfiguration.maxViewers = configuration.maxViewers
            webConfiguration.loopbackWithoutToken = configuration.webLoopbackWithoutToken
            let host = ProcessInfo.processInfo.hostName
            webConfiguration.certificateHostnames = [host, host + ".local"]
            let backend = LiveWebBackend(live: live, status: status, events: events, recordings: recordings)
            let server = WebServer(configuration: webConfiguration, backend: backend, clock: clock, logger: logger)
            do {
                try await server.start()
                live.parts.withLock { $0.web = server }
                logger.info(
                    "The page is up", metadata: [
                        "url": "\(pageURL(configuration, port: server.port))",
                        "certificateSHA256": "\(server.certificateFingerprint ?? "?")",
                    ])
            } catch {
                live.parts.withLock { $0.webProblem = "\(error)" }
                logger.error("The page is off", metadata: ["reason": "\(error)"])
            }
        }
        live.startWatcher()
        return live
    }

    /// The page's address: the host name when it listens on every interface, and the port it bound.
    static func pageURL(_ configuration: AgentConfiguration, port: Int?) -> String {
        let host = configuration.webHost == "0.0.0.0" ? ProcessInfo.processInfo.hostName : configuration.webHost
        return "https://\(host):\(port ?? configuration.webPort)/"
    }

    /// Stops the page, the RTSP server, every viewer and the feed.
    func stop() async {
        watcher.withLock { $0 }?.cancel()
        let (web, webrtc, rtsp, feed) = parts.withLock { parts in
            defer {
                parts.web = nil
                parts.feed = nil
            }
            return (parts.web, parts.webrtc, parts.rtsp, parts.feed)
        }
        await web?.stop()
        webrtc?.stopAll()
        rtsp?.stop()
        feed?.remove()
    }

    // MARK: The feed

    /// Adds the feed if there is none (a viewer is about to start).
    func ensureFeed() {
        let needed = parts.withLock { parts -> Bool in
            parts.idleSeconds = 0
            return parts.feed == nil
        }
        guard needed else { return }
        let request = LiveFeedRequest(size: configuration.liveVideoSize, bitrate: configuration.liveBitrateKbps * 1_000)
        do {
            let feed = try controller.addLiveFeed(
                request,
                video: { [weak self] unit in self?.deliver(unit) },
                audio: { [weak self] chunk in self?.deliver(chunk) })
            let extra = parts.withLock { parts -> LiveFeed? in
                if parts.feed != nil { return feed }
                parts.feed = feed
                return nil
            }
            extra?.remove()
        } catch {
            logger.error("Live view has no picture", metadata: ["reason": "\(error)"])
        }
    }

    private func deliver(_ unit: LiveVideo) {
        let now = clock.now.nanoseconds
        let (webrtc, rtsp) = parts.withLock { parts in
            parts.lastFrame = (unit.sourceSequence, unit.captureTime)
            parts.frames.add(at: now)
            parts.bytes.add(unit.data.count, at: now)
            parts.framesDelivered += 1
            return (parts.webrtc, parts.rtsp)
        }
        let access = LiveAccessUnit(data: unit.data, isKeyframe: unit.isKeyframe, captureTime: unit.captureTime, size: unit.size)
        webrtc?.pushVideo(access)
        rtsp?.pushVideo(access)
    }

    private func deliver(_ chunk: AudioChunk) {
        let (webrtc, rtsp) = parts.withLock { ($0.webrtc, $0.rtsp) }
        webrtc?.pushAudio(chunk)
        rtsp?.pushAudio(chunk)
    }

    func requestKeyframe() {
        parts.withLock { $0.feed }?.requestKeyframe()
    }

    /// Once a second: the feed goes when nobody has watched for 3 s.
    private func startWatcher() {
        let task = Task { [weak self, clock] in
            while !Task.isCancelled {
                try? await clock.sleep(until: clock.now.nanoseconds + 1_000_000_000)
                guard let self else { return }
                let idle = self.parts.withLock { parts -> LiveFeed? in
                    // RTSP counts once its stream is set up: that takes an authenticated DESCRIBE, so a bare TCP
                    // connection (a port scan) keeps no encoder running.
                    let watching = (parts.webrtc?.viewers.count ?? 0) + (parts.rtsp?.isStreaming == true ? 1 : 0)
                    parts.idleSeconds = watching > 0 ? 0 : parts.idleSeconds + 1
                    guard parts.idleSeconds >= 3, let feed = parts.feed else { return nil }
                    parts.feed = nil
                    return feed
                }
                if let idle {
                    idle.remove()
                    self.logger.info("Live feed stopped (nobody watches)")
                }
                if self.parts.withLock({ $0.rtsp?.isStreaming == true && $0.feed == nil }) { self.ensureFeed() }
            }
        }
        watcher.withLock { $0 = task }
    }

    // MARK: Viewers (the page's backend)

    func viewerEnded(id: String, reason: String) {
        logger.info("Live viewer ended", metadata: ["id": "\(id)", "reason": "\(reason)"])
        parts.withLock { $0.web }?.viewerEnded(id: id)
    }

    /// What the status shows of live view.
    var status: LiveStatus {
        let now = clock.now.nanoseconds
        return parts.withLock { parts in
            LiveStatus(
                pageURL: parts.web.map { Self.pageURL(configuration, port: $0.port) },
                pageProblem: parts.webProblem ?? parts.webrtcProblem,
                certificateSHA256: parts.web?.certificateFingerprint,
                viewers: parts.webrtc?.viewers.count ?? 0,
                talkback: parts.webrtc?.currentTalker != nil,
                talkbackProblem: parts.speakerProblem,
                rtspURL: parts.rtspURL, rtspProblem: parts.rtspProblem, rtspClients: parts.rtsp?.clientCount ?? 0,
                feedActive: parts.feed != nil, framesPerSecond: parts.frames.perSecond(at: now),
                bitrate: parts.bytes.perSecond(at: now) * 8, framesDelivered: parts.framesDelivered,
                lastFrameSequence: parts.lastFrame?.sequence, lastFrameCaptureTime: parts.lastFrame?.captureTime)
        }
    }
}

/// Live view in the status (`camo-agent status`, the page, `/api/status`).
public struct LiveStatus: Sendable, Codable, Equatable {
    /// The page's address, while it is up.
    public var pageURL: String?
    /// Why the page or browser live view is off.
    public var pageProblem: String?
    /// The SHA-256 fingerprint of the page's certificate (compare it with what the browser shows).
    public var certificateSHA256: String?
    /// WebRTC viewers now.
    public var viewers: Int
    /// Whether a viewer is talking.
    public var talkback: Bool
    /// Why talkback is unsupported (nil: it works).
    public var talkbackProblem: String?
    /// The RTSP address, while it serves.
    public var rtspURL: String?
    /// Why RTSP is off.
    public var rtspProblem: String?
    /// RTSP clients now.
    public var rtspClients: Int
    /// Whether the live feed runs (someone watches).
    public var feedActive: Bool
    /// Access units per second over the last second.
    public var framesPerSecond: Int
    /// Live H.264 bits per second over the last second.
    public var bitrate: Int
    /// Access units delivered since start.
    public var framesDelivered: UInt64
    /// The last access unit's source frame number and capture time (monotonic ns): a reference for latency.
    public var lastFrameSequence: UInt64?
    /// See ``lastFrameSequence``.
    public var lastFrameCaptureTime: UInt64?
}

extension String {
    /// `file:PATH.wav` as a speaker: talkback written to a WAV file (tests, or to keep what was said).
    var wavFilePath: String? {
        guard hasPrefix("file:") else { return nil }
        let path = String(dropFirst(5))
        return path.isEmpty ? nil : path
    }
}
