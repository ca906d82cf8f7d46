import CamoMedia
@testable import CamoProducerKit
import CamoStudioKit
import CamoTestSupport
import CamoWire
import Foundation
import Testing

/// Session rules Docs/PROTOCOL.md decides that a studio could observe: whose id counts, and what a pause does
/// to the video sequence and the statistics.
@Suite("Sessions, as the spec says", .timeLimit(.minutes(1)))
struct SessionSpecTests {
    static func raw(_ pattern: HandshakePattern, preambleId: String, key: NoiseKeyPair = .generate(), agentKey: [UInt8]? = nil) -> WireConnection {
        .initiator(preamble: Preamble(pattern: pattern, initiatorId: preambleId), localStatic: key, remoteStatic: agentKey, psk: nil)
    }

    static func sawAgentHello(_ events: [WireConnection.Event]) -> Bool {
        events.contains { if case .message(.agentHello) = $0 { true } else { false } }
    }

    /// PROTOCOL.md 9: in XX nothing proves an id, so the hello's need not equal the preamble's (which may be
    /// empty); the agent knows the session by the hello's id.
    @Test(arguments: ["preamble-name", ""])
    func anXXHelloMayNameAnotherIdThanThePreamble(preambleId: String) async throws {
        let controller = ControllerTests.makeController(clock: ManualClock())
        try await controller.start()
        let port = try #require(controller.port)
        // The agent lists the session before it sends its hello; pings keep arriving until the test stops.
        let talk = try await RawStudio.converse(
            port: port, wire: Self.raw(.xx, preambleId: preambleId),
            until: { Self.sawAgentHello($0) && controller.connections.map(\.studioId) == ["hello-name"] },
            respond: RawStudio.sendHello(RawStudio.hello(id: "hello-name")))
        #expect(!talk.closed, "the session was accepted and known by its hello's id: \(talk.events)")
        #expect(talk.agentHello != nil)
        #expect(talk.peerError == nil)
        await controller.stop()
    }

    /// PAIRING.md 4: in KK the preamble's id is the paired one the keys proved; a hello naming another id is a
    /// broken studio, refused with `protocolViolation`.
    @Test func aKKHelloNamingAnotherIdThanThePreambleIsAProtocolViolation() async throws {
        let controller = ControllerTests.makeController(allowUnpaired: false, clock: ManualClock())
        try await controller.start()
        let port = try #require(controller.port)
        let key = NoiseKeyPair.generate()
        try controller.pairedDeviceStore.add(PairedStudio(id: "kk-studio", name: "KK", publicKey: key.publicKey, pairedAt: Date()))
        let talk = try await RawStudio.converse(
            port: port,
            wire: Self.raw(.kk, preambleId: "kk-studio", key: key, agentKey: controller.configuration.identity.keyPair.publicKey),
            respond: RawStudio.sendHello(RawStudio.hello(id: "someone-else")))
        #expect(talk.closed)
        #expect(talk.peerError?.code == .protocolViolation, "\(talk.events)")
        #expect(talk.agentHello == nil)
        await controller.stop()
    }

    /// PAIRING.md 4 and 5: a KK session moves `lastSeen` on from the pairing time (which it starts at).
    @Test func aKKSessionMovesLastSeenOnFromThePairing() async throws {
        let controller = ControllerTests.makeController(allowUnpaired: false, clock: ManualClock())
        try await controller.start()
        let studio = StudioIdentity.generated(id: "kk-seen")
        let pairedAt = Date().addingTimeInterval(-3_600)
        try controller.pairedDeviceStore.add(PairedStudio(id: studio.id, name: "KK", publicKey: studio.publicKey, pairedAt: pairedAt))
        var configuration = StudioClientConfiguration(identity: studio, studioName: "KK")
        configuration.handshake = .paired(agentKey: controller.configuration.identity.keyPair.publicKey)
        let session = try await StudioClient.connect(host: "127.0.0.1", port: try #require(controller.port), configuration: configuration)
        // "Last seen" is written off the event loop (each write syncs the disk), so it lands a little later.
        let deadline = Date().addingTimeInterval(5)
        while controller.pairedDevices.first?.lastSeen ?? pairedAt <= pairedAt, Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect((controller.pairedDevices.first?.lastSeen ?? pairedAt) > pairedAt.addingTimeInterval(3_000))
        await session.close()
        await controller.stop()
    }

    /// PROTOCOL.md 7 and 8: the pacer's slots go on during a pause, so on resume `video.sequence` jumps by the
    /// paused slots; those slots are not counted in `framesDropped`, which counts only frames a slow studio
    /// missed.
    @Test func aPauseMakesTheVideoSequenceJumpWithoutCountingDrops() async throws {
        let clock = ManualClock(now: 1_000_000_000)
        let controller = ControllerTests.makeController(clock: clock)
        try await controller.start()
        let port = try #require(controller.port)
        let size = VideoSize(width: 64, height: 36)
        var configuration = StudioClientConfiguration(identity: .generated(), studioName: "pauser")
        configuration.preferredWidth = size.width
        configuration.preferredHeight = size.height
        let studio = try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration)
        try await ControllerTests.waitForState(controller, "active") { if case .active = $0 { true } else { false } }

        // The pacer and the studio's keepalive sleep on the clock.
        try controller.enqueueVideo(TestPattern.frame(number: 1, size: size, captureTime: clock.now.nanoseconds))
        for _ in 0..<3 { await ControllerTests.advanceOneSlot(clock, sleepers: 2) }
        try await studio.pause()
        try await ControllerTests.waitForState(controller, "paused by the studio") { _ in controller.connections.first?.pausedByStudio == true }
        let pausedSlots = 10
        for _ in 0..<pausedSlots { await ControllerTests.advanceOneSlot(clock, sleepers: 2) }
        try await studio.resume()
        try await ControllerTests.waitForState(controller, "resumed") { _ in controller.connections.first?.pausedByStudio == false }
        try controller.enqueueVideo(TestPattern.frame(number: 2, size: size, captureTime: clock.now.nanoseconds))
        for _ in 0..<3 { await ControllerTests.advanceOneSlot(clock, sleepers: 2) }

        var sequences: [UInt32] = []
        for await event in studio.events {
            guard case .video(let video) = event else { continue }
            sequences.append(video.sequence)
            if video.frame.sourceSequence == 2 { break }
        }
        let steps = zip(sequences, sequences.dropFirst()).map { $1 &- $0 }
        #expect(steps.filter { $0 != 1 }.count == 1, "one jump, at the pause: \(sequences)")
        #expect(steps.contains { $0 > UInt32(pausedSlots) }, "the jump spans the paused slots: \(sequences)")
        #expect(controller.connections.first?.statistics.framesDropped == 0, "a pause drops nothing")
        await studio.close()
        await controller.stop()
    }
}
