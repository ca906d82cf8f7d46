import CGStreamer
import CamoMedia
import Dispatch
import Foundation
import Logging
import Synchronization

/// Browser live view over WebRTC (the media side of WHEP): one webrtcbin pipeline per viewer, fed the agent's
/// shared H.264 access units and one shared Opus encoding, with talkback from one viewer's microphone at a time.
///
/// The HTTP side hands offers to ``answer(offer:id:)``, trickled candidates to ``addRemoteCandidates(id:sdpFragment:)``
/// and DELETEs to ``stop(id:)``. ``pushVideo(_:)`` and ``pushAudio(_:)`` never block: every viewer has its own
/// bounded queue; a viewer that falls behind drops frames and resumes at the next keyframe.
public final class WebRTCLiveView: Sendable {
    private struct State {
        var viewers: [String: WebRTCViewer] = [:]
        var talker: String?
        var speaker: WebRTCSpeaker?
        var volumePercent = 100
        var muted = false
        var onKeyframeNeeded: @Sendable () -> Void = {}
        var onViewerEnded: @Sendable (_ id: String, _ reason: String) -> Void = { _, _ in }
    }

    /// The elements every viewer needs, with the Debian package that installs each.
    static let requiredElements: [(element: String, package: String)] = [
        ("webrtcbin", "gstreamer1.0-plugins-bad"), ("nicesrc", "gstreamer1.0-nice"), ("dtlssrtpenc", "gstreamer1.0-plugins-bad"),
        ("h264parse", "gstreamer1.0-plugins-bad"), ("rtph264pay", "gstreamer1.0-plugins-good"),
        ("opusenc", "gstreamer1.0-plugins-base"), ("rtpopuspay", "gstreamer1.0-plugins-good"),
        ("appsrc", "gstreamer1.0-plugins-base"), ("appsink", "gstreamer1.0-plugins-base"),
        ("audioconvert", "gstreamer1.0-plugins-base"),
    ]
    /// The elements talkback needs on top.
    static let talkbackElements: [(element: String, package: String)] = [
        ("rtpopusdepay", "gstreamer1.0-plugins-good"), ("opusdec", "gstreamer1.0-plugins-base"),
        ("audioconvert", "gstreamer1.0-plugins-base"), ("audioresample", "gstreamer1.0-plugins-base"),
        ("volume", "gstreamer1.0-plugins-base"), ("valve", "libgstreamer1.0-0"),
    ]

    /// How long one negotiation step (a webrtcbin promise) may take.
    static let stepTimeout: Duration = .seconds(5)
    /// How long the answer waits for ICE gathering before going out with the candidates it has.
    static let gatherTimeout: Duration = .seconds(5)

    private let configuration: WebRTCConfiguration
    private let logger: Logger
    private let state = Mutex(State())
    private let encoder = Mutex<WebRTCOpusEncoder?>(nil)
    private let teardown = DispatchQueue(label: "camo.live.webrtc.teardown")

    /// Checks that GStreamer has what live view needs (and talkback, when a speaker is set).
    /// - Throws: `.missingElements` naming the Debian packages to install.
    public init(configuration: WebRTCConfiguration, logger: Logger) throws(LiveViewError) {
        GStreamerRuntime.shared.start()
        var needed = Self.requiredElements
        switch configuration.speaker {
        case .none: break
        case .alsa: needed += Self.talkbackElements + [("alsasink", "gstreamer1.0-alsa")]
        case .wavFile: needed += Self.talkbackElements + [("wavenc", "gstreamer1.0-plugins-good"), ("filesink", "libgstreamer1.0-0")]
        }
        let missing = needed.filter { !GStreamerRuntime.shared.hasElement($0.element) }
        if !missing.isEmpty {
            var packages: [String] = []
            for entry in missing where !packages.contains(entry.package) { packages.append(entry.package) }
            throw .missingElements(elements: missing.map(\.element), packages: packages)
        }
        self.configuration = configuration
        self.logger = logger
    }

    deinit { stopAll() }

    // MARK: Callbacks

    /// Called when a viewer needs a keyframe (a new viewer, or one that dropped frames); set once after init.
    public var onKeyframeNeeded: @Sendable () -> Void {
        get { state.withLock { $0.onKeyframeNeeded } }
        set { state.withLock { $0.onKeyframeNeeded = newValue } }
    }

    /// Called when a viewer's connection ended on its own (ICE failed, DTLS failed, the browser closed it, a
    /// pipeline error), after its pipeline is freed; not for ``stop(id:)``. Set once after init.
    public var onViewerEnded: @Sendable (_ id: String, _ reason: String) -> Void {
        get { state.withLock { $0.onViewerEnded } }
        set { state.withLock { $0.onViewerEnded = newValue } }
    }

