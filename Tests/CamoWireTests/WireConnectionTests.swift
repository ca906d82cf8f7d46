import CamoTestSupport
import Testing

@testable import CamoWire

@Suite("WireConnection")
struct WireConnectionTests {
    static func established(_ pattern: HandshakePattern) throws -> Pair {
        switch pattern {
        case .xx: try Pair.handshake(pattern: .xx)
        case .kk: try Pair.handshake(pattern: .kk, studioRemote: TestKeys.agent.publicKey, agentRemote: TestKeys.studio.publicKey)
        case .xxpsk3: try Pair.handshake(pattern: .xxpsk3, studioPSK: TestKeys.psk, agentPSK: TestKeys.psk)
        }
    }

    @Test(arguments: HandshakePattern.allCases)
    func handshakeThenMessagesBothWays(_ pattern: HandshakePattern) throws {
        var pair = try Self.established(pattern)
        #expect(pair.studio.isEstablished && pair.agent.isEstablished)
        guard case .handshakeComplete(let agentKey, let studioHash) = try #require(pair.studioEvents.first),
            case .handshakeComplete(let studioKey, let agentHash) = try #require(pair.agentEvents.first)
        else {
            Issue.record("no handshakeComplete")
            return
        }
        #expect(agentKey == TestKeys.agent.publicKey)
        #expect(studioKey == TestKeys.studio.publicKey)
        #expect(studioHash == agentHash && studioHash.count == 32)

        // Hellos both ways, then a ping/pong.
        let (send1, events1) = try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello)))
        #expect(send1.isEmpty)
        #expect(events1 == [.message(.studioHello(studioHello))])
        let (_, events2) = try pair.studio.receive(try pair.agent.seal(.agentHello(agentHello)))
        #expect(events2 == [.message(.agentHello(agentHello))])
        let ping = AppMessage.ping(Ping(sequence: 1, sentAt: 5))
        #expect(try pair.agent.receive(try pair.studio.seal(ping)).events == [.message(ping)])
        let pong = AppMessage.pong(Pong(sequence: 1, echoedSentAt: 5, receivedAt: 6))
        #expect(try pair.studio.receive(try pair.agent.seal(pong)).events == [.message(pong)])
    }

    @Test(arguments: HandshakePattern.allCases)
    func bigVideoWithAudioInterleaved(_ pattern: HandshakePattern) throws {
        var pair = try Self.established(pattern)
        _ = try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello)))
        var wire = try pair.agent.seal(.agentHello(agentHello))

        // A 4 MB BGRA frame (1024x1024), fragmented, with an audio packet after every fragment.
        var pixels = [UInt8](repeating: 0, count: 1024 * 1024 * 4)
        var random = SeededGenerator(seed: 42)
        for i in stride(from: 0, to: pixels.count, by: 4096) { pixels[i] = UInt8(truncatingIfNeeded: random.next()) }
        let video = VideoMessage(
            sequence: 1, codec: .bgra, width: 1024, height: 1024, bytesPerRow: 4096, slotTime: 33_333_333,
            captureTime: 30_000_000, data: pixels)
        var fragmenter = MessageFragmenter(channel: .video, header: video.encodeHeader(), body: video.data[...])
        var audioSent: [AppMessage] = []
        var fragments = 0
        while !fragmenter.isFinished {
            try fragmenter.sealNext(using: &pair.agent, into: &wire)
            fragments += 1
            let audio = AppMessage.audio(AudioMessage(
                sequence: UInt32(audioSent.count), firstSampleTime: UInt64(audioSent.count) * 10_000_000,
                samples: [Float](repeating: Float(audioSent.count), count: 960)))
            wire += try pair.agent.seal(audio)
            audioSent.append(audio)
        }
        #expect(fragments == (VideoMessage.headerLength + pixels.count + 65_516) / 65_517)

        // Feed in odd-sized chunks.
        var events: [WireConnection.Event] = []
        var offset = 0
        let chunk = 50_001
        while offset < wire.count {
            let end = min(offset + chunk, wire.count)
            events += try pair.studio.receive(wire[offset..<end]).events
            offset = end
        }
        #expect(events.first == .message(.agentHello(agentHello)))
        let messages = events.dropFirst().compactMap { event -> AppMessage? in
            if case .message(let message) = event { return message }
            return nil
        }
        #expect(messages.count == audioSent.count + 1)
        // The video completes after the last fragment, i.e. just before the last audio packet.
        #expect(messages[messages.count - 2] == .video(video))
        let audioReceived = messages.filter { $0.channel == .audio }
        #expect(audioReceived == audioSent)
    }

    @Test func wrongPSKFails() throws {
        let preamble = Preamble(pattern: .xxpsk3, initiatorId: "studio-1")
        var studio = WireConnection.initiator(
            preamble: preamble, localStatic: TestKeys.studio, remoteStatic: nil, psk: TestKeys.psk)
        var agent = WireConnection.responder()
        _ = try agent.receive(try studio.start())
        let message2 = try agent.accept(localStatic: TestKeys.agent, remoteStatic: nil, psk: [UInt8](repeating: 1, count: 32))
        let (message3, studioEvents) = try studio.receive(message2)
        #expect(studioEvents.count == 1)  // the studio cannot tell yet: psk3 is mixed into its own last message
        let error = try #require(throws: WireError.self) { try agent.receive(message3) }
        #expect(error.code == .handshakeFailed)
        // The agent is dead now and says so with the same error; it tells the studio with a 0x7F record.
        #expect(throws: error) { try agent.receive([0]) }
        let refusal = agent.errorRecord(error)
        #expect(refusal[2] == 0x7F)
        let (_, events) = try studio.receive(refusal)
        #expect(events == [.peerError(error, authenticated: false)])
        #expect(studio.isClosed)
    }

    @Test func firstTransportRecordThatFailsIsHandshakeFailed() throws {
        let preamble = Preamble(pattern: .xxpsk3, initiatorId: "studio-1")
        var studio = WireConnection.initiator(
            preamble: preamble, localStatic: TestKeys.studio, remoteStatic: nil, psk: TestKeys.psk)
        var agent = WireConnection.responder()
        _ = try agent.receive(try studio.start())
        _ = try studio.receive(try agent.accept(localStatic: TestKeys.agent, remoteStatic: nil, psk: TestKeys.psk))
        let error = try #require(throws: WireError.self) { try studio.receive([0, 20] + [UInt8](repeating: 9, count: 20)) }
        #expect(error.code == .handshakeFailed)
    }

    @Test func rejectIsAnUnauthenticatedError() throws {
        let preamble = Preamble(pattern: .xx, initiatorId: "")
        var studio = WireConnection.initiator(preamble: preamble, localStatic: TestKeys.studio, remoteStatic: nil, psk: nil)
        var agent = WireConnection.responder()
        let (_, events) = try agent.receive(try studio.start())
        #expect(events == [.preamble(preamble)])
        let refusal = WireError(.unpairedNotAllowed, "This agent accepts unpaired (XX) sessions only on loopback with --allow-unpaired.")
        let bytes = agent.reject(refusal)
        #expect(Array(bytes.prefix(5)) == [0x00, UInt8(bytes.count - 2), 0x7F, 0x00, 13])
        #expect(agent.isClosed)
        #expect(agent.reject(refusal).isEmpty)  // only once
        #expect(try studio.receive(bytes).events == [.peerError(refusal, authenticated: false)])
        #expect(studio.isClosed && !studio.isEstablished)
    }

    @Test func responderNeverAcceptsAnErrorRecord() throws {
        var agent = WireConnection.responder()
        _ = try agent.receive(Preamble(pattern: .xx, initiatorId: "").encoded())
        _ = try agent.accept(localStatic: TestKeys.agent, remoteStatic: nil, psk: nil)
        let error = try #require(throws: WireError.self) { try agent.receive([0, 5, 0x7F, 0, 1, 0, 0]) }
        #expect(error.code == .protocolViolation)
    }

    @Test func authenticatedErrorAfterHandshake() throws {
        var pair = try Self.established(.kk)
        _ = try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello)))
        let error = WireError(.notPaired, "The studio was removed from the paired devices.")
        let record = pair.agent.errorRecord(error)
        #expect(try pair.studio.receive(record).events == [.peerError(error, authenticated: true)])
        #expect(pair.studio.isClosed)
        #expect(throws: WireError.self) { try pair.agent.seal(.ping(Ping(sequence: 0, sentAt: 0))) }
    }

    struct Tamper: Sendable, CustomTestStringConvertible {
        let name: String
        let sent: HandshakePattern
        let mutate: @Sendable ([UInt8]) -> [UInt8]
        var testDescription: String { name }
    }

    static let tampers: [Tamper] = [
        Tamper(name: "KK downgraded to XX", sent: .kk) { var b = $0; b[6] = 1; return b },
        Tamper(name: "XX upgraded to KK", sent: .xx) { var b = $0; b[6] = 3; return b },
        Tamper(name: "KK id byte changed", sent: .kk) { var b = $0; b[9] ^= 0x01; return b },
        Tamper(name: "XX id byte changed", sent: .xx) { var b = $0; b[9] ^= 0x01; return b },
        Tamper(name: "XXpsk3 minor version changed", sent: .xxpsk3) { var b = $0; b[5] ^= 1; return b },
        Tamper(name: "XX changed to XXpsk3", sent: .xx) { var b = $0; b[6] = 2; return b },
    ]

    /// The agent runs whatever the (tampered) preamble says, with the keys it would pick for it;
    /// the handshake must fail with handshakeFailed on one side or the other.
    @Test(arguments: tampers)
    func tamperedPreambleFailsTheHandshake(_ tamper: Tamper) throws {
        let preamble = Preamble(pattern: tamper.sent, initiatorId: "studio-1")
        var studio = WireConnection.initiator(
            preamble: preamble, localStatic: TestKeys.studio,
            remoteStatic: tamper.sent == .kk ? TestKeys.agent.publicKey : nil,
            psk: tamper.sent == .xxpsk3 ? TestKeys.psk : nil)
        var agent = WireConnection.responder()
        let sent = try studio.start()
        let (_, events) = try agent.receive(tamper.mutate(sent))
        guard case .preamble(let seen) = try #require(events.first) else {
            Issue.record("no preamble event")
            return
        }
        var failures: [WireError] = []
        do {
            var toStudio = try agent.accept(
                localStatic: TestKeys.agent, remoteStatic: seen.pattern == .kk ? TestKeys.studio.publicKey : nil,
                psk: seen.pattern == .xxpsk3 ? TestKeys.psk : nil)
            toStudio += try agent.receive([]).send
            for _ in 0..<3 {
                let toAgent = try studio.receive(toStudio).send
                toStudio = try agent.receive(toAgent).send
            }
        } catch {
            failures.append(error)
        }
        #expect(failures.map(\.code) == [.handshakeFailed], "\(failures)")
        #expect(!(agent.isEstablished && studio.isEstablished))
    }

    @Test func limitsAndFlags() throws {
        // A message over maxMessage is refused while it is being reassembled.
        var pair = try Self.established(.xx)
        pair.studio.maxMessage = 100_000
        var wire = try pair.agent.seal(.agentHello(agentHello))
        var fragmenter = MessageFragmenter(
            channel: .video, header: [0x10], body: [UInt8](repeating: 0, count: 200_000)[...])
        while !fragmenter.isFinished { try fragmenter.sealNext(using: &pair.agent, into: &wire) }
        let error = try #require(throws: WireError.self) { try pair.studio.receive(wire) }
        #expect(error.code == .limitExceeded)
        #expect(throws: error) { try pair.studio.receive([]) }

        // Unknown flag bits and channels are protocol violations.
        for (channel, flags) in [(UInt8(0), UInt8(2)), (UInt8(3), UInt8(1))] {
            var p = try Self.established(.xx)
            _ = try p.agent.receive(try p.studio.seal(.studioHello(studioHello)))
            var out: [UInt8] = []
            try Self.sealRaw(&p.studio, plaintext: [channel, flags, 0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], into: &out)
            #expect(throws: WireError.self) { try p.agent.receive(out) }
            #expect(p.agent.failure?.code == .protocolViolation)
        }
    }

    @Test func orderingRules() throws {
        // The first message must be the hello.
        var pair = try Self.established(.xx)
        #expect(throws: WireError.self) { try pair.agent.receive(try pair.studio.seal(.ping(Ping(sequence: 0, sentAt: 0)))) }
        // A message on the wrong channel, the wrong direction, or a second hello.
        pair = try Self.established(.xx)
        _ = try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello)))
        var out: [UInt8] = []
        try pair.studio.sealFragment(channel: .audio, final: true, payload: AppMessage.ping(Ping(sequence: 0, sentAt: 0)).encoded(), into: &out)
        #expect(throws: WireError.self) { try pair.agent.receive(out) }
        pair = try Self.established(.xx)
        _ = try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello)))
        #expect(throws: WireError.self) { try pair.agent.receive(try pair.studio.seal(.streamState(.streaming))) }
        pair = try Self.established(.xx)
        _ = try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello)))
        #expect(throws: WireError.self) { try pair.agent.receive(try pair.studio.seal(.studioHello(studioHello))) }
        // Zero-length records are violations.
        pair = try Self.established(.xx)
        #expect(throws: WireError(.protocolViolation, "a record has length 0")) { try pair.agent.receive([0, 0]) }
    }

    @Test func misuseThrowsInsteadOfCrashing() throws {
        var agent = WireConnection.responder()
        #expect(throws: WireError.self) { try agent.start() }
        var studio = WireConnection.initiator(
            preamble: Preamble(pattern: .kk, initiatorId: "s"), localStatic: TestKeys.studio, remoteStatic: nil, psk: nil)
        #expect(throws: WireError.self) { try studio.start() }  // KK without the agent's key
        var early = WireConnection.initiator(
            preamble: Preamble(pattern: .xx, initiatorId: ""), localStatic: TestKeys.studio, remoteStatic: nil, psk: nil)
        _ = try early.start()
        #expect(throws: WireError.self) { try early.seal(.ping(Ping(sequence: 0, sentAt: 0))) }
        var pair = try Self.established(.xx)
        var out: [UInt8] = []
        #expect(throws: WireError.self) {
            try pair.studio.sealFragment(channel: .control, final: true, payload: [UInt8](repeating: 0, count: 65_518), into: &out)
        }
    }

    /// Seals an arbitrary fragment plaintext (valid or not) as one transport record.
    static func sealRaw(_ connection: inout WireConnection, plaintext: [UInt8], into out: inout [UInt8]) throws {
        try connection.sealRawPlaintextForTesting(plaintext, into: &out)
    }
}
