import CamoMedia
import CamoStorage
import CamoUSB
import CamoWire
import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Errors from starting or driving a ``CamoController``.
public enum CamoControllerError: Error, Sendable, CustomStringConvertible {
    /// `start()` was called on a running controller.
    case alreadyRunning
    /// The listening socket could not be opened.
    case cannotListen(host: String, port: Int, underlying: String)

    public var description: String {
        switch self {
        case .alreadyRunning:
            return "The controller is already running; call stop() first."
        case .cannotListen(let host, let port, let underlying):
            return "Cannot listen on \(host) port \(port): \(underlying). Choose another port, or 0 for any free port."
        }
    }
}

/// The producer side of the Camo contract, shaped after the Camo SDK's `CamoController`.
///
/// Feed it BGRA frames with ``enqueueVideo(_:)`` at any rate and float32 stereo audio with
/// ``enqueuePCMAudio(_:)``; it paces video to 30 fps on its own clock, cuts audio into each studio's packet
/// size, and streams to every connected studio over the wire protocol (see `Docs/PROTOCOL.md`). Malformed input
/// is refused with a ``ContractError``. State changes reach the ``delegate`` and every ``stateUpdates()`` stream.
///
/// ```swift
/// let controller = try CamoController(configuration: configuration, logger: logger)  // Avahi; paired list on disk
/// try await controller.start()
/// for await state in controller.stateUpdates() { print(state?.description ?? "stopped") }
/// try controller.enqueueVideo(frame)     // VideoFrame, BGRA
/// try controller.enqueuePCMAudio(chunk)  // AudioChunk, 48 kHz stereo float32
/// ```
public final class CamoController: Sendable {
    struct Core {
        var running = false
        var group: MultiThreadedEventLoopGroup?
        var server: Channel?
        var port: Int?
        var pacerTask: Task<Void, Never>?
        /// The studios: established sessions and handshakes in progress.
        var registry: SessionRegistry<SessionHandle>
        var sessions: [SessionHandle] { registry.sessions }
        /// The pacer, the privacy switch, mute and camera-lost, and who gets each slot and chunk.
        var media = MediaFanOut()
        /// The state and the streams that follow it.
        var feed = StateFeed()
        /// The pairing attempt in progress and how the last ones ended.
        var pairing = PairingLedger()
        /// Admission decisions the delegate has not answered yet.
        var decisions = OpenDecisions()
        var camera: (any CameraControlling)?
        /// Consumers of the shared H.264 rendition and the audio beside the studios (``LiveFeed``).
        var liveFeeds: [LiveFeed] = []
        /// Consumers of the picture and the microphone as captured, for analysis (``AnalysisTap``).
        var analysisTaps: [AnalysisTap] = []
    }

    private struct WeakDelegate {
        weak var value: (any CamoControllerDelegate)?
    }

    /// How this controller runs.
    public let configuration: ControllerConfiguration
    let logger: Logger
    let clock: any MonotonicClock
    let core: Mutex<Core>
    /// The paired studios (KK sessions, pairing).
    public let pairedDeviceStore: PairedDeviceStore
    /// The state directory's lock, held for the controller's life when it opened the directory itself.
    private let stateLock: StateDirectoryLock?
    /// Makes the controller discoverable (`_camo._tcp` while running, `_camopairing._tcp` while a pairing window
    /// is open); nil: not advertised.
    public let advertiser: (any CamoAdvertiser)?
    /// Makes JPEG planes for frames that JPEG sessions will take (``enqueueVideo(_:)``).
    private let jpegPlaneMaker = Mutex(JPEGPlaneMaker())
    /// The settings model's values, transform, providers and queue.
    let settingsHub: SettingsHub
    private let delegateBox = Mutex(WeakDelegate())

    /// Delegate calls leave in the order the states were decided (enqueued under the core lock).
    let delegateQueue = DispatchQueue(label: "camo.controller.delegate")
    /// Disk writes that must not hold up capture or an event loop (last-seen times).
    let storageQueue = DispatchQueue(label: "camo.controller.storage")
    /// Advertiser calls (blocking D-Bus round trips), in the order the pairing decided them.
    let advertiserQueue = DispatchQueue(label: "camo.controller.advertiser")

    /// Creates a controller with an explicit paired-device store (``PairedDeviceStore/init(inMemory:)`` keeps it
    /// in memory only).
    /// - Parameters:
    ///   - clock: paces video and times every deadline: the pairing window, the delegate's decision, and each
    ///     connection's handshake, keepalive and stall (tests inject a manual clock).
    ///   - advertiser: how the controller is found: avahi-daemon by default (``AdvertiserChoice``).
    ///   - settingsDirectory: where `settings.json` (the settings model's saved values) lives; nil keeps them in
    ///     memory only.
    public convenience init(
        configuration: ControllerConfiguration, logger: Logger, clock: any MonotonicClock = SystemMonotonicClock(),
        pairedDevices: PairedDeviceStore, advertiser: AdvertiserChoice = .avahi, settingsDirectory: String? = nil
    ) {
        self.init(configuration: configuration, logger: logger, clock: clock, pairedDevices: pairedDevices, advertiser: advertiser,
                  stateLock: nil, settingsDirectory: settingsDirectory)
    }

