import CamoMedia
import CamoProducerKit
import CamoWeb
import Foundation

/// What `camo-agent status` shows: the agent, its state, and every studio session with its counters.
public struct AgentStatus: Sendable, Codable, Equatable {
    /// One studio session as the status shows it.
    public struct Connection: Sendable, Codable, Equatable {
        /// The studio's id.
        public var studioId: String
        /// The studio's name.
        public var studio: String
        /// The studio's address and port.
        public var address: String
        /// The link it came over: "loopback", "usb (IFNAME)" or "network".
        public var link: String? = nil
        /// When the session was established.
        public var since: Date
        /// The video codec sent: `bgra` or `jpeg`.
        public var codec: String
        /// The frame size sent, `WxH`.
        public var size: String
        /// Sample frames per audio packet for this studio.
        public var audioSamplesRequired: Int
        /// Whether the studio asked for a pause.
        public var pausedByStudio: Bool
        /// Video frames sent (repeats included).
        public var framesSent: UInt64
        /// Frames not sent because the studio was slower than the camera.
        public var framesDropped: UInt64
        /// Frames sent that repeated the previous camera frame.
        public var framesRepeated: UInt64
        /// Audio packets sent.
        public var audioPackets: UInt64
        /// The last keep-alive round trip in milliseconds, nil until measured.
        public var roundTripMs: Double?
    }

    /// The agent's stable id.
    public var agentId: String
    /// The agent's name.
    public var name: String
    /// The agent's process id.
    public var pid: Int32
    /// The TCP port, while running.
    public var port: Int?
    /// `stopped`, `notConnected`, `active` or `paused`.
    public var state: String
    /// Whether the privacy switch is on.
    public var paused: Bool
    /// The camera in use.
    public var camera: String
    /// The microphone in use.
    public var microphone: String
    /// Whether the microphone is muted (studios get silence); nil from an agent that predates muting.
    public var microphoneMuted: Bool?
    /// The microphone's device and counters (nil for the synthetic tone).
    public var microphoneDetail: MicrophoneStatus?
    /// The capture size, `WxH`: the largest any studio asked for.
    public var captureSize: String
    /// Every studio session, primary first.
    public var connections: [Connection]
    /// Live view: the page, browsers, RTSP (nil when the page and RTSP are off, or from an older agent).
    public var live: LiveStatus? = nil
    /// The event detectors (nil when they are off, or from an older agent).
    public var events: EventsStatus? = nil

    /// A few lines for people.
    public var humanDescription: String {
        var lines = [
            "agent \(name) (\(agentId)) pid \(pid) port \(port.map(String.init) ?? "-")",
            "state \(state)\(paused ? " (privacy switch on)" : "")",
            "camera \(camera); microphone \(microphone)\(microphoneMuted == true ? " (muted)" : ""); capture \(captureSize)",
        ]
        if let m = microphoneDetail {
            lines.append(
                "microphone \(m.lost ? "LOST (sending silence)" : m.setup ?? "not open"): captured \(m.capturedFrames) frames, "
                    + "overruns \(m.overruns), suspends \(m.suspends), filled \(m.filledFrames), dropped \(m.droppedFrames), "
                    + "silent while lost \(m.silentFramesWhileLost), losses \(m.losses)")
        }
        if let live {
            if let url = live.pageURL {
                lines.append("page \(url) (certificate SHA-256 \(live.certificateSHA256 ?? "?")): \(live.viewers) viewer(s)"
                    + (live.talkback ? ", talkback on" : "") + (live.talkbackProblem.map { "; talkback unsupported: \($0)" } ?? ""))
            } else if let problem = live.pageProblem {
                lines.append("page off: \(problem)")
            }
            if let url = live.rtspURL {
                lines.append("rtsp \(url): \(live.rtspClients) client(s)")
            } else if let problem = live.rtspProblem {
                lines.append("rtsp off: \(problem)")
            }
            if live.feedActive { lines.append("live H.264 \(live.framesPerSecond) fps, \(live.bitrate / 1000) kb/s") }
        }
        if let events {
            let e = events.counters
            lines.append(
                "events: \(events.triggers.isEmpty ? "no triggers on" : events.triggers.joined(separator: ", ")); \(e.ongoing) running, "
                    + "\(e.notices) notices; judged \(e.framesAnalyzed) frames (skipped \(e.framesSkipped)), \(e.chunksAnalyzed) audio chunks (dropped \(e.chunksDropped))")
            if let w = events.webhook {
                lines.append(
                    "webhook: delivered \(w.delivered), retried \(w.retried), failed \(w.failed), dropped \(w.dropped), pending \(w.pending)"
                        + (w.lastError.map { "; last error: \($0)" } ?? ""))
            }
        }
        if connections.isEmpty { lines.append("no studios connected") }
        let formatter = ISO8601DateFormatter()
        for c in connections {
            let rtt = c.roundTripMs.map { String(format: "%.1f ms", $0) } ?? "-"
            lines.append(
                "studio \(c.studio) [\(c.studioId)] from \(c.address)\(c.link.map { " over \($0)" } ?? "") since \(formatter.string(from: c.since)): "
                    + "\(c.codec) \(c.size), \(c.audioSamplesRequired) samples/packet, sent \(c.framesSent), "
                    + "dropped \(c.framesDropped), repeated \(c.framesRepeated), audio packets \(c.audioPackets), rtt \(rtt)"
                    + (c.pausedByStudio ? ", paused by studio" : ""))
        }
        return lines.joined(separator: "\n")
    }
}