    // MARK: Viewers

    /// Answers a browser's WHEP offer: builds the viewer's pipeline, negotiates, waits for ICE gathering (bounded)
    /// and returns the answer SDP carrying all candidates. An existing viewer with the same id is replaced.
    /// - Throws: `.malformedOffer`, `.noVideo`, `.noH264` for offers we cannot serve; `.negotiationFailed` when
    ///   webrtcbin fails or times out.
    public func answer(offer text: String, id: String) async throws(LiveViewError) -> String {
        let offer = try WebRTCOffer(sdp: text)
        stop(id: id)
        let events = WebRTCViewer.Events(
            ended: { [weak self] id, reason in self?.viewerEnded(id: id, reason: reason) },
            talkAudio: { [weak self] id, buffer in
                guard let self else { return gst_buffer_unref(buffer.pointer) }
                self.talkAudio(from: id, buffer)
            },
            isTalker: { [weak self] id in self?.currentTalker == id })
        if offer.audioIndex != nil { try startEncoder() }
        let viewer = try WebRTCViewer(id: id, offer: offer, configuration: configuration, events: events, logger: logger)
        state.withLock { $0.viewers[id] = viewer }
        do {
            let answer = try await viewer.negotiate(offerText: text, stepTimeout: Self.stepTimeout, gatherTimeout: Self.gatherTimeout)
            logger.info("webrtc viewer answered", metadata: ["viewer": "\(id)", "talkback": "\(offer.sendsMicrophone)"])
            state.withLock { $0.onKeyframeNeeded }()
            return answer
        } catch {
            logger.info("webrtc viewer negotiation failed", metadata: ["viewer": "\(id)", "error": "\(error)"])
            remove(viewer)
            throw error
        }
    }

