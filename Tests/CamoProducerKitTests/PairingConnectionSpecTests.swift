import CamoMedia
@testable import CamoProducerKit
import CamoStudioKit
import CamoTestSupport
import CamoWire
import Foundation
import Testing

/// The pairing connection as Docs/PAIRING.md (section 3) words it, byte for byte where a studio could tell.
@Suite("Pairing connection, as the spec says", .timeLimit(.minutes(1)))
struct PairingConnectionSpecTests {
    typealias Setup = ControllerPairingTests.Setup
    static let second: UInt64 = 1_000_000_000

    /// A raw XXpsk3 studio with the payload's secret and `preambleId` in its preamble.
    static func wire(_ s: Setup, preambleId: String) -> WireConnection {
        .initiator(
            preamble: Preamble(pattern: .xxpsk3, initiatorId: preambleId), localStatic: NoiseKeyPair.generate(),
            remoteStatic: nil, psk: s.payload.secret)
    }

    /// PAIRING.md 3: a hello whose id is not the preamble's is refused with `notPaired`, and the window stays
    /// open, whichever of the two names the studio the code was made for.
    @Test(arguments: [true, false])
    func aHelloNamingAnotherIdThanThePreambleIsNotPaired(preambleIsThePayloads: Bool) async throws {
        let s = try await ControllerPairingTests.setup()
        let box = ControllerPairingTests.open(s)
        let port = try await ControllerPairingTests.pairingPort(s.controller)
        let (preambleId, helloId) = preambleIsThePayloads ? (s.studio.id, "someone-else") : ("someone-else", s.studio.id)
        let talk = try await RawStudio.converse(
            port: port, wire: Self.wire(s, preambleId: preambleId), respond: RawStudio.sendHello(RawStudio.hello(id: helloId)))
        #expect(talk.closed)
        #expect(talk.peerError?.code == .notPaired, "\(talk.events)")
        #expect(talk.agentHello == nil)
        #expect(box.current == nil, "the window stays open")
        #expect(s.controller.pairedDevices.isEmpty)
        await s.controller.stop()
    }

    /// PAIRING.md 3: after a successful pairing the agent sends its hello, then `goodbye` with `shuttingDown`
    /// (the pairing connection's work is done) and the sentence that says to use KK.
    @Test func aPairingEndsWithAgentHelloThenGoodbyeShuttingDown() async throws {
        let s = try await ControllerPairingTests.setup()
        let box = ControllerPairingTests.open(s)
        let port = try await ControllerPairingTests.pairingPort(s.controller)
        let talk = try await RawStudio.converse(
            port: port, wire: Self.wire(s, preambleId: s.studio.id), respond: RawStudio.sendHello(RawStudio.hello(id: s.studio.id)))
        #expect(talk.closed)
        #expect(talk.agentHello?.agentId == "agent-test")
        #expect(talk.goodbye == WireError(code: .shuttingDown, reason: "Paired; connect with KK from now on."), "\(talk.events)")
        #expect(talk.peerError == nil)
        #expect((try? await ControllerPairingTests.outcome(box).get())?.id == s.studio.id)
        await s.controller.stop()
    }

    /// PAIRING.md 2 and 3: a pairing connection that stalls gets `handshakeTimeout`: a 0x7F record when it
    /// sent nothing (after 1 s), an authenticated `error` when it finished the handshake but sent no hello
    /// (at the handshake deadline). Neither ends the window. Both deadlines are the controller's clock's: while
    /// the manual clock stands still, the stalled peers stay connected.
    @Test func aStalledPairingConnectionGetsHandshakeTimeout() async throws {
        let s = try await ControllerPairingTests.setup { $0.handshakeDeadlineSeconds = 20 }
        let box = ControllerPairingTests.open(s)
        let port = try await ControllerPairingTests.pairingPort(s.controller)
        await s.clock.waitForSleepers(2)  // the pacer and the window
        let silentClosed = Latch()
        let silentPeer = Task {
            defer { silentClosed.set() }
            return try await RawPeer.exchange(port: port, send: [], waitSeconds: 10)
        }
        await s.clock.waitForSleepers(4)  // and the connection's two deadlines
        #expect(!(await silentClosed.wait(seconds: 0.2)), "the clock stands still: the silent peer stays connected")
        s.clock.advance(by: Self.second)
        let silent = try await silentPeer.value
        #expect(silent.closed)
        #expect(silent.unauthenticatedError?.code == WireErrorCode.handshakeTimeout.rawValue)

        // The clock reads 1 s when the mute studio connects: its deadline is 21 s (the window stays open until 30 s).
        let handshook = Latch()
        let muteClosed = Latch()
        let wire = Self.wire(s, preambleId: s.studio.id)
        let muteStudio = Task {
            defer { muteClosed.set() }
            return try await RawStudio.converse(port: port, wire: wire) { _, event in
                if case .handshakeComplete = event { handshook.set() }
                return []
            }
        }
        #expect(await handshook.wait())
        // Also gives the agent time to take the studio's last handshake message, so its error is authenticated.
        #expect(!(await muteClosed.wait(seconds: 0.2)), "the clock stands still: the mute studio stays connected")
        s.clock.advance(to: 21 * Self.second - 1)
        #expect(!(await muteClosed.wait(seconds: 0.1)), "one nanosecond before the deadline")
        s.clock.advance(to: 21 * Self.second)
        #expect(await muteClosed.wait(seconds: 5), "closed right after the clock passed the deadline")
        let mute = try await muteStudio.value
        #expect(mute.closed)
        #expect(mute.events.first.map { if case .handshakeComplete = $0 { true } else { false } } == true)
        guard case .peerError(let error, let authenticated)? = mute.events.last else {
            Issue.record("no error after the handshake: \(mute.events)")
            return
        }
        #expect(error.code == .handshakeTimeout)
        #expect(authenticated)
        #expect(box.current == nil, "the window stays open")
        await s.controller.stop()
    }

    /// PAIRING.md 5: pairing is contact, so a studio's record has `lastSeen` (= `pairedAt`) from the start,
    /// in memory and in `paired.json`, as the spec's example shows.
    @Test func aNewPairingHasLastSeenInTheListAndTheFile() async throws {
        let s = try await ControllerPairingTests.setup()
        let box = ControllerPairingTests.open(s)
        let port = try await ControllerPairingTests.pairingPort(s.controller)
        _ = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: s.payload, identity: s.studio, studioName: "Studio One")
        let studio = try await ControllerPairingTests.outcome(box).get()
        #expect(studio.lastSeen == studio.pairedAt)
        #expect(s.controller.pairedDevices.first?.lastSeen == studio.pairedAt)

        let directory = try PairedDeviceStoreTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PairedDeviceStore(directory: directory, logger: PairedDeviceStoreTests.quiet)
        try store.add(PairedStudio(id: "s", name: "S", publicKey: [UInt8](repeating: 1, count: 32), pairedAt: Date(timeIntervalSince1970: 5)))
        let text = try String(contentsOfFile: directory + "/" + PairedDeviceStore.fileName, encoding: .utf8)
        #expect(text.contains("\"lastSeen\" : \"1970-01-01T00:00:05Z\""), "\(text)")
        await s.controller.stop()
    }
}