/// A microphone's device and counters, as the status shows them.
public struct MicrophoneStatus: Sendable, Codable, Equatable {
    /// What the device was opened with (nil until it opened).
    public var setup: String?
    /// True while the device is gone (silence flows).
    public var lost: Bool
    /// Frames read from the device.
    public var capturedFrames: UInt64
    /// Overruns recovered.
    public var overruns: Int
    /// Suspends recovered.
    public var suspends: Int
    /// Silent frames inserted for measured gaps.
    public var filledFrames: UInt64
    /// Captured frames dropped because they overlapped.
    public var droppedFrames: UInt64
    /// Silent frames sent while the device was gone.
    public var silentFramesWhileLost: UInt64
    /// Times the device went away.
    public var losses: Int

    /// A status from its parts.
    public init(setup: String?, lost: Bool, capturedFrames: UInt64, overruns: Int, suspends: Int, filledFrames: UInt64,
                droppedFrames: UInt64, silentFramesWhileLost: UInt64, losses: Int) {
        self.setup = setup
        self.lost = lost
        self.capturedFrames = capturedFrames
        self.overruns = overruns
        self.suspends = suspends
        self.filledFrames = filledFrames
        self.droppedFrames = droppedFrames
        self.silentFramesWhileLost = silentFramesWhileLost
        self.losses = losses
    }
}

extension CamoController {
    /// The status as `camo-agent status` reports it.
    public func status(
        camera: String, microphone: String, microphoneDetail: MicrophoneStatus? = nil, live: LiveStatus? = nil, events: EventsStatus? = nil
    ) -> AgentStatus {
        let size = preferredCaptureSize
        return AgentStatus(
            agentId: configuration.identity.id, name: configuration.identity.name, pid: getpid(), port: port,
            state: state?.word ?? "stopped", paused: isPaused, camera: camera, microphone: microphone,
            microphoneMuted: isMicrophoneMuted, microphoneDetail: microphoneDetail,
            captureSize: "\(size.width)x\(size.height)",
            connections: connections.map { c in
                AgentStatus.Connection(
                    studioId: c.studioId, studio: c.name, address: c.address, link: "\(c.link)", since: c.since,
                    codec: "\(c.codec)", size: "\(c.videoSize.width)x\(c.videoSize.height)",
                    audioSamplesRequired: c.audioSamplesRequired, pausedByStudio: c.pausedByStudio,
                    framesSent: c.statistics.framesSent, framesDropped: c.statistics.framesDropped,
                    framesRepeated: c.statistics.framesRepeated, audioPackets: c.statistics.audioPackets,
                    roundTripMs: c.statistics.roundTripNanos.map { Double($0) / 1e6 })
            }, live: live, events: events)
    }
}

/// The event detectors in `camo-agent status` and `/api/status`.
public struct EventsStatus: Sendable, Codable, Equatable {
    /// The triggers that run (enabled and supported).
    public var triggers: [String]
    /// The monitor's counters.
    public var counters: EventMonitor.Stats
    /// The webhook's counters, when one is configured.
    public var webhook: WebhookStats?
}
