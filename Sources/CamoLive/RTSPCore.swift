import CGStreamer
import CamoMedia
import Logging
import Synchronization

/// What an RTSP server's GStreamer callbacks and its push calls share: the clients, the shared stream's sources
/// and the counts. The callbacks hold it retained (released when GStreamer drops the handler).
final class RTSPCore: Sendable {
    let logger: Logger
    let state = Mutex(RTSPState())

    init(logger: Logger) {
        self.logger = logger
    }

    /// One thing to push.
    enum Item {
        case video(LiveAccessUnit)
        case audio(AudioChunk)
    }

    /// What became of one push.
    private enum Outcome {
        /// The source has it.
        case pushed
        /// The source's queue was full.
        case dropped
        /// The source refused the buffer: the stream is stopping (flushing, at its end).
        case refused
        /// The pipeline does not play yet, or the item was captured before it started.
        case tooEarly
    }

    /// Hands `item` to the shared stream's source, never waiting: see ``RTSPLiveServer/pushVideo(_:)``.
    /// - Parameter now: CLOCK_MONOTONIC now, ns.
    func push(_ item: Item, now: UInt64) {
        let isVideo: Bool
        let captureTime: UInt64
        let queueLimit: Int
        switch item {
        case .video(let unit):
            isVideo = true
            captureTime = unit.captureTime
            queueLimit = RTSPLiveServer.videoQueueBytes
        case .audio(let chunk):
            isVideo = false
            captureTime = chunk.firstSampleTime
            queueLimit = RTSPLiveServer.audioQueueBytes
        }
        // Under the lock: the source (a reference of our own) and the timeline.
        let plan = state.withLock { state -> RTSPPushPlan? in
            guard var feed = state.feed else { return nil }
            if case .video(let unit) = item, feed.awaitingKeyframe, !unit.isKeyframe {
                state.stats.videoFramesAwaitingKeyframe += 1
                return nil
            }
            if !isVideo, !feed.started { return nil }
            let element = isVideo ? feed.video : feed.audio
            if feed.offset == nil {
                var running: GstClockTime = 0
                if camo_gst_element_running_time(element, &running) != 0 {
                    feed.offset = Int64(bitPattern: UInt64(running)) &- Int64(bitPattern: now)
                    state.feed = feed
                }
            }
            gst_object_ref(element)
            return RTSPPushPlan(element: element, generation: feed.generation, offset: feed.offset)
        }
        guard let plan else { return }
        defer { gst_object_unref(plan.element) }

        let outcome: Outcome
        if let offset = plan.offset, Int64(bitPattern: captureTime) &+ offset >= 0 {
            let pts = GstClockTime(Int64(bitPattern: captureTime) &+ offset)
            outcome = Self.send(item, to: plan.element, pts: pts, queueLimit: queueLimit)
        } else {
            outcome = .tooEarly
        }

        // Under the lock again: the counts and the keyframe wait.
        let (askKeyframe, dropped) = state.withLock { state -> ((@Sendable () -> Void)?, Int) in
            guard var feed = state.feed, feed.generation == plan.generation else { return (nil, 0) }
            var ask = false
            switch (item, outcome) {
            case (.video(let unit), .pushed):
                state.stats.videoFramesPushed += 1
                if unit.isKeyframe {
                    feed.awaitingKeyframe = false
                    feed.started = true
                }
            case (.video, .dropped):
                state.stats.videoFramesDropped += 1
                ask = !feed.awaitingKeyframe
                feed.awaitingKeyframe = true
            case (.video, .refused):
                feed.awaitingKeyframe = true
            case (.video(let unit), .tooEarly):
                // A keyframe the stream could not take yet: the stream still needs one.
                ask = unit.isKeyframe && feed.awaitingKeyframe
            case (.audio, .pushed):
                state.stats.audioChunksPushed += 1
            case (.audio, .dropped):
                state.stats.audioChunksDropped += 1
            case (.audio, .tooEarly), (.audio, .refused):
                break
            }
            state.feed = feed
            let dropped = outcome == .dropped ? state.stats.videoFramesDropped + state.stats.audioChunksDropped : 0
            return (ask ? state.onKeyframeNeeded : nil, dropped)
        }
        if dropped == 1 || dropped % 100 == 0 && dropped > 0 {
            logger.warning("RTSP stream cannot keep up: its queue is full, media is dropped", metadata: [
                "dropped": "\(dropped)", "kind": "\(isVideo ? "video" : "audio")",
            ])
        }
        askKeyframe?()
    }

    /// Pushes `item` into the appsrc `element` with `pts` unless its queue would pass `queueLimit` bytes.
    private static func send(_ item: Item, to element: UnsafeMutablePointer<GstElement>, pts: GstClockTime, queueLimit: Int) -> Outcome {
        let buffer: UnsafeMutablePointer<GstBuffer>?
        switch item {
        case .video(let unit):
            guard Int(camo_app_src_level_bytes(element)) + unit.data.count <= queueLimit else { return .dropped }
            buffer = unit.data.withUnsafeBytes { bytes in
                camo_gst_buffer_new_stamped(bytes.baseAddress, gsize(bytes.count), pts, camo_gst_clock_time_none(), unit.isKeyframe ? 0 : 1)
            }
        case .audio(let chunk):
            let byteCount = chunk.sampleFrames * MediaContract.channels * MemoryLayout<Float>.size
            guard Int(camo_app_src_level_bytes(element)) + byteCount <= queueLimit else { return .dropped }
            let duration = GstClockTime(chunk.sampleFrames) * 1_000_000_000 / GstClockTime(MediaContract.sampleRate)
            buffer = chunk.samples.withUnsafeBytes { bytes in
                camo_gst_buffer_new_stamped(bytes.baseAddress, gsize(min(byteCount, bytes.count)), pts, duration, 0)
            }
        }
        guard let buffer else { return .refused }
        return camo_app_src_push(element, buffer) == GST_FLOW_OK ? .pushed : .refused
    }