    init(
        configuration: ControllerConfiguration, logger: Logger, clock: any MonotonicClock, pairedDevices: PairedDeviceStore,
        advertiser: AdvertiserChoice, stateLock: StateDirectoryLock?, settingsDirectory: String?
    ) {
        self.stateLock = stateLock
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.core = Mutex(Core(registry: SessionRegistry(
            maxSessions: configuration.maxSessions, maxPendingHandshakes: configuration.maxPendingHandshakes)))
        self.pairedDeviceStore = pairedDevices
        // Settings persist beside the paired list when the controller owns the state directory; else in memory.
        self.settingsHub = SettingsHub(directory: settingsDirectory, logger: logger)
        switch advertiser {
        case .avahi: self.advertiser = AvahiAdvertiser(name: configuration.identity.name, logger: logger)
        case .off: self.advertiser = nil
        case .custom(let custom): self.advertiser = custom
        }
        let saved = restoreAgentSettings()
        core.withLock { core in
            core.media.paused = saved.paused
            core.media.microphoneMuted = saved.muted
        }
        if saved.paused || saved.muted {
            logger.notice("Saved settings: \(saved.paused ? "the camera is off (privacy)" : "")\(saved.paused && saved.muted ? "; " : "")\(saved.muted ? "the microphone is muted" : "")")
        }
    }

    /// Creates a controller whose paired studios persist in `paired.json` in
    /// ``ControllerConfiguration/stateDirectory`` (by default ``AgentPaths/defaultStateDirectory()``), so a
    /// restart remembers them. The controller holds the directory's lock (`agent.lock`) while it exists: one
    /// agent per state directory, so two never overwrite each other's list.
    /// - Throws: ``StateDirectoryBusy`` when another agent (camo-agent, or another program) uses the directory;
    ///   an error when it cannot be made or the list cannot be read (a corrupt list is kept aside and reported,
    ///   not thrown).
    public convenience init(
        configuration: ControllerConfiguration, logger: Logger, clock: any MonotonicClock = SystemMonotonicClock(),
        advertiser: AdvertiserChoice = .avahi
    ) throws {
        try AtomicFile.makeDirectory(configuration.stateDirectory)
        let lock = try StateDirectoryLock(directory: configuration.stateDirectory)
        let store = try PairedDeviceStore(directory: configuration.stateDirectory, logger: logger)
        self.init(configuration: configuration, logger: logger, clock: clock, pairedDevices: store, advertiser: advertiser, stateLock: lock,
                  settingsDirectory: configuration.stateDirectory)
    }

    /// Receives admission questions and state changes (held weakly).
    public var delegate: (any CamoControllerDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }

    // MARK: Lifecycle

    /// Starts listening and pacing. The state becomes `.notConnected`.
    public func start() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let alreadyRunning = core.withLock { core -> Bool in
            if core.running { return true }
            core.running = true
            core.group = group
            return false
        }
        if alreadyRunning {
            try await group.shutdownGracefully()
            throw CamoControllerError.alreadyRunning
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let address = channel.remoteAddress
                    let info = SessionInfo(
                        address: address.map(Self.describe) ?? "unknown",
                        link: channel.localAddress.map { Self.link(of: $0, classifier: configuration.linkClassifier) } ?? .network,
                        settings: VideoSettings(size: .hd720, codec: .jpeg, jpegQuality: configuration.defaultJPEGQuality))
                    let handler = SessionHandler(controller: self, info: info, configuration: configuration, logger: logger)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let server: Channel
        do {
            server = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            let observers = core.withLock { core in
                core.running = false
                core.group = nil
                return core.feed.removeAll()
            }
            for observer in observers { observer.finish() }
            try? await group.shutdownGracefully()
            throw CamoControllerError.cannotListen(host: configuration.host, port: configuration.port, underlying: "\(error)")
        }
        let start = clock.now.nanoseconds
        let stillRunning = core.withLock { core -> Bool in
            guard core.running, core.group === group else { return false }
            core.server = server
            core.port = server.localAddress?.port
            core.media.startPacing(at: start)
            core.pacerTask = Task { [self] in await runPacer(startTime: start) }
            if let advertiser, let port = core.port {
                // Queued under the lock, so a stop() that follows queues its withdrawal after this.
                let txt = AdvertisedRecords.agent(identity: configuration.identity, description: configuration.description)
                advertiserQueue.async { advertiser.controllerStarted(port: port, txt: txt) }
            }
            return true
        }
        guard stillRunning else {
            // stop() ran while the socket was being bound: undo and report.
            try? await server.close()
            try? await group.shutdownGracefully()
            throw CamoControllerError.cannotListen(
                host: configuration.host, port: configuration.port, underlying: "the controller was stopped while starting")
        }
        logger.info("Listening", metadata: ["port": "\(port ?? 0)", "host": "\(configuration.host)"])
        publishState()
    }

