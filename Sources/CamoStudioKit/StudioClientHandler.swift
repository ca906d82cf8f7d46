import CamoClockTimer
import CamoMedia
import Foundation
import CamoWire
import Logging
import NIOCore

/// A request from ``StudioClient`` to its channel handler, passed as a user outbound event.
enum StudioCommand: Sendable {
    /// Seal and send an application message (only once the session is up).
    case send(AppMessage)
    /// Say goodbye and close.
    case goodbye(reason: String)
}

/// Drives one studio connection on its event loop: the `WireConnection` state machine, the hello
/// exchange, keepalive, video decoding, and delivery of ``StudioEvent``s.
///
/// Confined to its channel's event loop (NIO calls it there, and ``StudioClient`` reaches it only
/// through `triggerUserOutboundEvent`); not Sendable.
final class StudioClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case handshaking, awaitingHello, streaming, closing, closed
    }

    private let configuration: StudioClientConfiguration
    private let continuation: AsyncStream<StudioEvent>.Continuation
    private let backlog: EventBacklog
    private let hello: EventLoopPromise<AgentInfo>
    private let logger: Logger
    private var connection: WireConnection
    private var phase = Phase.handshaking
    private var closeReason: StudioCloseReason?
    private var remoteStaticKey: [UInt8] = []
    private var agentCodec = StudioVideoCodec.jpeg
    private var agentAudioFormat = AudioSampleFormat.float32
    private var decoder: JPEGDecoder?
    private var startedAt: UInt64 = 0
    private var lastReceivedAt: UInt64 = 0
    private var pingSequence: UInt32 = 0
    private var nextPingAt: UInt64 = 0
    private var timer: ClockTimer?
    private var context: ChannelHandlerContext?
    private var readingPaused = false
    private var pendingRead = false
    /// Watches for a dead link once streaming, when ``StudioClientConfiguration/stallTimeoutNanos`` is set.
    private var stall: MediaStallDetector?
    /// The minor protocol version the agent speaks with this studio.
    private var agentMinor: UInt8 = 0
    /// The agent steers by receiver reports (capability `adaptive`).
    private var agentAdaptive = false
    /// H.264: the decoder and keyframe requests (made at the first H.264 frame).
    private var h264: H264Receiver?
    private var lastH264Sequence: UInt32?
    /// H.264 with an adaptive agent: what arrived since the last report.
    private var reports: ReceiverReportBuilder?
    private var reportTimer: ClockTimer?
    /// How often receiver reports go out (the agent steers from them).
    static let reportIntervalNanos: UInt64 = 100_000_000

    init(configuration: StudioClientConfiguration, continuation: AsyncStream<StudioEvent>.Continuation,
         backlog: EventBacklog, hello: EventLoopPromise<AgentInfo>, logger: Logger) {
        self.configuration = configuration
        self.continuation = continuation
        self.backlog = backlog
        self.hello = hello
        self.logger = logger
        let preamble = Preamble(pattern: configuration.handshake.pattern, initiatorId: configuration.identity.id)
        let (remoteStatic, psk): ([UInt8]?, [UInt8]?) = switch configuration.handshake {
        case .unpaired: (nil, nil)
        case .paired(let agentKey): (agentKey, nil)
        case .pairing(let secret): (nil, secret)
        }
        self.connection = WireConnection.initiator(
            preamble: preamble, localStatic: configuration.identity.keyPair, remoteStatic: remoteStatic, psk: psk)
    }

    /// Nanoseconds on the session's clock (``StudioClientConfiguration/clock``).
    private func now() -> UInt64 { configuration.clock.now.nanoseconds }

    // MARK: Channel lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Resuming runs on this handler's event loop; NIOLoopBound checks that at run time.
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        backlog.setResume {
            eventLoop.execute { loopBound.value.resumeReading() }
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        startedAt = self.now()
        lastReceivedAt = startedAt
        do {
            write(try connection.start(), context: context)
        } catch {
            fail(.protocolError(code: error.code.rawValue, reason: error.reason), context: context)
            return
        }
        let tick = min(configuration.pingIntervalNanos, 250_000_000)
        // The timer runs on this handler's event loop; NIOLoopBound checks that at run time.
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = ClockTimer.repeating(clock: configuration.clock, every: tick, on: context.eventLoop) {
            loopBound.value.handler.tick(context: loopBound.value.context)
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        reportTimer?.cancel()
        reportTimer = nil
        phase = .closed
        let reason = closeReason ?? .connectionLost("the agent closed the TCP connection without a goodbye")
        hello.fail(StudioClientError.sessionEnded(reason))
        emit(.closed(reason))
        continuation.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection error: \(error)")
        if closeReason == nil { closeReason = .connectionLost("\(error)") }
        context.close(promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        reportTimer?.cancel()
        reportTimer = nil
        self.context = nil
        backlog.setResume(nil)
    }

    // MARK: Backpressure

    /// Delivers an event; pauses reading when the consumer's backlog passes the high-water mark.
    private func emit(_ event: StudioEvent) {
        continuation.yield(event)
        if backlog.add(EventBacklog.weight(of: event)) {
            logger.debug("the consumer is behind by \(backlog.bytes) bytes; pausing reads")
            readingPaused = true
        }
    }

    /// The consumer caught up: read again.
    private func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        if pendingRead, let context {
            pendingRead = false
            context.read()
        }
    }

    func read(context: ChannelHandlerContext) {
        if readingPaused {
            pendingRead = true
        } else {
            context.read()
        }
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard phase != .closed, phase != .closing else { return }
        let buffer = unwrapInboundIn(data)
        lastReceivedAt = self.now()
        stall?.arrived(at: lastReceivedAt)
        reports?.received(bytes: buffer.readableBytes)
        let result: (send: [UInt8], events: [WireConnection.Event])
        do {
            result = try connection.receive(buffer.readableBytesView)
        } catch {
            logger.warning("protocol error from the agent: \(error)")
            let record = connection.isEstablished ? connection.errorRecord(error) : []
            write(record, context: context)
            fail(.protocolError(code: error.code.rawValue, reason: error.reason), context: context)
            return
        }
        write(result.send, context: context)
        for event in result.events {
            guard phase != .closed, phase != .closing else { return }
            handle(event, context: context)
        }
    }

    private func handle(_ event: WireConnection.Event, context: ChannelHandlerContext) {
        switch event {
        case .preamble:
            violation("an agent never sends a preamble", context: context)
        case .handshakeComplete(let remoteStaticKey, _):
            self.remoteStaticKey = remoteStaticKey
            phase = .awaitingHello
            let hello = StudioHello(
                studioId: configuration.identity.id, studioName: configuration.studioName,
                audioSamplesRequired: UInt32(configuration.audioSamplesRequired),
                preferredWidth: UInt16(configuration.preferredWidth), preferredHeight: UInt16(configuration.preferredHeight),
                codec: VideoCodecRequest(configuration.codec), jpegQuality: UInt8(configuration.jpegQuality),
                purpose: configuration.purpose)
            send(.studioHello(hello), context: context)
        case .message(let message):
            handle(message, context: context)
        case .peerError(var error, let authenticated):
            error = Self.explained(error)
            logger.debug("agent error: \(error)")
            if authenticated {
                emit(.peerError(code: error.code.rawValue, reason: error.reason))
                fail(.agentError(code: error.code.rawValue, reason: error.reason), context: context)
            } else {
                hello.fail(StudioClientError.agentRefused(code: error.code.rawValue, reason: error.reason))
                fail(.agentError(code: error.code.rawValue, reason: error.reason), context: context)
            }
        }
    }

    private func handle(_ message: AppMessage, context: ChannelHandlerContext) {
        if phase == .awaitingHello {
            switch message {
            case .agentHello, .goodbye, .error, .ping, .pong:
                break
            default:
                violation("the agent sent a message before its hello", context: context)
                return
            }
        }
        switch message {
        case .agentHello(let agentHello):
            guard phase == .awaitingHello else { return violation("a second agentHello", context: context) }
            phase = .streaming
            nextPingAt = self.now()
            stall = configuration.stallTimeoutNanos.map { MediaStallDetector(timeoutNanos: $0, now: nextPingAt) }
            agentCodec = StudioVideoCodec(agentHello.codec)
            agentMinor = agentHello.versionMinor
            agentAudioFormat = agentMinor >= 1 ? agentHello.audioFormat : .float32
            agentAdaptive = agentMinor >= 1 && agentHello.capabilities.contains(.adaptive)
            hello.succeed(AgentInfo(hello: agentHello, staticPublicKey: remoteStaticKey))
        case .video(let video):
            deliver(video, context: context)
        case .audio(let audio):
            // Consumers get float32 bytes whatever crossed the wire (s16 on a slow link).
            let data = audio.format == AudioMessage.formatFloat32LE
                ? audio.data : audio.samples.withUnsafeBytes { Array($0) }
            emit(.audio(ReceivedAudioPacket(
                sequence: audio.sequence, firstSampleTime: audio.firstSampleTime,
                sampleFrames: Int(audio.sampleFrames), data: data)))
        case .ping(let ping):
            send(.pong(Pong(sequence: ping.sequence, echoedSentAt: ping.sentAt, receivedAt: self.now())), context: context)
        case .pong(let pong):
            let now = self.now()
            if pong.echoedSentAt <= now && pong.echoedSentAt >= startedAt {
                let roundTrip = now - pong.echoedSentAt
                emit(.roundTrip(nanoseconds: roundTrip))
                // The agent's clock read pong.receivedAt about half a round trip after the ping left.
                let studioMid = pong.echoedSentAt &+ roundTrip / 2
                emit(.clockSample(offsetNanos: Int64(bitPattern: pong.receivedAt &- studioMid), roundTripNanos: roundTrip))
            }
        case .streamState(let state):
            stall?.streamState(state, at: self.now())
            emit(.streamState(state))
        case .stats(let stats):
            emit(.stats(stats))
        case .goodbye(let goodbye):
            logger.info("agent said goodbye: \(goodbye.reason) (code \(goodbye.code.rawValue))")
            closeReason = .agentGoodbye(code: goodbye.code.rawValue, reason: goodbye.reason)
            phase = .closing
            context.close(promise: nil)
        case .error(var error):
            error = Self.explained(error)
            emit(.peerError(code: error.code.rawValue, reason: error.reason))
            fail(.agentError(code: error.code.rawValue, reason: error.reason), context: context)
        case .settings(let snapshot):
            emit(.settings(snapshot))
        case .settingsResult(let result):
            emit(.settingsResult(result))
        case .eventNotice(let event):
            emit(.cameraEvent(event))
        case .clipList(let list):
            emit(.clipList(list))
        case .clipData(let piece):
            emit(.clipData(piece))
        case .studioHello, .setAudioSamples, .setVideo, .pauseRequest, .keyframeRequest, .receiverReport, .settingsRequest, .settingsWrite,
            .eventsRequest, .clipListRequest, .clipFetch:
            violation("the agent sent a studio-only message", context: context)
        }
    }

    private func deliver(_ video: VideoMessage, context: ChannelHandlerContext) {
        if video.codec == .h264 {
            deliverH264(video, context: context)
            return
        }
        if video.codec == .jpeg, agentAdaptive {
            if reports == nil { startReports(context: context) }
            reports?.video(sequence: video.sequence, captureTime: video.captureTime, bytes: video.encodedLength, now: lastReceivedAt)
        }
        if video.flags.contains(.skipped) {
            // A JPEG slot the agent skipped for the link: the last picture again, counted as a skip.
            guard let picture = lastJPEGPicture ?? (configuration.decodeVideo ? nil : VideoFrame(
                width: Int(video.width), height: Int(video.height), bytesPerRow: 0, data: [], captureTime: video.captureTime))
            else { return }
            var received = ReceivedVideoFrame(
                sequence: video.sequence, slotTime: video.slotTime, captureTime: video.captureTime, isRepeat: false,
                noSignal: video.flags.contains(.noSignal), codec: StudioVideoCodec(video.codec), encodedByteCount: 0,
                frame: picture)
            received.frame.captureTime = video.captureTime
            received.frame.sourceSequence = UInt64(video.sourceSequence)
            received.receivedAt = lastReceivedAt
            received.decodedAt = self.now()
            received.isSkipped = true
            emit(.video(received))
            return
        }
        var frame: VideoFrame
        switch video.codec {
        case .h264:
            return  // handled above
        case _ where !configuration.decodeVideo:
            frame = VideoFrame(width: Int(video.width), height: Int(video.height), bytesPerRow: 0, data: [],
                               captureTime: video.captureTime, sourceSequence: UInt64(video.sourceSequence))
        case .bgra:
            frame = VideoFrame(width: Int(video.width), height: Int(video.height), bytesPerRow: Int(video.bytesPerRow),
                               data: video.data, captureTime: video.captureTime,
                               sourceSequence: UInt64(video.sourceSequence))
        case .jpeg:
            do {
                let decoder = try self.decoder ?? JPEGDecoder()
                self.decoder = decoder
                frame = try decoder.decode(video.data, captureTime: video.captureTime)
                frame.sourceSequence = UInt64(video.sourceSequence)
                lastJPEGPicture = frame
            } catch {
                logger.warning("undecodable JPEG frame \(video.sequence): \(error)")
                let wireError = WireError(code: .protocolViolation, reason: "video frame \(video.sequence) is not a decodable JPEG")
                write(connection.errorRecord(wireError), context: context)
                fail(.protocolError(code: wireError.code.rawValue, reason: wireError.reason), context: context)
                return
            }
        }
        var received = ReceivedVideoFrame(
            sequence: video.sequence, slotTime: video.slotTime, captureTime: video.captureTime,
            isRepeat: video.flags.contains(.repeat), noSignal: video.flags.contains(.noSignal),
            codec: StudioVideoCodec(video.codec), encodedByteCount: video.data.count, frame: frame)
        received.receivedAt = lastReceivedAt
        received.decodedAt = self.now()
        emit(.video(received))
    }

    /// An H.264 message: reported to the agent's rate control, decoded (or its placeholder resolved to the last
    /// picture), and a keyframe asked for when the chain broke.
    private func deliverH264(_ video: VideoMessage, context: ChannelHandlerContext) {
        let receivedAt = lastReceivedAt
        if agentAdaptive {
            if reports == nil { startReports(context: context) }
        }
        var gap = false
        if let last = lastH264Sequence, video.sequence &- last > 1, video.sequence &- last < 1 << 31 { gap = true }
        lastH264Sequence = video.sequence
        _ = reports?.video(
            sequence: video.sequence, captureTime: video.captureTime, bytes: video.encodedLength, now: receivedAt)
        var frame: VideoFrame
        var isKeyframe = video.flags.contains(.keyframe)
        var video = video
        if configuration.damageH264Every > 0, !video.data.isEmpty, !isKeyframe {
            h264Units += 1
            if h264Units % configuration.damageH264Every == 0 { Self.damage(&video.data) }
        }
        if configuration.decodeVideo {
            let receiver = h264 ?? H264Receiver(logger: logger)
            h264 = receiver
            switch receiver.receive(video, gap: gap) {
            case .picture(let picture, let keyframe):
                frame = picture
                isKeyframe = keyframe
            case .nothing:
                requestKeyframeIfDue(gap: gap, context: context)
                return
            }
            requestKeyframeIfDue(gap: gap, context: context)
        } else {
            frame = VideoFrame(width: Int(video.width), height: Int(video.height), bytesPerRow: 0, data: [],
                               captureTime: video.captureTime, sourceSequence: UInt64(video.sourceSequence))
        }
        var received = ReceivedVideoFrame(
            sequence: video.sequence, slotTime: video.slotTime, captureTime: video.captureTime,
            isRepeat: video.flags.contains(.repeat), noSignal: video.flags.contains(.noSignal),
            codec: .h264, encodedByteCount: video.data.count, frame: frame)
        received.receivedAt = receivedAt
        received.decodedAt = self.now()
        received.isKeyframe = isKeyframe
        received.isSkipped = video.flags.contains(.skipped)
        received.accessUnit = video.data
        emit(.video(received))
    }

    private func requestKeyframeIfDue(gap: Bool, context: ChannelHandlerContext) {
        guard agentMinor >= 1, let receiver = h264, receiver.shouldRequestKeyframe(now: self.now()) else { return }
        let reason: KeyframeReason = receiver.decoderErrors > reportedDecoderErrors ? .decoderError : (gap ? .gap : .start)
        reportedDecoderErrors = receiver.decoderErrors
        send(.keyframeRequest(reason), context: context)
        emit(.keyframeRequested(reason))
    }

    private var reportedDecoderErrors = 0

    /// A 1.0 agent refuses a 1.1 studio's hello for its two new bytes ("studioHello has 2 unexpected trailing bytes"):
    /// say what that means and what to do.
    static func explained(_ error: WireError) -> WireError {
        guard error.code == .protocolViolation, error.reason.contains("studioHello has"), error.reason.contains("trailing bytes") else {
            return error
        }
        return WireError(
            code: error.code,
            reason: error.reason + " (the agent speaks protocol 1.0, older than this studio's 1.1, and cannot read its hello: update camo-agent)")
    }
    /// The last JPEG picture, shown again for a skipped slot.
    private var lastJPEGPicture: VideoFrame?
    /// Non-keyframe access units seen (for ``StudioClientConfiguration/damageH264Every``).
    private var h264Units = 0

    /// Flips bytes in the second half of an access unit (slice data, past the headers) and cuts its last quarter.
    static func damage(_ data: inout [UInt8]) {
        guard data.count > 16 else { return }
        let start = data.count / 2
        for index in stride(from: start, to: data.count, by: 7) { data[index] ^= 0xA5 }
        data.removeLast(data.count / 4)
    }

    private func startReports(context: ChannelHandlerContext) {
        reports = ReceiverReportBuilder(now: self.now())
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        reportTimer = ClockTimer.repeating(clock: configuration.clock, every: Self.reportIntervalNanos, on: context.eventLoop) {
            loopBound.value.handler.sendReport(context: loopBound.value.context)
        }
    }

    private func sendReport(context: ChannelHandlerContext) {
        guard phase == .streaming, var builder = reports else { return }
        let report = builder.take(now: self.now())
        reports = builder
        send(.receiverReport(report), context: context)
    }

    // MARK: Outbound

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let command = event as? StudioCommand else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch command {
        case .send(let message):
            guard phase == .streaming else {
                promise?.fail(StudioClientError.sessionEnded(closeReason ?? .requested))
                return
            }
            send(message, context: context)
            promise?.succeed(())
        case .goodbye(let reason):
            switch phase {
            case .streaming, .awaitingHello:
                send(.goodbye(WireError(code: .shuttingDown, reason: reason)), context: context)
            case .handshaking, .closing, .closed:
                break
            }
            if closeReason == nil { closeReason = .requested }
            closePolitely(context: context)
            promise?.succeed(())
        }
    }

    private func tick(context: ChannelHandlerContext) {
        let now = self.now()
        switch phase {
        case .handshaking, .awaitingHello:
            if now - startedAt > configuration.handshakeTimeoutNanos {
                hello.fail(StudioClientError.handshakeTimeout)
                let error = WireError(code: .handshakeTimeout, reason: "the handshake did not complete in time")
                if connection.isEstablished { write(connection.errorRecord(error), context: context) }
                fail(.protocolError(code: error.code.rawValue, reason: error.reason), context: context)
            }
        case .streaming:
            if readingPaused {
                lastReceivedAt = now   // not reading is this side's choice, not the agent's silence
                stall?.notReading(at: now)
            }
            if let stall, stall.isStalled(at: now) {
                abortStalled(stall, context: context)
                return
            }
            if now - lastReceivedAt > configuration.keepaliveTimeoutNanos {
                let seconds = configuration.keepaliveTimeoutNanos / 1_000_000_000
                write(connection.errorRecord(WireError(code: .keepaliveTimeout, reason: "nothing received for \(seconds) s")),
                      context: context)
                fail(.keepaliveTimeout, context: context)
                return
            }
            if now >= nextPingAt {
                nextPingAt = now + configuration.pingIntervalNanos
                pingSequence &+= 1
                send(.ping(Ping(sequence: pingSequence, sentAt: now)), context: context)
            }
        case .closing, .closed:
            break
        }
    }

    /// Nothing arrived while streaming for the stall timeout: the link is dead, so the session ends at once
    /// (an error record is still written, in case the agent can read it) instead of waiting for the agent to close.
    private func abortStalled(_ stall: MediaStallDetector, context: ChannelHandlerContext) {
        let milliseconds = stall.timeoutNanos / 1_000_000
        logger.notice("nothing arrived from the agent for \(milliseconds) ms while streaming; the link is dead")
        write(connection.errorRecord(WireError(code: .keepaliveTimeout, reason: "nothing received for \(milliseconds) ms")),
              context: context)
        if closeReason == nil {
            closeReason = .connectionLost("nothing arrived from the agent for \(milliseconds) ms while streaming (a dead link)")
        }
        phase = .closing
        context.close(promise: nil)
    }

    private func send(_ message: AppMessage, context: ChannelHandlerContext) {
        do {
            write(try connection.seal(message), context: context)
        } catch {
            fail(.protocolError(code: error.code.rawValue, reason: error.reason), context: context)
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard !bytes.isEmpty else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func violation(_ reason: String, context: ChannelHandlerContext) {
        let error = WireError(code: .protocolViolation, reason: reason)
        write(connection.errorRecord(error), context: context)
        fail(.protocolError(code: error.code.rawValue, reason: reason), context: context)
    }

    /// Records why the session ends and closes the channel politely; `channelInactive` delivers `.closed`.
    private func fail(_ reason: StudioCloseReason, context: ChannelHandlerContext) {
        if closeReason == nil { closeReason = reason }
        closePolitely(context: context)
    }

    /// How long a polite close waits for the agent to close its side.
    static let lingerNanos: UInt64 = 2_000_000_000

    /// Closes the output once what is queued (goodbye, error) is written, discards what still arrives,
    /// and lets the agent close its side; closes fully after ``lingerNanos`` if it does not. Closing
    /// at once with unread data would make the kernel send a reset, which can destroy the goodbye
    /// before the agent reads it.
    private func closePolitely(context: ChannelHandlerContext) {
        guard phase != .closing, phase != .closed else { return }
        guard connection.isEstablished || phase == .streaming || phase == .awaitingHello else {
            phase = .closing
            context.close(promise: nil)
            return
        }
        phase = .closing
        context.close(mode: .output, promise: nil)
        readingPaused = false
        if pendingRead {
            pendingRead = false
            context.read()
        }
        let channel = context.channel
        _ = ClockTimer.once(clock: configuration.clock, after: Self.lingerNanos, on: context.eventLoop) {
            channel.close(promise: nil)   // a no-op when the agent has closed already
        }
    }
}

extension VideoCodecRequest {
    init(_ preference: StudioCodecPreference) {
        switch preference {
        case .agentDecides: self = .agentDecides
        case .bgra: self = .bgra
        case .jpeg: self = .jpeg
        case .h264: self = .h264
        }
    }
}

extension StudioVideoCodec {
    init(_ codec: VideoCodec) {
        switch codec {
        case .bgra: self = .bgra
        case .jpeg: self = .jpeg
        case .h264: self = .h264
        }
    }
}
