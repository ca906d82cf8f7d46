import CGStreamer
import CamoMedia
import Logging
import Synchronization

/// One browser viewer: its own pipeline (appsrc for H.264 and for the shared Opus packets, payloaders, webrtcbin),
/// its bounded queue, its talkback branch. Created and driven by ``WebRTCLiveView``.
final class WebRTCViewer: Sendable {
    /// What a viewer reports back to its owner, from GStreamer's threads.
    struct Events: Sendable {
        /// The connection ended (ICE or DTLS failed, the peer closed, a pipeline error); called once.
        var ended: @Sendable (_ id: String, _ reason: String) -> Void
        /// Decoded talkback audio (F32LE interleaved stereo, 48 kHz) while this viewer's valve is open.
        var talkAudio: @Sendable (_ id: String, _ buffer: GstBufferRef) -> Void
        /// Whether this viewer's incoming audio should play now (its valve state when the branch appears).
        var isTalker: @Sendable (_ id: String) -> Bool
    }

    private struct State {
        var stopped = false
        var ended = false
        var waitingForKeyframe = true
        /// A keyframe was asked for in this wait (a viewer asks once per wait: a stalled one does not make every
        /// viewer's stream all keyframes; the GOP's own keyframes give it its next chance).
        var askedForKeyframe = false
        var videoSent = 0
        var videoDropped = 0
        var audioPackets = 0
        var connection = "new"
        var talkValve: GstElementRef?
        var talkElements: [GstElementRef] = []
    }

    let id: String
    let offer: WebRTCOffer
    /// The pipeline's base time on the monotonic clock: a buffer captured at `t` has running time `t - baseTime`.
    let baseTime: UInt64
    private let pipeline: GstElementRef
    private let webrtc: GstElementRef
    private let videoSource: GstElementRef
    private let audioSource: GstElementRef?
    private let queueLimit: UInt64
    private let talkbackEnabled: Bool
    private let events: Events
    private let logger: Logger
    private let gathered = WebRTCSignal()
    private let state = Mutex(State())

    /// Opus packets waiting per viewer at most (1 s of 20 ms packets).
    static let audioQueuePackets: UInt64 = 50

    /// Builds and starts the viewer's pipeline for `offer`.
    init(
        id: String, offer: WebRTCOffer, configuration: WebRTCConfiguration, events: Events, logger: Logger
    ) throws(LiveViewError) {
        self.id = id
        self.offer = offer
        self.events = events
        self.logger = logger
        queueLimit = UInt64(max(1, configuration.videoQueueFrames))
        talkbackEnabled = configuration.speaker != .none
        var description = """
            webrtcbin name=webrtc bundle-policy=max-bundle \
            appsrc name=video is-live=true format=time do-timestamp=false block=false max-bytes=0 \
            caps="video/x-h264,stream-format=byte-stream,alignment=au" \
            ! h264parse ! rtph264pay config-interval=-1 aggregate-mode=zero-latency \
            ! application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=\(offer.h264PayloadType) \
            ! webrtc.sink_\(offer.videoIndex)
            """
        if let audioIndex = offer.audioIndex, let opus = offer.opusPayloadType {
            description += """
                 appsrc name=audio is-live=true format=time do-timestamp=false block=false max-bytes=0 \
                caps="audio/x-opus,rate=48000,channels=2,channel-mapping-family=0" \
                ! rtpopuspay pt=\(opus) \
                ! application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=\(opus) \
                ! webrtc.sink_\(audioIndex)
                """
        }
        let pipeline = try GstCalls.launch(description).get()
        guard let webrtc = GstCalls.child(pipeline, "webrtc"), let video = GstCalls.child(pipeline, "video") else {
            GstCalls.stop(pipeline)
            throw .negotiationFailed("the viewer pipeline is incomplete")
        }
        self.pipeline = pipeline
        self.webrtc = webrtc
        videoSource = video
        audioSource = offer.audioIndex == nil ? nil : GstCalls.child(pipeline, "audio")
        if let stun = configuration.stunServer {
            camo_g_object_set_string(webrtc.pointer, "stun-server", stun.hasPrefix("stun://") ? stun : "stun://" + stun)
        }
        if let range = configuration.portRange, let agent = camo_g_object_get_object(webrtc.pointer, "ice-agent") {
            camo_g_object_set_uint(agent, "min-rtp-port", guint(range.lowerBound))
            camo_g_object_set_uint(agent, "max-rtp-port", guint(range.upperBound))
            g_object_unref(agent)
        }
        baseTime = GstCalls.monotonicNow()
        connectSignals()
        guard GstCalls.play(pipeline, baseTime: baseTime) else {
            stop()
            throw .negotiationFailed("the viewer pipeline did not start")
        }
    }