    /// Ends every session with a goodbye, stops listening and pacing. The state becomes nil.
    public func stop() async {
        let (sessions, server, task, group, pairingAttempt, decisions) = core.withLock { core in
            let result = (core.sessions, core.server, core.pacerTask, core.group, core.pairing.current?.id, core.decisions.all())
            // Not running from here on, in the same step that picks the attempt to end: no new attempt can open.
            core.running = false
            core.server = nil
            core.pacerTask = nil
            core.group = nil
            core.media.stopPacing()
            core.port = nil
            // Nothing may reach a session's event loop after the group shuts down.
            _ = core.registry.removeAll()
            return result
        }
        task?.cancel()
        // A studio the delegate is still deciding about is refused now, while its event loop still runs.
        for decision in decisions { decision(WireError(code: .shuttingDown, reason: "The agent is shutting down.")) }
        if let pairingAttempt { finishPairing(attempt: pairingAttempt, .failure(.stopped)) }
        for session in sessions {
            session.end(WireError(code: .shuttingDown, reason: "The agent is shutting down."), isOrderly: true)
        }
        try? await server?.close()
        await task?.value
        // Each goodbye leaves, or its channel is closed after at most a second (closeAfterFlush).
        for session in sessions { try? await session.closeFuture.get() }
        // Settings answers still queued reach their (closed) sessions' loops before the loops go.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in settingsHub.queue.async { done.resume() } }
        try? await group?.shutdownGracefully()
        if let advertiser, group != nil {
            // Behind any pairing withdrawal on the same queue; stop() returns once the services are withdrawn.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                advertiserQueue.async {
                    advertiser.controllerStopped()
                    done.resume()
                }
            }
        }
        publishState()
        let observers = core.withLock { $0.feed.removeAll() }
        for observer in observers { observer.finish() }
        // Settings changed just before the stop are on disk when it returns.
        flushSettings()
        logger.info("Stopped")
    }

    /// The port the controller listens on while running.
    public var port: Int? { core.withLock { $0.port } }

    /// The current state; nil when not running.
    public var state: CamoControllerState? { core.withLock { $0.feed.current } }

    /// Every established session, primary first.
    public var connections: [CamoConnection] {
        core.withLock { $0.sessions }.compactMap { $0.info.connection }
    }

    /// A stream of state changes. It yields the current state first and finishes when the controller stops.
    public func stateUpdates() -> AsyncStream<CamoControllerState?> {
        let (stream, continuation) = AsyncStream<CamoControllerState?>.makeStream()
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            self?.core.withLock { $0.feed.remove(id) }
        }
        // Registered and given the current state under one lock, so no change can slip in between.
        let running = core.withLock { core -> Bool in
            core.feed.add(id, continuation, follows: core.running)
            return core.running
        }
        if !running { continuation.finish() }
        return stream
    }

    // MARK: Media in

    /// Offers a BGRA frame. Frames may come at any rate; the pacer sends 30 per second.
    ///
    /// While a studio takes JPEG at the frame's size (``wantsJPEGPlanes(for:)``), the frame's conversion to JPEG's
    /// colour space (``JPEGPlanes``) runs here, on the caller's thread, so that the pacer only compresses it; a
    /// frame that carries fitting planes already (``VideoFrame/jpegPlanes``) keeps them.
    /// - Throws: ``ContractError`` when the frame is not BGRA or its size, stride or buffer length is wrong.
    public func enqueueVideo(_ frame: VideoFrame) throws(ContractError) {
        try MediaContract.validate(frame)
        var frame = frame
        for observe in settingsHub.frameObservers.withLock({ $0 }) { observe(frame) }
        // Rotation, flips and the viewport (the settings model), once for every studio.
        let transform = settingsHub.transform.withLock { $0 }
        if !transform.isIdentity { frame = transform.apply(frame) }
        if !wantsJPEGPlanes(for: frame.size) {
            jpegPlaneMaker.withLock { $0.release() }
        } else if !(frame.jpegPlanes?.fits(frame) ?? false) {
            // The buffer is taken out under the lock and converted into outside it.
            let taken = jpegPlaneMaker.withLock { $0.take() }
            var storage = taken.storage
            frame.jpegPlanes = try? JPEGPlanes.converting(frame, into: &storage)  // validated above: it cannot throw
            jpegPlaneMaker.withLock { $0.giveBack(storage, at: taken.at) }
        }
        let at = FramePacer.assignmentTime(captureTime: frame.captureTime, arrival: clock.now.nanoseconds)
        let (scan, taps) = core.withLock { core in
            core.media.offer(frame, at: at)
            return (core.pairing.current == nil ? nil : takeFrameForScanning(&core), core.media.paused ? [] : core.analysisTaps)
        }
        if let scan { scanFrame(frame, with: scan) }
        for tap in taps { tap.video(frame) }
    }

    /// True while a studio takes JPEG at `size`: then a frame of that size is worth enqueueing with its
    /// ``VideoFrame/jpegPlanes`` (a camera that can make them from its own bytes does; otherwise
    /// ``enqueueVideo(_:)`` makes them from the BGRA).
    public func wantsJPEGPlanes(for size: VideoSize) -> Bool {
        // A turned, mirrored or zoomed picture is made anew after the camera's frame: planes made before are wasted.
        guard imageTransform.isIdentity else { return false }
        return core.withLock { $0.media.wantsJPEGPlanes(for: size, among: $0.sessions) }
    }

    /// Tells the pacer that the video source started a new stream (a camera restarted in another mode, or came back
    /// after it was lost), so the new stream's frames, which come with a new phase, are placed mid-slot again
    /// (``FramePacer/sourceRestarted()``). Call it before the new stream's first frame.
    public func videoSourceRestarted() {
        core.withLock { $0.media.sourceRestarted() }
    }

    /// Offers interleaved stereo float32 audio at 48 kHz.
    /// - Throws: ``ContractError`` when the chunk is empty or not whole stereo sample frames.
    public func enqueuePCMAudio(_ chunk: AudioChunk) throws(ContractError) {
        try MediaContract.validateAudio(byteCount: chunk.samples.count * MemoryLayout<Float>.size)
        guard chunk.sampleFrames * 2 == chunk.samples.count else {
            throw ContractError.audioNotWholeSampleFrames(byteCount: chunk.samples.count * MemoryLayout<Float>.size)
        }
        let (recipients, silenced, feeds, taps) = core.withLock { core in
            let (recipients, silenced) = core.media.audioRecipients(among: core.sessions)
            let quiet = core.media.paused || core.media.microphoneMuted
            return (recipients, silenced, core.media.paused ? [] : core.liveFeeds, quiet ? [] : core.analysisTaps)
        }
        for tap in taps { tap.audio(chunk) }
        guard !recipients.isEmpty || !feeds.isEmpty else { return }
        // Muted: silence with the same timestamps and sizes, so every studio's packets keep their cadence.
        let outgoing = silenced
            ? AudioChunk(samples: [Float](repeating: 0, count: chunk.samples.count), firstSampleTime: chunk.firstSampleTime) : chunk
        for session in recipients {
            session.deliverAudio(outgoing)
        }
        for feed in feeds { feed.audio(outgoing) }
    }

    // MARK: Microphone mute

    /// Mutes the microphone: from the next chunk on, studios get silence at the same cadence (packets keep
    /// coming, with their timestamps), until ``unmuteMicrophone()``.
    /// - Parameter saving: false mutes for this run only (the agent's `--mute`): the settings model's saved
    ///   `microphoneMuted` is left as it was.
    public func muteMicrophone(saving: Bool = true) { setMicrophoneMuted(true, fromSettings: !saving) }

    /// Sends the microphone's audio again after ``muteMicrophone()``.
    public func unmuteMicrophone() { setMicrophoneMuted(false) }

    /// Whether the microphone is muted.
    public var isMicrophoneMuted: Bool { core.withLock { $0.media.microphoneMuted } }

    /// Mutes or unmutes; the settings model's `microphoneMuted` (saved, and every studio told) unless the change
    /// comes from a settings write, which does that itself.
    func setMicrophoneMuted(_ muted: Bool, fromSettings: Bool = false) {
        let changed = core.withLock { core in
            defer { core.media.microphoneMuted = muted }
            return core.media.microphoneMuted != muted
        }
        if changed { logger.info(muted ? "Microphone muted (studios get silence)" : "Microphone unmuted") }
        if changed, !fromSettings { settingChangedOutside(SettingsCatalog.Name.microphoneMuted, by: "the host") }
    }

    /// Offers raw LPCM bytes (float32 little-endian, interleaved stereo, 48 kHz), as the SDK's `enqueuePCMAudio`.
    /// - Throws: ``ContractError`` when the byte count is not a whole, non-zero number of stereo float32 frames.
    public func enqueuePCMAudio(bytes: [UInt8], firstSampleTime: UInt64) throws(ContractError) {
        try MediaContract.validateAudio(byteCount: bytes.count)
        try enqueuePCMAudio(AudioChunk(littleEndianFloat32: bytes, firstSampleTime: firstSampleTime))
    }

    /// The sample frames per audio packet the primary studio asked for (the default while none is connected).
    public var audioSamplesRequired: Int {
        connections.first?.audioSamplesRequired ?? configuration.defaultAudioSamplesRequired
    }

    /// The size to capture at: the largest any connected studio or live feed asked for (1280x720 while none is).
    public var preferredCaptureSize: VideoSize {
        let (sessions, feeds) = core.withLock { ($0.sessions, $0.liveFeeds) }
        var sizes = sessions.filter { $0.info.withState { $0.isViewer } }.map { $0.info.settings.size } + feeds.map(\.request.size)
        // A picture turned by 90 or 270 degrees is captured in the camera's own (landscape) orientation.
        if imageTransform.rotation.swapsSides {
            sizes = sizes.map { $0.height > $0.width ? VideoSize(width: $0.height, height: $0.width) : $0 }
        }
        return sizes.max { $0.width * $0.height < $1.width * $1.height } ?? .hd720
    }

    // MARK: Privacy switch

    /// Pauses every session: connected, but nothing is sent. The studios are told.
    public func pause() { setPaused(true) }

    /// Resumes sending after ``pause()``.
    public func resume() { setPaused(false) }

    /// Whether the privacy switch is on.
    public var isPaused: Bool { core.withLock { $0.media.paused } }

    /// The privacy switch; the settings model's `streamingEnabled` (saved, and every studio told) unless the change
    /// comes from a settings write, which does that itself.
    func setPaused(_ paused: Bool, fromSettings: Bool = false) {
        let (sessions, changed) = core.withLock { core in
            defer { core.media.paused = paused }
            return (core.sessions, core.media.paused != paused)
        }
        for session in sessions { session.setPausedByAgent(paused) }
        logger.info(paused ? "Paused (privacy switch on)" : "Resumed")
        publishState()
        if changed, !fromSettings { settingChangedOutside(SettingsCatalog.Name.streamingEnabled, by: "the host") }
    }

    /// Tells the studios the camera was lost (or is back); frames keep flowing from whatever the caller enqueues.
    public func setCameraLost(_ lost: Bool) {
        let sessions = core.withLock { core in
            core.media.cameraLost = lost
            return core.sessions
        }
        for session in sessions { session.setCameraLost(lost) }
    }

    // MARK: Camera controls

    /// The camera whose controls ``cameraControls()`` and ``setCameraControl(name:value:)`` reach (the agent
    /// sets it when it streams a real camera; nil for the test pattern).
    public var camera: (any CameraControlling)? {
        get { core.withLock { $0.camera } }
        set { core.withLock { $0.camera = newValue } }
    }

    /// The camera's controls (brightness, exposure, white balance, ...), common ones first.
    /// - Throws: ``CameraControlError`` when no camera is in use, or the camera's error.
    public func cameraControls() throws -> [CameraControl] {
        guard let camera else { throw CameraControlError(Self.noCameraText) }
        return try camera.cameraControls()
    }

    /// Sets a camera control by name (`brightness`, `power_line_frequency`, ...) from its text form.
    /// - Throws: ``CameraControlError`` for no camera, an unknown name or a bad value; the camera's error.
    public func setCameraControl(name: String, value: String) throws -> CameraControl {
        guard let camera else { throw CameraControlError(Self.noCameraText) }
        let control = try camera.setCameraControl(name: name, value: value)
        logger.info("Camera control set", metadata: ["control": "\(control.name)", "value": "\(control.value.map(String.init) ?? "?")"])
        return control
    }

    public static let noCameraText =
        "The agent is streaming the synthetic test pattern, which has no controls. Start the agent with a camera."

    // MARK: Pacing

    private func runPacer(startTime: UInt64) async {
        var preparer = VideoPreparer(logger: logger, h264: configuration.h264)
        var firstFrames = FirstFrameGate()
        var catchUp = SlotCatchUp()
        var slot: UInt64 = 1
        while !Task.isCancelled {
            guard let slotTime = core.withLock({ $0.media.slotTime(slot) }) else { return }
            do {
                try await clock.sleep(until: slotTime)
            } catch {
                return
            }
            let started = clock.now.nanoseconds
            let (due, feeds) = core.withLock { core in
                (core.media.emit(slot: slot, to: core.sessions), core.media.paused ? [] : core.liveFeeds)
            }
            slot += 1
            firstFrames.retain(due.recipients.lazy.map { $0.info.id })
            guard let offered = due.frame else { continue }
            // A slot that starts more than two slots late repeats the last frame (no encode) to catch up (SlotCatchUp).
            let shedBefore = catchUp.shedSlots
            let paced = catchUp.frame(for: offered, at: started)
            if catchUp.shedSlots > shedBefore, shedBefore % 300 == 0 {
                logger.notice(
                    "The pacer runs late (preparing frames takes longer than a slot); late slots repeat the last frame",
                    metadata: ["repeatedSlots": "\(catchUp.shedSlots)"])
            }
            preparer.beginSlot(slot)
            // Sizes turn with the picture only when the settings turned it (90 or 270 degrees).
            let turned = imageTransform.rotation.swapsSides
            var h264 = planH264(due.recipients, hasNewFrame: !paced.isRepeat, now: started, frame: paced.frame, turned: turned)
            let feedKeys = Self.addLiveFeedDemands(feeds, sizeFor: { turned ? Self.oriented($0.request.size, like: paced.frame) : $0.request.size }, into: &h264.demands)
            // A slot the catch-up shed (the pacer is late) stays a repeat without an encode, even for live feeds:
            // they miss that slot rather than keep a starved pacer behind.
            let shed = catchUp.shedSlots > shedBefore
            if shed { for key in feedKeys { h264.demands[key]?.everySlot = false } }
            for session in due.recipients where firstFrames.admits(session.info.id, isRepeat: paced.isRepeat, slot: slot) {
                var settings = session.info.settings
                if turned { settings.size = Self.oriented(settings.size, like: paced.frame) }
                if settings.codec == .h264 {
                    guard let key = h264.keys[session.info.id], let demand = h264.demands[key],
                        let video = preparer.prepareH264(paced, key: key, demand: demand, noSignal: due.noSignal, now: started),
                        Self.takeH264(video, bitrate: demand.bitrate, into: session.info)
                    else { continue }
                    session.deliverVideo(video)
                    continue
                }
                // JPEG on a rate-controlled link: skipped when the latency budget would pass, at the quality the link takes.
                let jpeg = settings.codec == .jpeg ? Self.jpegPlan(session.info, vote: !paced.isRepeat, now: started) : nil
                if jpeg?.skip == true {
                    session.deliverVideo(preparer.skippedPlaceholder(paced, for: settings, noSignal: due.noSignal))
                    continue
                }
                var prepared = settings
                if let quality = jpeg?.quality { prepared.jpegQuality = quality }
                guard let video = preparer.prepare(paced, for: prepared, noSignal: due.noSignal) else { continue }
                if jpeg != nil, !paced.isRepeat { session.info.withState { $0.jpegRate?.sent(bytes: video.totalLength) } }
                session.deliverVideo(video)
            }
            // Live feeds: the same access units as the studios on their rendition (an encode only when none is).
            for (feed, key) in zip(feeds, feedKeys) {
                guard let demand = h264.demands[key],
                    let video = preparer.prepareH264(paced, key: key, demand: demand, noSignal: due.noSignal, now: started),
                    !video.data.isEmpty, feed.takes(isKeyframe: video.isKeyframe)
                else { continue }
                feed.video(LiveVideo(
                    data: video.data, isKeyframe: video.isKeyframe,
                    captureTime: feed.timestamp(captureTime: paced.frame.captureTime, slotTime: paced.slotTime, isRepeat: paced.isRepeat),
                    size: key.size, sourceSequence: paced.frame.sourceSequence))
            }
            // A pacer that fell far behind (a suspended process) skips ahead instead of bursting old slots.
            let now = clock.now.nanoseconds
            if let next = core.withLock({ $0.media.slotTime(slot) }), now > next + 1_000_000_000 {
                let behind = (now - next) / 33_333_333
                logger.warning("The pacer fell behind; skipping slots", metadata: ["slots": "\(behind)"])
                slot += behind
            }
        }
    }

    /// The slot's H.264 plan (``H264SlotPlan``) over the recipients that take H.264, read and written back under
    /// each session's lock.
    private func planH264(_ recipients: [SessionHandle], hasNewFrame: Bool, now: UInt64, frame: VideoFrame, turned: Bool)
        -> (keys: [UUID: RenditionKey], demands: [RenditionKey: H264Demand])
    {
        guard let options = configuration.h264 else { return ([:], [:]) }
        var infos: [SessionInfo] = []
        var sizes: [VideoSize] = []
        for session in recipients {
            let size = session.info.withState { state -> VideoSize? in
                state.settings.codec == .h264 && state.h264 != nil ? state.settings.size : nil
            }
            guard let size else { continue }
            infos.append(session.info)
            sizes.append(turned ? Self.oriented(size, like: frame) : size)
        }
        guard !infos.isEmpty else { return ([:], [:]) }
        let plan = H264SlotPlan.plan(
            sizes: sizes, hasNewFrame: hasNewFrame, now: now, maxRenditionsPerSize: options.maxRenditionsPerSize
        ) { index, body in
            infos[index].withState { state in
                guard state.h264 != nil else { return }
                body(&state.h264!)
            }
        }
        var keys: [UUID: RenditionKey] = [:]
        for (index, info) in infos.enumerated() { keys[info.id] = plan.keys[index] }
        return (keys, plan.demands)
    }

    /// A session's size turned to the frame's orientation: a portrait picture (a camera rotated by 90 or 270
    /// degrees in the settings) goes out portrait, at the session's size with width and height swapped, never squashed.
    static func oriented(_ size: VideoSize, like frame: VideoFrame) -> VideoSize {
        let portraitFrame = frame.height > frame.width, portraitSize = size.height > size.width
        return portraitFrame == portraitSize || size.width == size.height ? size : VideoSize(width: size.height, height: size.width)
    }

    /// For a JPEG session with rate control: whether to skip this slot's new frame (counted; `vote` is false for a
    /// repeat, which costs nothing) and the quality to use.
    private static func jpegPlan(_ info: SessionInfo, vote: Bool, now: UInt64) -> (skip: Bool, quality: Int)? {
        info.withState { state in
            guard state.jpegRate != nil else { return nil }
            let skip = vote && state.jpegRate!.rate.shouldSkipFrame(queuedBytes: state.jpegRate!.queuedVideoBytes, now: now)
            if skip { state.jpegRate!.skippedFrames += 1 }
            return (skip, state.jpegRate!.quality)
        }
    }

    /// Whether a session on an H.264 rendition takes `video`: nothing until its first keyframe. Counts skips.
    private static func takeH264(_ video: OutgoingVideo, bitrate: Int, into info: SessionInfo) -> Bool {
        info.withState { state in
            guard state.h264 != nil else { return false }
            if state.h264!.awaitingKeyframe {
                guard video.isKeyframe else { return false }
                state.h264!.awaitingKeyframe = false
            }
            if video.isKeyframe { state.h264!.keyframeRequested = false }
            state.h264!.rate.frameSent(bytes: video.totalLength)
            if !video.isKeyframe, video.data.isEmpty, !video.isRepeat { state.h264!.skippedFrames += 1 }
            state.h264!.renditionBitrate = bitrate
            return true
        }
    }

    // MARK: Sessions (called by SessionHandler)

    func now() -> UInt64 { clock.now.nanoseconds }

    func reservePendingHandshake() -> Bool {
        core.withLock { core in
            core.running && core.registry.reserveHandshake()
        }
    }

    func releasePendingHandshake() {
        core.withLock { $0.registry.releaseHandshake() }
    }

    /// Registers a studio after its hello, or returns why it is refused.
    /// - Parameter pairedKey: for a KK session, the studio key its handshake proved: checked again here, under
    ///   the lock ``removePairedDevice(_:)`` takes, so a studio unpaired while it was still connecting is refused.
    func admit(
        _ incoming: IncomingConnection, info: SessionInfo, handler: NIOLoopBound<SessionHandler>,
        closeFuture: EventLoopFuture<Void>, pairedKey: [UInt8]? = nil
    ) -> WireError? {
        core.withLock { core -> WireError? in
            guard core.running else {
                return WireError(code: .shuttingDown, reason: "The agent is shutting down.")
            }
            if let pairedKey {
                guard let studio = pairedDeviceStore.studio(id: incoming.studioId), studio.publicKey == Data(pairedKey) else {
                    return WireError(
                        code: .notPaired,
                        reason: "Studio \(incoming.studioId) is no longer paired with this agent. Pair it again.")
                }
                info.withState { $0.pairedStudioId = incoming.studioId }
            }
            return core.registry.admit(SessionHandle(info: info, handler: handler, closeFuture: closeFuture))
        }
    }

    /// Asks the delegate whether to admit `incoming`, on the delegate queue (never an event loop), within
    /// ``ControllerConfiguration/admissionDecisionSeconds`` of the controller's clock. The future completes on
    /// `loop` with nil (accept) or the refusal to send: declined, no decision in time, or the controller stopped
    /// (``stop()`` ends every open decision before its event loops shut down). `cancel` ends the decision when the
    /// connection went away first.
    func decideAdmission(_ incoming: IncomingConnection, on loop: any EventLoop) -> (future: EventLoopFuture<WireError?>, cancel: @Sendable () -> Void) {
        guard let delegate else { return (loop.makeSucceededFuture(nil), {}) }
        let promise = loop.makePromise(of: WireError?.self)
        let id = UUID()
        let timer = Mutex<Task<Void, Never>?>(nil)
        // The first ending wins: it takes the decision out of the core, stops the timer and completes the promise.
        let complete: @Sendable (WireError?) -> Void = { [self] refusal in
            guard core.withLock({ $0.decisions.close(id) }) else { return }
            timer.withLock { $0?.cancel() }
            promise.succeed(refusal)
        }
        let open = core.withLock { core -> Bool in
            guard core.running else { return false }
            core.decisions.open(id, end: complete)
            return true
        }
        guard open else {
            promise.succeed(WireError(code: .shuttingDown, reason: "The agent is shutting down."))
            return (promise.futureResult, {})
        }
        let seconds = configuration.admissionDecisionSeconds
        let deadline = clock.now.nanoseconds + UInt64(seconds * 1e9)
        timer.withLock { timer in
            timer = Task { [clock, logger] in
                do { try await clock.sleep(until: deadline) } catch { return }
                logger.notice("The delegate did not decide in time; refusing the studio", metadata: ["studioId": "\(incoming.studioId)"])
                complete(WireError(
                    code: .notPaired,
                    reason: "The agent's owner did not decide within \(seconds) seconds whether to accept this studio; try again."))
            }
        }
        delegateQueue.async { [self] in
            let accepted = delegate.camoController(self, shouldAcceptIncomingConnection: incoming)
            complete(accepted ? nil : WireError(code: .notPaired, reason: "The agent's owner declined this studio."))
        }
        return (promise.futureResult, { complete(WireError(code: .shuttingDown, reason: "The connection closed.")) })
    }

    /// Whether the studios were told the camera is lost (``setCameraLost(_:)``).
    public var isCameraLost: Bool { core.withLock { $0.media.cameraLost } }

    /// The event loop group while running (the pairing listener runs on it).
    var eventLoopGroup: MultiThreadedEventLoopGroup? { core.withLock { $0.group } }

    func sessionEnded(_ info: SessionInfo) {
        core.withLock { core in core.registry.remove { $0.info === info } }
        publishState()
    }

    func sessionChanged() {
        publishState()
    }

    // MARK: State

    private func publishState() {
        let delegate = self.delegate
        core.withLock { core in
            let new = core.registry.state(running: core.running, paused: core.media.paused) { $0.info.connection }
            // Under the lock, so every observer and the delegate see the changes in the order they were
            // decided, whichever thread decided them. yield never blocks; the delegate runs on its queue.
            guard core.feed.publish(new) else { return }
            logger.debug("State changed", metadata: ["state": "\(new?.description ?? "stopped")"])
            if let delegate {
                delegateQueue.async { delegate.camoController(self, stateDidChangeTo: new) }
            }
        }
    }

    // MARK: Addresses

    /// The link a connection came over, from its local address (never from anything the peer says).
    static func link(of local: SocketAddress, classifier: LinkClassifier) -> LinkKind {
        guard let ip = local.ipAddress else { return .network }
        var scope: UInt32 = 0
        if case .v6(let v6) = local { scope = v6.address.sin6_scope_id }
        return classifier.classify(localAddress: ip, scope: scope)
    }

    static func isLoopback(_ address: SocketAddress) -> Bool {
        guard let ip = address.ipAddress else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }

    static func describe(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress else { return "\(address)" }
        let port = address.port.map(String.init) ?? "?"
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}

