import CamoClockTimer
import CamoWire
import Logging
import NIOCore

/// One connection to the pairing listener: `Noise_XXpsk3` with the QR code's secret as the PSK, the studio's
/// hello (its id and name, encrypted), then the agent's hello and a goodbye. Anything else is refused.
///
/// Each connection has its own deadline, and the window serves several at once, so a peer that stalls or
/// sends garbage costs one slot for a few seconds and never blocks the real studio. A wrong secret fails the
/// handshake (the third message does not authenticate) and leaves the window open. The deadlines run on the
/// controller's clock (``ClockTimer``).
final class PairingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase { case awaitingPreamble, handshaking, awaitingHello, done }

    private let controller: CamoController
    private let attempt: Int
    private let address: String
    private var logger: Logger
    private var wire = WireConnection.responder()
    private var phase = Phase.awaitingPreamble
    private var psk: [UInt8] = []
    private var admitted = false
    private var paired = false
    /// The whole exchange's deadline (``ControllerConfiguration/handshakeDeadlineSeconds``).
    private var deadline: ClockTimer?
    /// The preamble's deadline: at most a second.
    private var firstMessageDeadline: ClockTimer?
    /// Closes the channel if the last write is not flushed in time (``closeAfterFlush()``).
    private var closeDeadline: ClockTimer?
    private var context: ChannelHandlerContext?

    /// - Parameter address: the peer's IP address (the window caps connections per address).
    init(controller: CamoController, attempt: Int, peer: String, address: String, logger: Logger) {
        self.controller = controller
        self.attempt = attempt
        self.address = address
        var logger = logger
        logger[metadataKey: "pairing"] = "\(attempt)"
        logger[metadataKey: "peer"] = "\(peer)"
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        switch controller.pairingConnectionArrived(attempt: attempt, from: address) {
        case .failure(let refusal):
            logger.notice("Refused a pairing connection", metadata: ["reason": "\(refusal.reason)"])
            fail(refusal)
            return
        case .success(let psk):
            self.psk = psk
            admitted = true
        }
        let seconds = controller.configuration.handshakeDeadlineSeconds
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = ClockTimer.once(clock: controller.clock, after: ClockTimer.nanoseconds(seconds), on: context.eventLoop) {
            bound.value.deadlinePassed(seconds)
        }
        // A peer that connects and says nothing gives its slot back quickly.
        let first = min(seconds, 1)
        firstMessageDeadline = ClockTimer.once(clock: controller.clock, after: ClockTimer.nanoseconds(first), on: context.eventLoop) {
            bound.value.deadlinePassed(first)
        }
        context.fireChannelActive()
    }

    private func deadlinePassed(_ seconds: Double) {
        guard phase != .done else { return }
        logger.notice("Closing a pairing connection that did not finish in time")
        fail(WireError(code: .handshakeTimeout, reason: "The pairing handshake did not finish within \(seconds) seconds."))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard phase != .done else { return }
        var buffer = unwrapInboundIn(data)
        // Safe: readBytes(length: readableBytes) always succeeds.
        let bytes = buffer.readBytes(length: buffer.readableBytes)!
        do {
            let (send, events) = try wire.receive(bytes)
            if !send.isEmpty { writeRaw(send) }
            for event in events where phase != .done { try handle(event) }
        } catch {
            if phase == .handshaking {
                logger.notice("A pairing handshake failed (a wrong secret, or not a studio)", metadata: ["error": "\(error)"])
            } else {
                logger.notice("Closing a pairing connection that broke the protocol", metadata: ["error": "\(error)"])
            }
            fail(error)
        }
    }

    private func handle(_ event: WireConnection.Event) throws(WireError) {
        switch event {
        case .preamble(let preamble):
            guard preamble.pattern == .xxpsk3 else {
                throw WireError(
                    code: .unsupportedPattern,
                    reason: "This is the agent's pairing port; it speaks only XXpsk3. Sessions go to the port published as _camo._tcp.")
            }
            let (reply, events) = try wire.acceptReturningEvents(
                localStatic: controller.pairingIdentity.keyPair, remoteStatic: nil, psk: psk)
            if !reply.isEmpty { writeRaw(reply) }
            firstMessageDeadline?.cancel()
            phase = .handshaking
            for event in events where phase != .done { try handle(event) }
        case .handshakeComplete:
            phase = .awaitingHello
        case .message(.studioHello(let hello)):
            guard phase == .awaitingHello else { throw WireError(code: .protocolViolation, reason: "A studio hello arrived before the handshake completed.") }
            guard let key = wire.remoteStaticKey else { throw WireError(code: .internalError, reason: "The handshake revealed no static key.") }
            if let preambleId = wire.preamble?.initiatorId, !preambleId.isEmpty, preambleId != hello.studioId {
                // PAIRING.md 3: not the studio this code serves, like a hello naming another id than the code's.
                throw WireError(
                    code: .notPaired,
                    reason: "The studio's hello names \(hello.studioId), but its preamble named \(preambleId); a pairing code serves one studio id.")
            }
            switch controller.completePairing(attempt: attempt, studioId: hello.studioId, studioName: hello.studioName, publicKey: key) {
            case .failure(let refusal):
                logger.notice("Refused a studio that knew the secret", metadata: ["studioId": "\(hello.studioId)", "reason": "\(refusal.reason)"])
                throw refusal
            case .success:
                paired = true
                phase = .done
                deadline?.cancel()
                let identity = controller.pairingIdentity
                let description = controller.configuration.description
                let agentHello = AppMessage.agentHello(AgentHello(
                    versionMajor: WireLimits.versionMajor, versionMinor: WireLimits.versionMinor,
                    agentId: identity.id, agentName: identity.name, model: description.model,
                    softwareVersion: description.softwareVersion, camera: description.camera,
                    microphone: description.microphone, capabilities: [.bgra, .jpeg, .pause, .audio, .keepalive],
                    width: 1280, height: 720, codec: .jpeg, audioSamplesRequired: hello.audioSamplesRequired))
                var out = try wire.seal(agentHello)
                out += try wire.seal(.goodbye(WireError(code: .shuttingDown, reason: "Paired; connect with KK from now on.")))
                writeRaw(out)
                closeAfterFlush()
            }
        case .message(.goodbye), .message(.error), .peerError:
            phase = .done
            context?.close(promise: nil)
        case .message(let other):
            throw WireError(code: .protocolViolation, reason: "A studio may not send \(other.kindName) on the pairing port.")
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        firstMessageDeadline?.cancel()
        closeDeadline?.cancel()
        phase = .done
        if admitted {
            admitted = false
            controller.pairingConnectionEnded(attempt: attempt, from: address, failed: !paired)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func writeRaw(_ bytes: [UInt8]) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    private func fail(_ error: Error) {
        let wireError = (error as? WireError) ?? WireError(code: .internalError, reason: "\(error)")
        phase = .done
        deadline?.cancel()
        firstMessageDeadline?.cancel()
        writeRaw(wire.errorRecord(wireError))
        closeAfterFlush()
    }

    /// Closes once the last write has gone out, or after a second of the controller's clock if the peer does not
    /// read it.
    private func closeAfterFlush() {
        guard let context else { return }
        let channel = context.channel
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0)), promise: promise)
        promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
        // Once inactive, nothing would cancel the timer; the channel is closed already.
        guard closeDeadline == nil, channel.isActive else { return }
        closeDeadline = ClockTimer.once(clock: controller.clock, after: 1_000_000_000, on: context.eventLoop) {
            channel.close(promise: nil)
        }
    }
}
