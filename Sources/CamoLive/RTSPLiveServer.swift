import CGStreamer
import CamoMedia
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// The agent's live stream for NVRs (Frigate, go2rtc, MediaMTX, ffmpeg) over RTSP: the shared H.264 rendition as
/// it is (packetized, never encoded again) and its audio as Opus, on gst-rtsp-server.
///
/// Every client watches one shared stream: the first client sets it up (``onKeyframeNeeded`` asks the encoder for a
/// keyframe, which the stream starts on), later clients join it, and the last to leave tears it down. While no
/// client watches, ``pushVideo(_:)`` and ``pushAudio(_:)`` return at once. They never block: a stream that cannot
/// keep up drops frames (counted in ``stats``) and resumes at the next keyframe.
public final class RTSPLiveServer: Sendable {
    /// The configuration it was made with.
    public let configuration: RTSPConfiguration

    /// The GStreamer elements the stream needs, each with the Debian package that has it.
    public static let requiredElements: [(element: String, package: String)] = [
        ("appsrc", "gstreamer1.0-plugins-base"),
        ("h264parse", "gstreamer1.0-plugins-bad"),
        ("rtph264pay", "gstreamer1.0-plugins-good"),
        ("audioconvert", "gstreamer1.0-plugins-base"),
        ("opusenc", "gstreamer1.0-plugins-base"),
        ("rtpopuspay", "gstreamer1.0-plugins-good"),
    ]

    /// Bytes of H.264 the stream may hold before it drops (several seconds at the rates the agent streams).
    static let videoQueueBytes = 4_000_000
    /// Bytes of audio the stream may hold before it drops (one second of 48 kHz stereo Float32).
    static let audioQueueBytes = 48_000 * 2 * 4

    let core: RTSPCore
    private let listener = Mutex<RTSPListener?>(nil)

    /// Checks the configuration and that GStreamer has every element the stream needs; starts GStreamer.
    /// - Throws: ``RTSPError/missingElements(_:)`` naming the Debian packages to install;
    ///   ``RTSPError/authenticationRequired(bindAddress:)`` without credentials beyond loopback;
    ///   ``RTSPError/invalidConfiguration(_:)``.
    public init(configuration: RTSPConfiguration, logger: Logger) throws(RTSPError) {
        try configuration.validate()
        let runtime = GStreamerRuntime.shared
        runtime.start()
        let missing = Self.requiredElements.filter { !runtime.hasElement($0.element) }
        guard missing.isEmpty else { throw .missingElements(missing) }
        self.configuration = configuration
        self.core = RTSPCore(logger: logger)
    }

    deinit {
        stop()
    }

    /// Called (from GStreamer's threads) when the stream needs a keyframe soon: a stream starts, a client joins it,
    /// or frames were dropped. The encoder should make its next picture an IDR with SPS and PPS.
    public var onKeyframeNeeded: @Sendable () -> Void {
        get { core.state.withLock { $0.onKeyframeNeeded } }
        set { core.state.withLock { $0.onKeyframeNeeded = newValue } }
    }

    /// Clients connected now (authenticated or not).
    public var clientCount: Int { core.state.withLock { $0.clients.count } }

    /// Whether the shared stream is set up (a client watches), so pushed media goes out.
    public var isStreaming: Bool { core.state.withLock { $0.feed != nil } }

    /// What the server has fed its stream since it was made.
    public var stats: RTSPStats { core.state.withLock { $0.stats } }

    /// The address NVRs open: rtsp://HOST:PORT/camo, without the credentials. HOST is the bind address, or this
    /// machine's host name when bound to every interface; PORT is the one bound once started.
    public var url: String {
        url(port: listener.withLock { $0?.boundPort } ?? configuration.port)
    }

    private func url(port: Int) -> String {
        var host = configuration.bindAddress
        if host == "0.0.0.0" || host == "::" { host = Self.hostName() }
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        return "rtsp://\(host):\(port)\(configuration.path)"
    }

    /// Starts listening (on GStreamer's main loop); does nothing when already listening.
    /// - Throws: ``RTSPError/portInUse(port:bindAddress:)`` when another program has the port;
    ///   ``RTSPError/bindFailed(port:bindAddress:reason:)``; ``RTSPError/setupFailed(_:)``.
    public func start() throws(RTSPError) {
        try listener.withLock { (listener: inout RTSPListener?) throws(RTSPError) in
            guard listener == nil else { return }
            let started = try RTSPListener(configuration: configuration, core: core, launch: Self.launchLine)
            listener = started
            core.logger.info("RTSP server listening", metadata: [
                "url": "\(url(port: started.boundPort))",
                "authentication": "\(configuration.credentials == nil ? "none" : "digest")",
            ])
        }
    }

    /// Stops listening, closes every client and drops the stream. The server may start again.
    public func stop() {
        let stopped = listener.withLock { listener -> RTSPListener? in
            defer { listener = nil }
            return listener
        }
        guard let stopped else { return }
        stopped.close()
        let feed = core.state.withLock { state -> RTSPFeed? in
            state.clients.removeAll()
            defer { state.feed = nil }
            return state.feed
        }
        feed?.release()
        core.logger.info("RTSP server stopped")
    }

    /// Sends one access unit to the clients; returns at once (nothing to do without clients).
    ///
    /// A stream starts at a keyframe: delta frames before it are skipped. When the stream's queue is full the unit
    /// is dropped, and the stream waits for the next keyframe (asked for through ``onKeyframeNeeded``).
    public func pushVideo(_ unit: LiveAccessUnit) {
        core.push(.video(unit), now: SystemMonotonicClock().now.nanoseconds)
    }

    /// Sends one chunk of audio (48 kHz stereo Float32) to the clients; returns at once.
    public func pushAudio(_ chunk: AudioChunk) {
        core.push(.audio(chunk), now: SystemMonotonicClock().now.nanoseconds)
    }

    /// The shared media: H.264 Annex B access units through h264parse to RTP, and Float32 audio through Opus. Both
    /// sources are live, stamped by the server, and drop rather than block.
    ///
    /// The agent's keyframes carry their SPS and PPS, so rtph264pay inserts none (its config-interval=-1 puts them
    /// before every IDR slice: a keyframe of several slices, as x264's sliced threads make, then reaches ffmpeg
    /// as two pictures).
    static let launchLine = """
        ( appsrc name=video is-live=true format=time do-timestamp=false block=false emit-signals=false \
        max-bytes=\(videoQueueBytes) leaky-type=upstream min-latency=0 \
        caps="video/x-h264,stream-format=byte-stream,alignment=au" \
        ! h264parse ! rtph264pay name=pay0 pt=96 \
        appsrc name=audio is-live=true format=time do-timestamp=false block=false emit-signals=false \
        max-bytes=\(audioQueueBytes) leaky-type=upstream min-latency=0 \
        caps="audio/x-raw,format=F32LE,layout=interleaved,rate=48000,channels=2" \
        ! audioconvert ! opusenc ! rtpopuspay name=pay1 pt=97 )
        """

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }
}
