import CamoClockTimer
import CamoMedia
import CamoWire
import Logging
import NIOCore

/// One studio connection on the agent: runs the wire state machine, admits the studio, and sends media from its
/// ``SessionOutbox`` only while the socket can take more, so a slow studio never blocks capture or other studios.
///
/// Confined to its channel's event loop; the controller reaches it through ``SessionHandle``. Its deadlines (the
/// handshake's, the keepalive, the stall watch, the last flush) run on the controller's clock (``ClockTimer``).
final class SessionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case awaitingPreamble
        case handshaking
        case awaitingHello
        /// The hello arrived; the delegate is deciding whether to accept the studio.
        case deciding
        case streaming
        case closing
    }

    private let controller: CamoController
    private let info: SessionInfo
    private let configuration: ControllerConfiguration
    private var logger: Logger

    private var wire = WireConnection.responder()
    private var phase = Phase.awaitingPreamble
    private var outbox = SessionOutbox()
    private var packetizer: AudioPacketizer?
    private var context: ChannelHandlerContext?
    private var holdsPendingSlot = false

    private var handshakeDeadline: ClockTimer?
    private var keepalive: ClockTimer?
    /// Closes the channel if the last write is not flushed in time (``closeAfterFlush()``).
    private var closeDeadline: ClockTimer?
    /// When anything last arrived from the studio, on the controller's clock.
    private var lastInbound: UInt64
    /// Since when the outbox has waited for a socket that takes no more, on the controller's clock.
    private var unwritableSince: UInt64?
    private var pingSequence: UInt32 = 0
    private var audioSequence: UInt32 = 0
    /// The minor protocol version both sides speak (the lower of the two; 1.1 features only from 1).
    private var minor: UInt8 = 0
    /// What the studio decodes (its hello).
    private var decodes = StudioDecodes.version1_0
    /// The audio format this session sends.
    private var audioFormat = AudioSampleFormat.float32
    private var pausedByAgent = false
    private var pausedByStudio = false
    private var cameraLost = false
    /// Messages that arrived while the delegate decided, handled once the studio is admitted.
    private var heldMessages: [AppMessage] = []
    /// Ends the delegate's decision if the connection closes first.
    private var cancelDecision: (@Sendable () -> Void)?
    /// Whether this studio may write settings (a paired studio marked read-only may not).
    private var maySetSettings = true
    /// The studio's name, for the settings' change notifications.
    private var studioName = ""
    /// A settings-only session (1.2): no media, no viewer.
    private var settingsOnly = false
    /// The studio asked for the camera's events (`eventsRequest`, 1.3).
    private var wantsEvents = false
    /// A paired studio (KK): it may list and fetch recordings (1.4).
    private var isPaired = false
    /// Clip lists and pieces asked for and not answered yet (1.4).
    private var clipRequestsInFlight = 0
    /// The most clip requests a studio may have waiting.
    static let maxClipRequestsInFlight = 8
    /// Settings requests and writes sent to the settings queue and not answered yet.
    private var settingsInFlight = 0
    /// The most settings requests and writes one studio may have in flight; beyond, a write is refused at once.
    static let maxSettingsInFlight = 16

    init(controller: CamoController, info: SessionInfo, configuration: ControllerConfiguration, logger: Logger) {
        self.controller = controller
        self.info = info
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "session"] = "\(info.id.uuidString.prefix(8))"
        logger[metadataKey: "peer"] = "\(info.address)"
        logger[metadataKey: "link"] = "\(info.link)"
        self.logger = logger
        self.lastInbound = controller.now()
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        guard controller.reservePendingHandshake() else {
            logger.notice("Refused a connection: too many handshakes in progress")
            fail(WireError(code: .tooManyConnections, reason: "The agent is busy with other connections; try again in a few seconds."))
            return
        }
        holdsPendingSlot = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        handshakeDeadline = ClockTimer.once(
            clock: controller.clock, after: ClockTimer.nanoseconds(configuration.handshakeDeadlineSeconds), on: context.eventLoop
        ) {
            bound.value.handshakeDeadlinePassed()
        }
        context.fireChannelActive()
    }

    private func handshakeDeadlinePassed() {
        guard phase != .streaming, phase != .closing, phase != .deciding else { return }
        logger.notice("Closing a connection that did not finish its handshake in time")
        fail(WireError(
            code: .handshakeTimeout,
            reason: "The handshake and hello did not finish within \(configuration.handshakeDeadlineSeconds) seconds."))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard phase != .closing else { return }
        var buffer = unwrapInboundIn(data)
        // Safe: readBytes(length: readableBytes) always succeeds.
        let bytes = buffer.readBytes(length: buffer.readableBytes)!
        lastInbound = controller.now()
        let result: (send: [UInt8], events: [WireConnection.Event])
        do {
            result = try wire.receive(bytes)
        } catch {
            if let mismatch = keyMismatch(error) {
                fail(mismatch)
                return
            }
            logger.notice("Closing: the studio broke the protocol", metadata: ["error": "\(error)"])
            fail(error)
            return
        }
        if !result.send.isEmpty { writeRaw(result.send) }
        for event in result.events {
            guard phase != .closing else { return }
            handle(event)
        }
        pump()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { unwritableSince = nil }
        pump()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshakeDeadline?.cancel()
        cancelDecision?()
        cancelDecision = nil
        keepalive?.cancel()
        closeDeadline?.cancel()
        if holdsPendingSlot {
            holdsPendingSlot = false
            controller.releasePendingHandshake()
        }
        phase = .closing
        controller.sessionEnded(info)
        logger.info("Session closed")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.info("Connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Wire events

    private func handle(_ event: WireConnection.Event) {
        switch event {
        case .preamble(let preamble):
            let paired = preamble.pattern == .kk ? controller.pairedDeviceStore.studio(id: preamble.initiatorId) : nil
            if let refusal = configuration.admission.refusal(
                for: preamble, link: info.link, isPaired: paired != nil)
            {
                logger.notice(
                    "Refused a studio", metadata: ["studioId": "\(preamble.initiatorId)", "pattern": "\(preamble.pattern)", "link": "\(info.link)", "reason": "\(refusal.reason)"])
                fail(refusal)
                return
            }
            do {
                // The first handshake message usually arrives with the preamble; accepting processes it at once.
                let (reply, events) = try wire.acceptReturningEvents(
                    localStatic: configuration.identity.keyPair, remoteStatic: paired.map { Array($0.publicKey) }, psk: nil)
                if !reply.isEmpty { writeRaw(reply) }
                phase = .handshaking
                for event in events where phase != .closing { handle(event) }
            } catch {
                fail(keyMismatch(error) ?? error)
            }
        case .handshakeComplete:
            phase = .awaitingHello
        case .message(let message):
            handle(message)
        case .peerError(let error, _):
            logger.notice("The studio reported an error", metadata: ["code": "\(error.code)", "reason": "\(error.reason)"])
            close()
        }
    }

    /// KK with a paired id whose handshake does not authenticate: the keys do not match the pairing. Said as
    /// `notPaired` with what to do, and logged; nil for any other error.
    private func keyMismatch(_ error: WireError) -> WireError? {
        guard error.code == .handshakeFailed, let preamble = wire.preamble, preamble.pattern == .kk else { return nil }
        logger.notice("Refused a studio whose key does not match its pairing", metadata: ["studioId": "\(preamble.initiatorId)"])
        return WireError(
            code: .notPaired,
            reason: "The keys do not match the ones stored when studio \(preamble.initiatorId) paired with this agent (one side made a new key, or it is not the same studio). Pair again: camo-studio pair, then camo-agent pair.")
    }

    private func handle(_ message: AppMessage) {
        switch (phase, message) {
        case (.awaitingHello, .studioHello(let hello)):
            admit(hello)
        case (.deciding, let message) where !Self.isGoodbye(message):
            // The studio may speak before it sees the agent's hello; what it says then is kept for after.
            guard heldMessages.count < 16 else {
                fail(WireError(code: .protocolViolation, reason: "The studio sent more than 16 messages before the agent's hello."))
                return
            }
            heldMessages.append(message)
        case (.streaming, .setAudioSamples(let samples)):
            do {
                try packetizer?.setSamplesPerPacket(Int(samples))
                info.withState { $0.connection?.audioSamplesRequired = Int(samples) }
                controller.sessionChanged()
            } catch {
                fail(WireError(code: .badRequest, reason: "\(error)"))
            }
        case (.streaming, .setVideo(let request)):
            applyVideoRequest(width: Int(request.width), height: Int(request.height), codec: request.codec, quality: Int(request.jpegQuality))
            controller.sessionChanged()
        case (.streaming, .ping(let ping)):
            enqueueControl(.pong(Pong(sequence: ping.sequence, echoedSentAt: ping.sentAt, receivedAt: controller.now())))
        case (.streaming, .pong(let pong)):
            let now = controller.now()
            if now >= pong.echoedSentAt {
                info.withState { $0.statistics.roundTripNanos = now - pong.echoedSentAt }
            }
        case (.streaming, .keyframeRequest(let reason)):
            let known = info.withState { state -> Bool in
                guard state.h264 != nil else { return false }
                state.h264!.keyframeRequested = true
                state.h264!.keyframeRequests += 1
                return true
            }
            if known { logger.debug("The studio asked for a keyframe", metadata: ["reason": "\(reason)"]) }
        case (.streaming, .receiverReport(let report)):
            let now = controller.now()
            let frames = report.frames.map {
                ReceivedFrameSample(captureTime: $0.captureTime, receivedAt: $0.receivedAt, bytes: Int($0.bytes))
            }
            // The video's bytes, not every byte: the rate the encoder's output got through beside the audio, which
            // is never skipped (s16 stereo takes 1.5 Mb/s of a link on its own).
            let videoBytes = frames.reduce(0) { $0 + $1.bytes }
            info.withState { state in
                state.h264?.rate.receiveReport(frames: frames, bytesReceived: videoBytes, intervalNanos: report.intervalNanos, now: now)
                state.jpegRate?.rate.receiveReport(frames: frames, bytesReceived: videoBytes, intervalNanos: report.intervalNanos, now: now)
            }
        case (.streaming, .pauseRequest) where settingsOnly:
            break  // a settings-only session stays without media
        case (.streaming, .pauseRequest(let paused)):
            pausedByStudio = paused
            info.withState { $0.connection?.pausedByStudio = paused }
            applyPause()
            controller.sessionChanged()
        case (.streaming, .settingsRequest) where minor >= 2:
            requestSettings()
        case (.streaming, .settingsWrite(let write)) where minor >= 2:
            requestWrite(write)
        case (.streaming, .eventsRequest(let replay)) where minor >= 3:
            guard !wantsEvents else { break }  // asked again: it has them already
            wantsEvents = true
            if replay { for event in controller.eventHistory() { enqueueControl(.eventNotice(event)) } }
        case (.streaming, .clipListRequest(let before)) where minor >= 4:
            requestClips { controller, paired, reply in
                controller.requestClipList(before: before, paired: paired) { reply(.clipList($0)) }
            }
        case (.streaming, .clipFetch(let fetch)) where minor >= 4:
            requestClips { controller, paired, reply in
                controller.requestClipData(fetch, paired: paired) { reply(.clipData($0)) }
            }
        case (_, .goodbye(let reason)):
            logger.info("The studio said goodbye", metadata: ["reason": "\(reason.reason)"])
            close()
        case (_, .error(let error)):
            logger.notice("The studio reported an error", metadata: ["code": "\(error.code)", "reason": "\(error.reason)"])
            close()
        default:
            fail(WireError(code: .protocolViolation, reason: "A studio may not send \(message.kindName) at this point."))
        }
    }

    private static func isGoodbye(_ message: AppMessage) -> Bool {
        if case .goodbye = message { return true }
        return false
    }

    private func admit(_ hello: StudioHello) {
        let pairedKey: [UInt8]?
        if let preamble = wire.preamble, preamble.pattern == .kk {
            guard hello.studioId == preamble.initiatorId else {
                fail(WireError(code: .protocolViolation, reason: "The studio's hello names another id than its KK preamble."))
                return
            }
            pairedKey = wire.remoteStaticKey
        } else {
            pairedKey = nil
        }
        let incoming = IncomingConnection(
            studioId: hello.studioId, name: hello.studioName, address: info.address, isLoopback: info.isLoopback, link: info.link)
        // Safe: admit runs from channelRead, so the context is set.
        let loop = context!.eventLoop
        // The decision has its own deadline (the controller's clock); the handshake's is met.
        handshakeDeadline?.cancel()
        phase = .deciding
        let bound = NIOLoopBound(self, eventLoop: loop)
        let decision = controller.decideAdmission(incoming, on: loop)
        cancelDecision = decision.cancel
        decision.future.whenSuccess { refusal in
            bound.value.decided(hello, incoming: incoming, pairedKey: pairedKey, refusal: refusal)
        }
    }

    /// The delegate decided (or its deadline passed): admit the studio or refuse it.
    private func decided(_ hello: StudioHello, incoming: IncomingConnection, pairedKey: [UInt8]?, refusal: WireError?) {
        cancelDecision = nil
        guard phase == .deciding, let channel = context?.channel else { return }
        if let refusal {
            logger.notice("Refused a studio after its hello", metadata: ["reason": "\(refusal.reason)"])
            fail(refusal)
            return
        }
        if let refusal = controller.admit(
            incoming, info: info, handler: NIOLoopBound(self, eventLoop: channel.eventLoop), closeFuture: channel.closeFuture,
            pairedKey: pairedKey)
        {
            logger.notice("Refused a studio after its hello", metadata: ["reason": "\(refusal.reason)"])
            fail(refusal)
            return
        }
        handshakeDeadline?.cancel()
        if holdsPendingSlot {
            holdsPendingSlot = false
            controller.releasePendingHandshake()
        }
        if pairedKey != nil { controller.noteSeen(studioId: hello.studioId) }
        isPaired = pairedKey != nil
        controller.noteSettingsContact()
        maySetSettings = pairedKey == nil || controller.pairedDeviceStore.studio(id: hello.studioId)?.maySetSettings != false
        studioName = hello.studioName
        settingsOnly = hello.purpose == .settingsOnly
        do {
            packetizer = try AudioPacketizer(samplesPerPacket: Int(hello.audioSamplesRequired))
        } catch {
            fail(WireError(code: .badRequest, reason: "\(error)"))
            return
        }
        minor = min(WireLimits.versionMinor, hello.versionMinor)
        decodes = minor >= 1 ? hello.decodes : .version1_0
        audioFormat = minor >= 1 ? AdmissionPolicy.audioFormat(for: hello.audioFormat, link: info.link) : .float32
        applyVideoRequest(
            width: Int(hello.preferredWidth), height: Int(hello.preferredHeight), codec: hello.codec,
            quality: Int(hello.jpegQuality))
        let settings = info.settings
        pausedByAgent = controller.isPaused
        cameraLost = controller.isCameraLost
        info.withState { state in
            // A settings-only session is no viewer: not among the connections (the camera does not start for it).
            state.isViewer = !settingsOnly
            guard !settingsOnly else { return }
            state.connection = CamoConnection(
                id: info.id, studioId: hello.studioId, name: hello.studioName, address: info.address, link: info.link, since: .now,
                codec: settings.codec, videoSize: settings.size, audioSamplesRequired: Int(hello.audioSamplesRequired),
                pausedByStudio: false, statistics: SessionStatistics())
        }
        let description = configuration.description
        // Media flows from the moment the studio can see the hello: what the controller hands over meanwhile runs on
        // this event loop after this call, so it is queued behind the hello, never dropped.
        info.withState { $0.takesMedia = !isPaused && !settingsOnly }
        if settingsOnly { pausedByStudio = true }
        // Streaming before the hello is written: writing can close the channel from inside this call
        // (a peer that reset), and channelInactive must then find the phase it expects.
        phase = .streaming
        var capabilities: AgentCapabilities = [.bgra, .jpeg, .pause, .audio, .keepalive]
        if minor >= 1 { capabilities.insert(.adaptive) }
        if configuration.h264 != nil, minor >= 1 { capabilities.insert(.h264) }
        if minor >= 2 { capabilities.insert(.settings) }
        if minor >= 3, controller.publishesEvents { capabilities.insert(.events) }
        if minor >= 4, controller.keepsClips { capabilities.insert(.clips) }
        enqueueControl(.agentHello(AgentHello(
            versionMajor: WireLimits.versionMajor, versionMinor: minor,
            agentId: configuration.identity.id, agentName: configuration.identity.name,
            model: description.model, softwareVersion: description.softwareVersion,
            camera: description.camera, microphone: description.microphone,
            capabilities: capabilities,
            width: UInt16(settings.size.width), height: UInt16(settings.size.height), codec: settings.codec,
            audioSamplesRequired: hello.audioSamplesRequired, audioFormat: audioFormat)))
        applyPause()
        // Safe: decided checked that the context is set.
        guard phase == .streaming, context!.channel.isActive else { return }
        logger.info(
            "Studio connected",
            metadata: [
                "studio": "\(hello.studioName)", "codec": "\(settings.codec)",
                "size": "\(settings.size.width)x\(settings.size.height)", "samples": "\(hello.audioSamplesRequired)",
                "audio": "\(audioFormat)", "protocol": "1.\(minor)",
            ])
        // Safe: decided checked that the context is set.
        let loop = context!.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        keepalive = ClockTimer.repeating(clock: controller.clock, every: Self.keepaliveInterval, on: loop) {
            bound.value.tick()
        }
        controller.sessionChanged()
        let held = heldMessages
        heldMessages.removeAll()
        for message in held where phase == .streaming { handle(message) }
    }

    private func applyVideoRequest(width: Int, height: Int, codec: VideoCodecRequest, quality: Int) {
        var size = VideoSize(width: width, height: height)
        var chosen = AdmissionPolicy.codec(for: codec, link: info.link, decodes: decodes, h264Available: configuration.h264 != nil)
        if chosen == .h264 {
            // 4:2:0 needs even sides: an odd request gets the even size below it (the hello and each frame say so).
            size = VideoSize(width: max(2, width & ~1), height: max(2, height & ~1))
        }
        if chosen == .bgra, VideoMessage.headerLength + 4 * width * height > WireLimits.maxMessage {
            // A raw frame this large would break the message limit; JPEG always fits (PROTOCOL.md, codec).
            chosen = .jpeg
        }
        let jpegQuality = (1...100).contains(quality) ? quality : configuration.defaultJPEGQuality
        let rate = configuration.h264?.rateConfiguration(for: size)
        // JPEG to a 1.1 studio on the network follows the link too (quality, then skipped frames).
        let jpegRate = chosen == .jpeg && info.link == .network && minor >= 1
            ? JPEGRateState.configuration(
                width: size.width, height: size.height,
                latencyBudgetNanos: configuration.h264?.rate.latencyBudgetNanos ?? LinkRateConfiguration().latencyBudgetNanos)
            : nil
        info.withState { state in
            let changed = state.settings.size != size || state.settings.codec != chosen
            state.settings = VideoSettings(size: size, codec: chosen, jpegQuality: jpegQuality)
            state.connection?.videoSize = size
            state.connection?.codec = chosen
            if chosen == .h264, let rate {
                // A new size is a new rendition and a new link estimate; the stream starts at a keyframe.
                if state.h264 == nil || changed { state.h264 = H264SessionState(rate: LinkRateController(configuration: rate)) }
            } else {
                state.h264 = nil
            }
            if let jpegRate {
                if state.jpegRate == nil || changed {
                    state.jpegRate = JPEGRateState(rate: LinkRateController(configuration: jpegRate), quality: jpegQuality)
                } else {
                    state.jpegRate!.requestedQuality = jpegQuality
                }
            } else {
                state.jpegRate = nil
            }
        }
    }

    // MARK: From the controller

    /// A prepared frame for this session's size and codec.
    func deliverVideo(_ video: OutgoingVideo) {
        guard phase == .streaming, !isPaused else { return }
        outbox.offerVideo(video)
        pump()
    }

    /// Captured audio; cut into this studio's packet size here.
    func deliverAudio(_ chunk: AudioChunk) {
        guard phase == .streaming, !isPaused, packetizer != nil else { return }
        // Mutated in place (not through a local copy) so the packetizer's buffer is never copied.
        packetizer!.append(chunk)
        while let packet = packetizer!.nextPacket() {
            let message = AppMessage.audio(AudioMessage(
                sequence: audioSequence, firstSampleTime: packet.firstSampleTime, samples: packet.samples, format: audioFormat))
            audioSequence &+= 1
            guard outbox.enqueueAudio(message.encoded()) else {
                logger.notice("Ending a studio that stopped reading: its audio backlog is full")
                fail(WireError(code: .stalled, reason: "The studio stopped reading; its audio backlog passed the limit."))
                return
            }
        }
        pump()
    }

    /// The privacy switch changed.
    func setPausedByAgent(_ paused: Bool) {
        pausedByAgent = paused
        guard phase == .streaming else { return }
        applyPause()
    }

    /// A settings change (1.2 studios only).
    /// One event notice, when the studio asked for events (protocol 1.3).
    func deliverEvent(_ event: WireEvent) {
        guard phase == .streaming, wantsEvents else { return }
        enqueueControl(.eventNotice(event))
    }

    func deliverSettings(_ snapshot: SettingsSnapshot) {
        guard phase == .streaming, minor >= 2 else { return }
        var snapshot = snapshot
        snapshot.studioMayWrite = maySetSettings
        enqueueControl(.settings(snapshot))
    }

    /// Hands a clip request to the controller's clips queue and sends its answer from this event loop; a studio that
    /// keeps more than ``maxClipRequestsInFlight`` waiting is closed (`limitExceeded`).
    private func requestClips(
        _ ask: (CamoController, Bool, @escaping @Sendable (AppMessage) -> Void) -> Void
    ) {
        guard clipRequestsInFlight < Self.maxClipRequestsInFlight, let loop = context?.eventLoop else {
            fail(WireError(code: .limitExceeded, reason: "The studio asked for \(Self.maxClipRequestsInFlight) recordings' lists or pieces without waiting for an answer."))
            return
        }
        clipRequestsInFlight += 1
        let bound = NIOLoopBound(self, eventLoop: loop)
        ask(controller, isPaired) { answer in
            loop.execute {
                bound.value.clipRequestsInFlight -= 1
                guard bound.value.phase == .streaming else { return }
                bound.value.enqueueControl(answer)
            }
        }
    }

    private func requestSettings() {
        guard settingsInFlight < Self.maxSettingsInFlight, let loop = context?.eventLoop else {
            fail(WireError(code: .limitExceeded, reason: "The studio asked for the settings \(Self.maxSettingsInFlight) times without waiting for an answer."))
            return
        }
        settingsInFlight += 1
        let bound = NIOLoopBound(self, eventLoop: loop)
        controller.requestSettings(studioMayWrite: maySetSettings) { snapshot in
            loop.execute {
                bound.value.settingsInFlight -= 1
                guard bound.value.phase == .streaming else { return }
                bound.value.enqueueControl(.settings(snapshot))
            }
        }
    }

    private func requestWrite(_ write: SettingsWrite) {
        func refuseAll(_ reason: String) {
            let refused = write.values.keys.sorted().map { SettingRefusal(name: $0, reason: reason) }
            enqueueControl(.settingsResult(SettingsResult(requestId: write.requestId, applied: [], refused: refused)))
        }
        guard maySetSettings else {
            logger.notice("Refused a settings write from a read-only studio", metadata: ["settings": "\(write.values.keys.sorted())"])
            return refuseAll("this studio may read the settings but not change them (on the agent: camo-agent paired --allow-settings ID)")
        }
        guard settingsInFlight < Self.maxSettingsInFlight, let loop = context?.eventLoop else {
            return refuseAll("too many settings writes in flight (\(Self.maxSettingsInFlight)); wait for the results before writing more")
        }
        settingsInFlight += 1
        let bound = NIOLoopBound(self, eventLoop: loop)
        controller.requestWrite(write, by: "studio \(studioName)") { result in
            loop.execute {
                bound.value.settingsInFlight -= 1
                guard bound.value.phase == .streaming else { return }
                bound.value.enqueueControl(.settingsResult(result))
            }
        }
    }

    /// The camera was lost or came back.
    func setCameraLost(_ lost: Bool) {
        cameraLost = lost
        guard phase == .streaming else { return }
        enqueueControl(.streamState(currentStreamState))
        pump()
    }

    /// Ends the session: an orderly goodbye (`isOrderly`) or an error the studio did not ask for.
    func end(_ error: WireError, isOrderly: Bool) {
        guard phase != .closing else { return }
        if isOrderly, wire.isEstablished {
            phase = .closing
            leaveController()
            if let record = try? wire.seal(.goodbye(error)) { writeRaw(record) }
            closeAfterFlush()
        } else {
            fail(error)
        }
    }

    // MARK: Sending

    private var isPaused: Bool { pausedByAgent || pausedByStudio }

    private var currentStreamState: StreamState {
        if pausedByAgent { return .pausedByAgent }
        if pausedByStudio { return .pausedByStudio }
        if cameraLost { return .cameraLost }
        return .streaming
    }

    private func applyPause() {
        if isPaused {
            outbox.discardWaitingVideo()
            outbox.discardAudio()
            // Samples left over from before the pause would go out stamped with their old time, glued to
            // samples from after it; start the packet timeline afresh on resume.
            if let samples = packetizer?.samplesPerPacket {
                packetizer = try? AudioPacketizer(samplesPerPacket: samples)
            }
        }
        let paused = isPaused
        info.withState { state in
            state.takesMedia = !paused
            // Frames of the pause never reach the studio: after it the stream starts again at a keyframe.
            if paused, state.h264 != nil { state.h264!.awaitingKeyframe = true }
        }
        enqueueControl(.streamState(currentStreamState))
        pump()
    }

    private func enqueueControl(_ message: AppMessage) {
        outbox.enqueueControl(message.encoded())
        pump()
    }

    /// Sends fragments while the socket takes them. Stops at the high-water mark, so the kernel buffer plus at
    /// most one fragment beyond it is all a stalled studio can make the agent hold, besides the outbox.
    private func pump() {
        guard let context, phase == .streaming || phase == .awaitingHello else { return }
        var wrote = false
        while context.channel.isWritable, let fragment = outbox.nextFragment(maxPayload: WireLimits.maxFragmentPayload) {
            // Sealed straight from the frame's bytes into the buffer the socket writes: one pass over the data.
            let piece = fragment.wireFragment
            let length = WireConnection.recordLength(of: piece)
            var buffer = context.channel.allocator.buffer(capacity: length)
            do {
                try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { try wire.seal(piece, into: $0) }
            } catch {
                fail(error)
                return
            }
            context.write(wrapOutboundOut(buffer), promise: nil)
            wrote = true
        }
        if wrote { context.flush() }
        if outbox.isEmpty || context.channel.isWritable {
            unwritableSince = nil
        } else if unwritableSince == nil {
            unwritableSince = controller.now()
        }
        let lostReference = outbox.takeLostReference()
        let queued = outbox.queuedVideoBytes
        info.withState { state in
            if state.h264 != nil {
                state.h264!.queuedVideoBytes = queued
                if lostReference { state.h264!.awaitingKeyframe = true }
            }
            state.jpegRate?.queuedVideoBytes = queued
            state.statistics.framesSent = outbox.sentFrames
            state.statistics.framesDropped = outbox.droppedFrames
            state.statistics.framesRepeated = outbox.sentRepeats
            state.statistics.audioPackets = outbox.sentAudioMessages
        }
    }

    private func tick() {
        guard phase == .streaming else {
            if phase == .closing {
                keepalive?.cancel()
                keepalive = nil
            }
            return
        }
        let now = controller.now()
        if Self.elapsed(from: lastInbound, to: now) > ClockTimer.nanoseconds(configuration.keepaliveTimeoutSeconds) {
            logger.notice("Ending a studio that went silent")
            fail(WireError(
                code: .keepaliveTimeout,
                reason: "Nothing arrived from the studio for \(Int(configuration.keepaliveTimeoutSeconds)) seconds."))
            return
        }
        if let since = unwritableSince,
            Self.elapsed(from: since, to: now) > ClockTimer.nanoseconds(configuration.stallDeadlineSeconds)
        {
            logger.notice("Ending a studio that stopped reading")
            fail(WireError(
                code: .stalled,
                reason: "The studio did not read for \(Int(configuration.stallDeadlineSeconds)) seconds; the session was ended to protect the others."))
            return
        }
        pingSequence &+= 1
        enqueueControl(.ping(Ping(sequence: pingSequence, sentAt: controller.now())))
        let (statistics, h264, jpeg) = info.withState { ($0.statistics, $0.h264, $0.jpegRate) }
        // 1.1 studios get the rate figures (a 1.0 studio would refuse the longer message).
        let rate: RateStats? = if minor < 1 {
            nil
        } else if let jpeg {
            RateStats(
                framesSkipped: jpeg.skippedFrames, targetBitrate: UInt32(clamping: jpeg.rate.targetBitrate),
                queueDelayMicros: UInt32(clamping: (jpeg.rate.queueDelayNanos ?? 0) / 1_000))
        } else {
            RateStats(
                framesSkipped: h264?.skippedFrames ?? 0, targetBitrate: UInt32(clamping: h264?.renditionBitrate ?? 0),
                queueDelayMicros: UInt32(clamping: (h264?.rate.queueDelayNanos ?? 0) / 1_000))
        }
        enqueueControl(.stats(SessionStats(
            framesSent: statistics.framesSent, framesDropped: statistics.framesDropped,
            framesRepeated: statistics.framesRepeated, audioPackets: statistics.audioPackets,
            rttNanos: statistics.roundTripNanos ?? 0, rate: rate)))
    }

    /// How often a streaming session pings the studio, reports its statistics and checks its deadlines.
    private static let keepaliveInterval: UInt64 = 1_000_000_000

    /// Nanoseconds from `start` to `end`; 0 when `end` is not later.
    private static func elapsed(from start: UInt64, to end: UInt64) -> UInt64 {
        end > start ? end - start : 0
    }

    // MARK: Closing

    private func writeRaw(_ bytes: [UInt8]) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    /// Sends the error (authenticated after the handshake, marked unauthenticated before it) and closes.
    private func fail(_ error: Error) {
        guard phase != .closing else { return }
        let wireError = (error as? WireError) ?? WireError(code: .internalError, reason: "\(error)")
        phase = .closing
        leaveController()
        writeRaw(wire.errorRecord(wireError))
        closeAfterFlush()
    }

    private func close() {
        phase = .closing
        leaveController()
        context?.close(promise: nil)
    }

    /// Stops taking media and leaves the controller's list now, not when the socket finally closes.
    private func leaveController() {
        info.withState { $0.takesMedia = false }
        controller.sessionEnded(info)
    }

    /// Closes once the last write has gone out, or after a second of the controller's clock if the peer does not
    /// read it.
    private func closeAfterFlush() {
        guard let context else { return }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: promise)
        let channel = context.channel
        promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
        // Once inactive, nothing would cancel the timer; the channel is closed already.
        guard closeDeadline == nil, channel.isActive else { return }
        closeDeadline = ClockTimer.once(clock: controller.clock, after: 1_000_000_000, on: context.eventLoop) {
            channel.close(promise: nil)
        }
    }
}

extension AppMessage {
    /// The message's name, for error sentences.
    var kindName: String {
        switch self {
        case .studioHello: return "a studio hello"
        case .agentHello: return "an agent hello"
        case .setAudioSamples: return "setAudioSamples"
        case .setVideo: return "setVideo"
        case .ping: return "ping"
        case .pong: return "pong"
        case .pauseRequest: return "pauseRequest"
        case .streamState: return "streamState"
        case .goodbye: return "goodbye"
        case .stats: return "stats"
        case .keyframeRequest: return "keyframeRequest"
        case .receiverReport: return "receiverReport"
        case .settingsRequest: return "settingsRequest"
        case .settings: return "settings"
        case .settingsWrite: return "settingsWrite"
        case .settingsResult: return "settingsResult"
        case .eventsRequest: return "eventsRequest"
        case .eventNotice: return "eventNotice"
        case .clipListRequest: return "clipListRequest"
        case .clipList: return "clipList"
        case .clipFetch: return "clipFetch"
        case .clipData: return "clipData"
        case .video: return "video"
        case .audio: return "audio"
        case .error: return "error"
        }
    }
}