    // MARK: GStreamer's signals (on its threads)

    /// The shared media was made for its first client: keep its sources, ask for a keyframe.
    func mediaConfigured(_ media: UnsafeMutablePointer<GstRTSPMedia>) {
        guard let bin = gst_rtsp_media_get_element(media) else {
            logger.error("RTSP media has no pipeline")
            return
        }
        defer { gst_object_unref(bin) }
        let video = camo_gst_bin_get_by_name(bin, "video")
        let audio = camo_gst_bin_get_by_name(bin, "audio")
        guard let video, let audio else {
            if let video { gst_object_unref(video) }
            if let audio { gst_object_unref(audio) }
            logger.error("RTSP media lacks its video or audio source")
            return
        }
        RTSPSignals.connectMedia(media, core: self)
        let (previous, askKeyframe) = state.withLock { state in
            state.feedGeneration += 1
            state.stats.streamsConfigured += 1
            let previous = state.feed
            state.feed = RTSPFeed(media: UInt(bitPattern: media), generation: state.feedGeneration, video: video, audio: audio)
            return (previous, state.onKeyframeNeeded)
        }
        previous?.release()
        logger.info("RTSP stream starting for its first client")
        askKeyframe()
    }

    /// The shared media stopped (its last client left, or the server stopped): drop its sources.
    func mediaUnprepared(_ media: UnsafeMutablePointer<GstRTSPMedia>) {
        let feed = state.withLock { state -> RTSPFeed? in
            guard let feed = state.feed, feed.media == UInt(bitPattern: media) else { return nil }
            state.feed = nil
            return feed
        }
        guard let feed else { return }
        feed.release()
        logger.info("RTSP stream stopped: no client watches")
    }

    func clientConnected(_ client: UnsafeMutablePointer<GstRTSPClient>) {
        RTSPSignals.connectClient(client, core: self)
        let count = state.withLock { state in
            state.clients.insert(UInt(bitPattern: client))
            return state.clients.count
        }
        logger.info("RTSP client connected", metadata: ["address": "\(RTSPSignals.address(of: client))", "clients": "\(count)"])
    }

    func clientClosed(_ client: UnsafeMutablePointer<GstRTSPClient>) {
        let (removed, count) = state.withLock { state in
            (state.clients.remove(UInt(bitPattern: client)) != nil, state.clients.count)
        }
        if removed { logger.info("RTSP client left", metadata: ["clients": "\(count)"]) }
    }

    /// A client starts playing: whether it sets the stream up or joins it, it starts at a keyframe.
    func clientPlays() {
        let askKeyframe = state.withLock { $0.onKeyframeNeeded }
        askKeyframe()
    }
}

/// The state an ``RTSPCore`` guards.
struct RTSPState {
    var onKeyframeNeeded: @Sendable () -> Void = {}
    /// The connected clients (their GstRTSPClient addresses).
    var clients: Set<UInt> = []
    var stats = RTSPStats()
    /// The shared stream, while a client watches.
    var feed: RTSPFeed?
    var feedGeneration = 0
}

/// The shared media's two appsrc elements (a reference held on each) and its timeline.
/// Unchecked Sendable: GStreamer elements are reference counted and thread safe; the references are released once.
struct RTSPFeed: @unchecked Sendable {
    /// The GstRTSPMedia's address, to match its `unprepared` signal.
    let media: UInt
    let generation: Int
    let video: UnsafeMutablePointer<GstElement>
    let audio: UnsafeMutablePointer<GstElement>
    /// The pipeline's running time minus CLOCK_MONOTONIC, from the first push that found it playing: a capture
    /// time plus this is the buffer's PTS, so audio and video share one timeline.
    var offset: Int64?
    /// Whether video waits for a keyframe (at the start and after a drop): delta frames are skipped.
    var awaitingKeyframe = true
    /// Whether a keyframe went out yet: until then audio waits too, so the stream starts with its first picture
    /// (a client counting 10 s from its first packet gets 10 s of video).
    var started = false

    init(media: UInt, generation: Int, video: UnsafeMutablePointer<GstElement>, audio: UnsafeMutablePointer<GstElement>) {
        self.media = media
        self.generation = generation
        self.video = video
        self.audio = audio
    }

    func release() {
        gst_object_unref(video)
        gst_object_unref(audio)
    }
}

/// One push's source (a reference of its own) and timeline.
struct RTSPPushPlan: @unchecked Sendable {
    let element: UnsafeMutablePointer<GstElement>
    let generation: Int
    let offset: Int64?
}