    private func connectSignals() {
        let stateChanged: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            _, _, data in
            guard let data else { return }
            Unmanaged<WebRTCViewer>.fromOpaque(data).takeUnretainedValue().connectionChanged()
        }
        let padAdded: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, UnsafeMutableRawPointer?) -> Void = {
            _, pad, data in
            guard let data, let pad else { return }
            Unmanaged<WebRTCViewer>.fromOpaque(data).takeUnretainedValue().incomingPad(pad)
        }
        let raw = UnsafeMutableRawPointer(webrtc.pointer)
        GstCalls.connect(raw, "notify::ice-gathering-state", unsafeBitCast(stateChanged, to: GCallback.self), context: self)
        GstCalls.connect(raw, "notify::ice-connection-state", unsafeBitCast(stateChanged, to: GCallback.self), context: self)
        GstCalls.connect(raw, "notify::connection-state", unsafeBitCast(stateChanged, to: GCallback.self), context: self)
        GstCalls.connect(raw, "pad-added", unsafeBitCast(padAdded, to: GCallback.self), context: self)
        // libnice (0.1.21) has no ICE consent checks, so a browser that goes away leaves ICE "connected": RTCP
        // tells instead. A closing browser sends an RTCP BYE; one that vanished stops its receiver reports and
        // rtpbin times its source out (five RTCP intervals).
        if let rtpbin = GstCalls.child(webrtc, "rtpbin") {
            let bye: @convention(c) (UnsafeMutableRawPointer?, guint, guint, UnsafeMutableRawPointer?) -> Void = { _, _, _, data in
                guard let data else { return }
                Unmanaged<WebRTCViewer>.fromOpaque(data).takeUnretainedValue().end("the browser closed the connection (RTCP BYE)")
            }
            let timeout: @convention(c) (UnsafeMutableRawPointer?, guint, guint, UnsafeMutableRawPointer?) -> Void = { _, _, _, data in
                guard let data else { return }
                Unmanaged<WebRTCViewer>.fromOpaque(data).takeUnretainedValue().end("the browser stopped responding (no RTCP)")
            }
            let rtpbinRaw = UnsafeMutableRawPointer(rtpbin.pointer)
            GstCalls.connect(rtpbinRaw, "on-bye-ssrc", unsafeBitCast(bye, to: GCallback.self), context: self)
            GstCalls.connect(rtpbinRaw, "on-timeout", unsafeBitCast(timeout, to: GCallback.self), context: self)
            rtpbin.release()
        } else {
            logger.warning("webrtc: webrtcbin has no rtpbin child; viewers that vanish are not detected", metadata: ["viewer": "\(id)"])
        }
        GstCalls.watchBus(pipeline, context: self) { _, message, data in
            if let message, let data, camo_message_type(message) == GST_MESSAGE_ERROR {
                var text: UnsafeMutablePointer<gchar>?
                var debug: UnsafeMutablePointer<gchar>?
                camo_message_error_text(message, &text, &debug)
                let viewer = Unmanaged<WebRTCViewer>.fromOpaque(data).takeUnretainedValue()
                let reason = GstCalls.take(text) ?? "unknown"
                viewer.logger.debug("webrtc viewer pipeline error", metadata: ["viewer": "\(viewer.id)", "debug": "\(GstCalls.take(debug) ?? "")"])
                viewer.end("pipeline error: \(reason)")
            }
            return GST_BUS_DROP
        }
    }

    // MARK: Negotiation

    /// Applies the browser's offer, creates and applies the answer, waits for ICE gathering (at most
    /// `gatherTimeout`) and returns the answer SDP with its candidates.
    func negotiate(offerText: String, stepTimeout: Duration, gatherTimeout: Duration) async throws(LiveViewError) -> String {
        guard let offerDescription = camo_webrtc_description_from_text(GST_WEBRTC_SDP_TYPE_OFFER, offerText) else {
            throw .malformedOffer("GStreamer's SDP parser rejected it")
        }
        defer { gst_webrtc_session_description_free(offerDescription) }
        // A reference of our own for the whole negotiation: a stop meanwhile (DELETE, the lease, shutdown) frees the
        // viewer's, and the promises below then time out instead of touching freed memory.
        guard let webrtc = retainedWebRTC() else { throw .negotiationFailed("the viewer was stopped") }
        defer { gst_object_unref(UnsafeMutableRawPointer(webrtc)) }
        try await step("applying the browser's offer", stepTimeout) { camo_webrtc_set_remote_description(webrtc, offerDescription, $0) }
        guard let answerPromise = await GstCalls.settle(timeout: stepTimeout, { camo_webrtc_create_answer(webrtc, $0) }) else {
            throw .negotiationFailed("creating the answer timed out")
        }
        defer { gst_promise_unref(answerPromise) }
        var failure: UnsafeMutablePointer<gchar>?
        guard camo_webrtc_promise_succeeded(answerPromise, &failure) != 0 else {
            throw .negotiationFailed("creating the answer failed: \(GstCalls.take(failure) ?? "unknown")")
        }
        guard let answer = camo_webrtc_promise_description(answerPromise, "answer") else {
            throw .negotiationFailed("webrtcbin created no answer")
        }
        defer { gst_webrtc_session_description_free(answer) }
        try await step("applying the answer", stepTimeout) { camo_webrtc_set_local_description(webrtc, answer, $0) }
        if camo_g_object_get_int(webrtc, "ice-gathering-state") != Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue) {
            if await !gathered.wait(timeout: gatherTimeout) {
                logger.info("webrtc: ICE gathering did not complete in time; answering with the candidates so far", metadata: ["viewer": "\(id)"])
            }
        }
        guard let text = GstCalls.take(camo_webrtc_description_text(webrtc, "local-description")) else {
            throw .negotiationFailed("webrtcbin has no local description")
        }
        return text
    }

    private func step(
        _ name: String, _ timeout: Duration, _ emit: (UnsafeMutablePointer<GstPromise>) -> Void
    ) async throws(LiveViewError) {
        guard let promise = await GstCalls.settle(timeout: timeout, emit) else { throw .negotiationFailed("\(name) timed out") }
        defer { gst_promise_unref(promise) }
        var failure: UnsafeMutablePointer<gchar>?
        guard camo_webrtc_promise_succeeded(promise, &failure) != 0 else {
            throw .negotiationFailed("\(name) failed: \(GstCalls.take(failure) ?? "unknown")")
        }
    }

    /// Adds trickled remote candidates ("candidate:..." values) for m-line `mline`; nothing once stopped.
    func addCandidate(_ candidate: String, mline: Int) {
        guard let webrtc = retainedWebRTC() else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(webrtc)) }
        camo_webrtc_add_ice_candidate(webrtc, guint(mline), candidate)
    }

    /// webrtcbin with a reference the caller releases, or nil once the viewer stopped (``stop()`` releases the
    /// viewer's own under the same lock).
    private func retainedWebRTC() -> UnsafeMutablePointer<GstElement>? {
        state.withLock { state in
            guard !state.stopped else { return nil }
            gst_object_ref(UnsafeMutableRawPointer(webrtc.pointer))
            return webrtc.pointer
        }
    }

    // MARK: State

    private func connectionChanged() {
        let gathering = camo_g_object_get_int(webrtc.pointer, "ice-gathering-state")
        if gathering == Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue) { gathered.fire() }
        let ice = GstWebRTCICEConnectionState(rawValue: UInt32(camo_g_object_get_int(webrtc.pointer, "ice-connection-state")))
        let connection = GstWebRTCPeerConnectionState(rawValue: UInt32(camo_g_object_get_int(webrtc.pointer, "connection-state")))
        let names = ["new", "connecting", "connected", "disconnected", "failed", "closed"]
        let text = names.indices.contains(Int(connection.rawValue)) ? names[Int(connection.rawValue)] : "unknown"
        state.withLock { $0.connection = text }
        if ice == GST_WEBRTC_ICE_CONNECTION_STATE_FAILED {
            end("ICE failed: the browser could not be reached")
        } else if connection == GST_WEBRTC_PEER_CONNECTION_STATE_FAILED {
            end("the connection failed (ICE or DTLS)")
        } else if connection == GST_WEBRTC_PEER_CONNECTION_STATE_CLOSED || ice == GST_WEBRTC_ICE_CONNECTION_STATE_CLOSED {
            end("the browser closed the connection")
        }
    }

    private func end(_ reason: String) {
        let first = state.withLock { state in
            defer { state.ended = true }
            return !state.ended && !state.stopped
        }
        if first { events.ended(id, reason) }
    }

    /// Ends the pipeline and frees it; idempotent. Not from one of the pipeline's own threads.
    func stop() {
        let elements: [GstElementRef]? = state.withLock { state in
            if state.stopped { return nil }
            state.stopped = true
            defer { state.talkElements = []; state.talkValve = nil }
            return state.talkElements
        }
        guard let elements else { return }
        GstCalls.stop(pipeline)
        for element in elements { element.release() }
        webrtc.release()
        videoSource.release()
        audioSource?.release()
    }

    var stats: (state: String, sent: Int, dropped: Int, audio: Int) {
        state.withLock { ($0.connection, $0.videoSent, $0.videoDropped, $0.audioPackets) }
    }

    // MARK: Media in

    /// Takes one access unit; returns true when the viewer needs a keyframe (it just dropped one).
    func push(_ unit: LiveAccessUnit) -> Bool {
        state.withLock { state in
            if state.stopped { return false }
            // Until ICE and DTLS are up, webrtcbin sends nothing: queueing then only fills the queue. The stream
            // starts at a keyframe asked for once the connection is there.
            guard state.connection == "connected" else {
                state.waitingForKeyframe = true
                state.askedForKeyframe = false
                return false
            }
            if state.waitingForKeyframe && !unit.isKeyframe {
                defer { state.askedForKeyframe = true }
                return !state.askedForKeyframe
            }
            guard unit.captureTime >= baseTime else { return false }
            if gst_app_src_get_current_level_buffers(videoSource.appSource) >= queueLimit {
                state.videoDropped += 1
                state.waitingForKeyframe = true
                defer { state.askedForKeyframe = true }
                return !state.askedForKeyframe
            }
            let buffer = unit.data.withUnsafeBytes { camo_gst_buffer_new_copy($0.baseAddress, gsize($0.count)) }
            guard let buffer else { return false }
            camo_gst_buffer_set_times(buffer, GstClockTime(unit.captureTime - baseTime), camo_gst_clock_time_none())
            if !unit.isKeyframe { camo_gst_buffer_set_flags(buffer, GST_BUFFER_FLAG_DELTA_UNIT.rawValue) }
            if gst_app_src_push_buffer(videoSource.appSource, buffer) == GST_FLOW_OK {
                state.videoSent += 1
                state.waitingForKeyframe = false
                state.askedForKeyframe = false
            }
            return false
        }
    }

    /// Takes one Opus packet stamped on the monotonic clock (the buffer stays the caller's).
    func push(opus buffer: GstBufferRef) {
        guard let audioSource else { return }
        state.withLock { state in
            let pts = UInt64(camo_gst_buffer_pts(buffer.pointer))
            guard !state.stopped, pts != UInt64(camo_gst_clock_time_none()), pts >= baseTime else { return }
            guard gst_app_src_get_current_level_buffers(audioSource.appSource) < Self.audioQueuePackets else { return }
            guard let copy = camo_gst_buffer_retimed(buffer.pointer, GstClockTime(pts - baseTime)) else { return }
            if gst_app_src_push_buffer(audioSource.appSource, copy) == GST_FLOW_OK { state.audioPackets += 1 }
        }
    }

    // MARK: Talkback

    /// Opens or closes this viewer's talkback valve.
    func setTalking(_ talking: Bool) {
        state.withLock { state in
            if let valve = state.talkValve { camo_g_object_set_bool(valve.pointer, "drop", talking ? 0 : 1) }
        }
    }

    /// A src pad of webrtcbin appeared (the browser's media arrives): audio goes to the talkback branch,
    /// anything else to a fakesink, so that no branch ends not-linked.
    private func incomingPad(_ pad: UnsafeMutablePointer<GstPad>) {
        let media = GstCalls.take(camo_pad_caps_media(pad))
        let talk = media == "audio" && talkbackEnabled && offer.sendsMicrophone
        let description = talk
            ? "rtpopusdepay ! opusdec ! audioconvert ! audioresample "
                + "! audio/x-raw,format=F32LE,rate=48000,channels=2,layout=interleaved "
                + "! valve name=talkvalve drop=true "
                + "! appsink name=talksink sync=false async=false emit-signals=true max-buffers=50 drop=true"
            : "fakesink sync=false async=false"
        guard let branch = GstCalls.bin(description) else {
            logger.warning("webrtc: could not build the branch for incoming media", metadata: ["viewer": "\(id)"])
            return
        }
        let added: Bool = state.withLock { state in
            guard !state.stopped else { return false }
            gst_bin_add(pipeline.bin, branch.pointer)
            if talk, let valve = GstCalls.child(branch, "talkvalve"), let sink = GstCalls.child(branch, "talksink") {
                state.talkValve = valve
                state.talkElements += [valve, sink]
                let newSample: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutableRawPointer?) -> GstFlowReturn = {
                    sink, data in
                    guard let sink, let data else { return GST_FLOW_OK }
                    let viewer = Unmanaged<WebRTCViewer>.fromOpaque(data).takeUnretainedValue()
                    let appSink = GstElementRef(pointer: sink).appSink
                    guard let sample = gst_app_sink_pull_sample(appSink), let buffer = camo_sample_take_buffer(sample) else {
                        return GST_FLOW_OK
                    }
                    viewer.events.talkAudio(viewer.id, GstBufferRef(pointer: buffer))
                    return GST_FLOW_OK
                }
                GstCalls.connect(UnsafeMutableRawPointer(sink.pointer), "new-sample", unsafeBitCast(newSample, to: GCallback.self), context: self)
            }
            return true
        }
        guard added else {
            branch.release()
            return
        }
        if let sinkPad = gst_element_get_static_pad(branch.pointer, "sink") {
            let result = gst_pad_link(pad, sinkPad)
            if result != GST_PAD_LINK_OK { logger.warning("webrtc: incoming pad did not link", metadata: ["viewer": "\(id)", "result": "\(result.rawValue)"]) }
            gst_object_unref(UnsafeMutableRawPointer(sinkPad))
        }
        _ = gst_element_sync_state_with_parent(branch.pointer)
        // Read the talker after the valve exists: a talkback start in between then cannot be lost.
        if talk { setTalking(events.isTalker(id)) }
        logger.debug("webrtc: incoming \(media ?? "media")", metadata: ["viewer": "\(id)", "talkback": "\(talk)"])
    }
}