/// The controller's reference to one session: its shared info and its loop-bound handler.
struct SessionHandle: Sendable {
    let info: SessionInfo
    let handler: NIOLoopBound<SessionHandler>
    /// Completes when the session's channel has closed.
    let closeFuture: EventLoopFuture<Void>

    func deliverVideo(_ video: OutgoingVideo) {
        handler.eventLoop.execute { handler.value.deliverVideo(video) }
    }

    func deliverAudio(_ chunk: AudioChunk) {
        handler.eventLoop.execute { handler.value.deliverAudio(chunk) }
    }

    func setPausedByAgent(_ paused: Bool) {
        handler.eventLoop.execute { handler.value.setPausedByAgent(paused) }
    }

    func setCameraLost(_ lost: Bool) {
        handler.eventLoop.execute { handler.value.setCameraLost(lost) }
    }

    func deliverSettings(_ snapshot: SettingsSnapshot) {
        handler.eventLoop.execute { handler.value.deliverSettings(snapshot) }
    }

    func deliverEvent(_ event: WireEvent) {
        handler.eventLoop.execute { handler.value.deliverEvent(event) }
    }

    func end(_ error: WireError, isOrderly: Bool) {
        handler.eventLoop.execute { handler.value.end(error, isOrderly: isOrderly) }
    }
}