    /// Adds trickled candidates from a WHEP PATCH (application/trickle-ice-sdpfrag): `a=candidate:` lines, each
    /// for the m-line named by the `a=mid:` (or `m=` line) before it; the first m-line when none is named.
    /// - Throws: `.unknownViewer` when no viewer has this id.
    public func addRemoteCandidates(id: String, sdpFragment: String) throws(LiveViewError) {
        guard let viewer = state.withLock({ $0.viewers[id] }) else { throw .unknownViewer(id) }
        var mline = 0
        var sectionsSeen = 0
        for raw in sdpFragment.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("m=") {
                mline = sectionsSeen
                sectionsSeen += 1
            } else if line.hasPrefix("a=mid:") {
                mline = viewer.offer.mlineIndex(mid: String(line.dropFirst(6))) ?? mline
            } else if line.hasPrefix("a=candidate:") {
                viewer.addCandidate(String(line.dropFirst(2)), mline: mline)
            }
        }
    }

    /// Ends that viewer and frees its pipeline; nothing happens for an unknown id.
    public func stop(id: String) {
        guard let viewer = state.withLock({ $0.viewers[id] }) else { return }
        remove(viewer)
    }

    /// Ends every viewer, talkback and the shared Opus encoder.
    public func stopAll() {
        let viewers = state.withLock { Array($0.viewers.values) }
        for viewer in viewers { remove(viewer) }
        encoder.withLock { encoder in
            encoder?.stop()
            encoder = nil
        }
    }

    /// The viewers with their connection state and counters.
    public var viewers: [WebRTCViewerStats] {
        let (viewers, talker) = state.withLock { (Array($0.viewers.values), $0.talker) }
        return viewers.map { viewer in
            let stats = viewer.stats
            return WebRTCViewerStats(
                id: viewer.id, state: stats.state, videoFramesSent: stats.sent, videoFramesDropped: stats.dropped,
                audioPackets: stats.audio, talking: talker == viewer.id)
        }.sorted { $0.id < $1.id }
    }

    private func remove(_ viewer: WebRTCViewer) {
        let speaker: WebRTCSpeaker? = state.withLock { state in
            if state.viewers[viewer.id] === viewer { state.viewers[viewer.id] = nil }
            guard state.talker == viewer.id else { return nil }
            state.talker = nil
            defer { state.speaker = nil }
            return state.speaker
        }
        viewer.stop()
        speaker?.stop()
    }

    private func viewerEnded(id: String, reason: String) {
        // Called on one of the viewer's own threads, which cannot stop its pipeline: end it from elsewhere.
        teardown.async { [weak self] in
            guard let self, let viewer = self.state.withLock({ $0.viewers[id] }) else { return }
            self.logger.info("webrtc viewer ended", metadata: ["viewer": "\(id)", "reason": "\(reason)"])
            self.remove(viewer)
            self.state.withLock { $0.onViewerEnded }(id, reason)
        }
    }

    // MARK: Media

    /// Hands an access unit to every viewer; never blocks. Viewers that need a keyframe make it ask for one.
    public func pushVideo(_ unit: LiveAccessUnit) {
        let viewers = state.withLock { Array($0.viewers.values) }
        var needKeyframe = false
        for viewer in viewers where viewer.push(unit) { needKeyframe = true }
        if needKeyframe { state.withLock { $0.onKeyframeNeeded }() }
    }

    /// Encodes captured audio once (Opus) and hands the packets to every viewer that takes audio; never blocks.
    public func pushAudio(_ chunk: AudioChunk) {
        guard state.withLock({ $0.viewers.values.contains { $0.offer.audioIndex != nil } }) else { return }
        encoder.withLock { $0 }?.push(chunk)
    }

    private func startEncoder() throws(LiveViewError) {
        let result: Result<Void, LiveViewError> = encoder.withLock { encoder in
            guard encoder == nil else { return .success(()) }
            do throws(LiveViewError) {
                encoder = try WebRTCOpusEncoder(logger: logger) { [weak self] packet in self?.opusPacket(packet) }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    private func opusPacket(_ packet: GstBufferRef) {
        let viewers = state.withLock { Array($0.viewers.values) }
        for viewer in viewers { viewer.push(opus: packet) }
    }

    // MARK: Talkback

    /// Whether talkback can be used (a speaker is configured).
    public var talkbackSupported: Bool { configuration.speaker != .none }

    /// The viewer whose microphone plays now, if any.
    public var currentTalker: String? { state.withLock { $0.talker } }

    /// Plays that viewer's microphone on the speaker (one talker at a time; calling it again for the current
    /// talker does nothing).
    /// - Throws: `.talkbackUnsupported`, `.unknownViewer`, `.noMicrophoneInOffer`, `.talkerBusy(currentId)`,
    ///   `.speakerFailed`.
    public func startTalkback(id: String) throws(LiveViewError) {
        guard talkbackSupported else { throw .talkbackUnsupported }
        enum Claim { case claimed(WebRTCViewer, volume: Int, muted: Bool), already }
        let claim: Result<Claim, LiveViewError> = state.withLock { state in
            guard let viewer = state.viewers[id] else { return .failure(.unknownViewer(id)) }
            guard viewer.offer.sendsMicrophone else { return .failure(.noMicrophoneInOffer) }
            if let talker = state.talker { return talker == id ? .success(.already) : .failure(.talkerBusy(talker)) }
            state.talker = id
            return .success(.claimed(viewer, volume: state.volumePercent, muted: state.muted))
        }
        guard case .claimed(let viewer, let volume, let muted) = try claim.get() else { return }
        let speaker: WebRTCSpeaker
        do {
            speaker = try WebRTCSpeaker(output: configuration.speaker, volumePercent: volume, muted: muted)
        } catch {
            state.withLock { if $0.talker == id { $0.talker = nil } }
            throw error
        }
        let kept = state.withLock { state in
            guard state.talker == id else { return false }
            state.speaker = speaker
            return true
        }
        guard kept else {
            speaker.stop()
            return
        }
        viewer.setTalking(true)
        logger.info("webrtc talkback started", metadata: ["viewer": "\(id)"])
    }

    /// Stops that viewer's talkback (nothing happens when it is not the talker).
    public func stopTalkback(id: String) {
        let ended: (WebRTCViewer?, WebRTCSpeaker?)? = state.withLock { state in
            guard state.talker == id else { return nil }
            state.talker = nil
            defer { state.speaker = nil }
            return (state.viewers[id], state.speaker)
        }
        guard let ended else { return }
        ended.0?.setTalking(false)
        ended.1?.stop()
        logger.info("webrtc talkback stopped", metadata: ["viewer": "\(id)"])
    }

    /// The speaker's volume (the settings' speakerVolumeLevel, 0–100) and mute, for the current and later talkers.
    public func setSpeaker(volumePercent: Int, muted: Bool) {
        let speaker = state.withLock { state in
            state.volumePercent = min(max(volumePercent, 0), 100)
            state.muted = muted
            return state.speaker
        }
        speaker?.setVolume(percent: volumePercent, muted: muted)
    }

    private func talkAudio(from id: String, _ buffer: GstBufferRef) {
        let speaker = state.withLock { $0.talker == id ? $0.speaker : nil }
        guard let speaker else {
            gst_buffer_unref(buffer.pointer)
            return
        }
        speaker.play(buffer)
    }
}
