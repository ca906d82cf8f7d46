import CamoMedia
@testable import CamoProducerKit
import CamoStudioKit
import CamoTestSupport
import CamoWire
import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The pairing window as a plain struct: exact deadline, connection cap, first ending wins.
@Suite("Pairing window (state machine)")
struct PairingWindowTests {
    static let second: UInt64 = 1_000_000_000
    static let payload = PairingPayload(
        studioId: "studio-1", studioName: "Studio One", secret: [UInt8](repeating: 7, count: 32), expiry: 2_000_000_000)

    @Test func closesAtExactlyThirtySeconds() {
        var window = PairingWindow(payload: Self.payload, openedAt: 5 * Self.second)
        #expect(window.deadline == 35 * Self.second)
        let early = window.expire(at: 35 * Self.second - 1)
        #expect(!early, "one nanosecond before the deadline it is still open")
        #expect(window.isOpen)
        #expect(window.remaining(at: 35 * Self.second - 1) == 1)
        let onTime = window.expire(at: 35 * Self.second)
        #expect(onTime)
        #expect(!window.isOpen)
        guard case .failure(.timedOut(let seconds))? = window.outcome else {
            Issue.record("outcome \(String(describing: window.outcome))")
            return
        }
        #expect(seconds == 30)
        #expect(window.remaining(at: 35 * Self.second - 1) == 0, "a closed window has no time left")
    }

    @Test func aHandshakeAt29point9SecondsCountsAndAt30DoesNot() {
        let window = PairingWindow(payload: Self.payload, openedAt: 0)
        let key = [UInt8](repeating: 1, count: 32)
        let late = window.verify(studioId: "studio-1", studioName: "S", publicKey: key, at: 30 * Self.second, date: Date())
        #expect(throws: WireError.self) { try late.get() }
        let inTime = window.verify(studioId: "studio-1", studioName: "S", publicKey: key, at: 29_900_000_000, date: Date())
        let studio = try? inTime.get()
        #expect(studio?.id == "studio-1")
        #expect(studio?.publicKey == Data(key))
    }

    @Test func anotherStudiosIdIsRefusedAndTheWindowStaysOpen() {
        var window = PairingWindow(payload: Self.payload, openedAt: 0)
        let result = window.verify(studioId: "intruder", studioName: "X", publicKey: [UInt8](repeating: 1, count: 32), at: Self.second, date: Date())
        guard case .failure(let error) = result else {
            Issue.record("an id other than the QR's was accepted")
            return
        }
        #expect(error.code == .notPaired)
        #expect(error.reason.contains("studio-1"))
        window.connectionEnded(from: "10.0.0.2", failed: true)
        #expect(window.isOpen)
    }

    @Test func connectionsAreCappedAndFreedSlotsAreReused() {
        var window = PairingWindow(payload: Self.payload, openedAt: 0, maxConnections: 3, maxPerAddress: 2)
        let first = window.connectionArrived(at: 1, from: "10.0.0.9")
        let second = window.connectionArrived(at: 2, from: "10.0.0.9")
        #expect(first == nil && second == nil)
        let third = window.connectionArrived(at: 3, from: "10.0.0.9")
        #expect(third?.code == .tooManyConnections, "one address cannot take more than its share")
        let otherHost = window.connectionArrived(at: 3, from: "10.0.0.2")
        #expect(otherHost == nil, "the real studio on another address still gets in")
        let full = window.connectionArrived(at: 3, from: "10.0.0.3")
        #expect(full?.code == .tooManyConnections, "the window as a whole is capped too")
        #expect(window.refusedConnections == 2)
        window.connectionEnded(from: "10.0.0.9", failed: true)
        let fourth = window.connectionArrived(at: 4, from: "10.0.0.9")
        #expect(fourth == nil, "a freed slot takes the next connection")
        #expect(window.failedAttempts == 1)
        #expect(window.isOpen, "failed attempts never end the window")
    }

    @Test func aStudioBeingStoredHoldsTheWindowPastItsDeadline() {
        var window = PairingWindow(payload: Self.payload, openedAt: 0)
        window.beginStoring()
        let expired = window.expire(at: 31 * Self.second)
        let cancelled = window.finish(.failure(.cancelled))
        #expect(!expired && !cancelled, "neither the deadline nor a cancel ends a window whose studio is being stored")
        let late = window.connectionArrived(at: 1, from: "10.0.0.2")
        #expect(late?.code == .notPaired)
        let studio = PairedStudio(id: "studio-1", name: "S", publicKey: [UInt8](repeating: 1, count: 32), pairedAt: Date())
        window.finishStoring(.success(studio))
        #expect(window.outcome == .success(studio))
    }

    @Test func theFirstEndingWins() {
        var window = PairingWindow(payload: Self.payload, openedAt: 0)
        let cancelled = window.finish(.failure(.cancelled))
        let stopped = window.finish(.failure(.stopped))
        let expired = window.expire(at: 31 * Self.second)
        #expect(cancelled && !stopped && !expired)
        #expect(window.outcome == .failure(.cancelled))
        let late = window.connectionArrived(at: 1, from: "10.0.0.2")
        #expect(late?.code == .notPaired, "a closed window takes no connections")
    }
}

/// Records what the controller asks the advertiser to do: the pairing service in ``log``, the agent service
/// (`_camo._tcp`) in ``agentLog``.
final class AdvertiserRecorder: CamoAdvertiser {
    private let events = Mutex<[String]>([])
    private let agentEvents = Mutex<[String]>([])
    var log: [String] { events.withLock { $0 } }
    var agentLog: [String] { agentEvents.withLock { $0 } }

    /// Waits (real time, bounded) until the log equals `expected`: the controller calls on its own queue.
    func waitFor(_ expected: [String]) async -> Bool {
        for _ in 0..<300 {
            if log == expected { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return log == expected
    }
    func controllerStarted(port: Int, txt: [(String, String)]) {
        agentEvents.withLock { $0.append("started \(port) " + txt.map { "\($0.0)=\($0.1)" }.joined(separator: " ")) }
    }
    func controllerStopped() { agentEvents.withLock { $0.append("stopped") } }
    func pairingWindowOpened(port: Int, txt: [(String, String)]) {
        events.withLock { $0.append("open \(txt.first { $0.0 == "studio" }?.1 ?? "?")") }
    }
    func pairingWindowClosed() { events.withLock { $0.append("closed") } }
}

/// The controller's pairing over loopback, with a manual clock for the window and real studios.
@Suite("Pairing through CamoController", .timeLimit(.minutes(1)))
struct ControllerPairingTests {
    static let wallNow: UInt64 = 1_800_000_000
    static let second: UInt64 = 1_000_000_000

    struct Setup {
        var controller: CamoController
        var clock: ManualClock
        var advertiser: AdvertiserRecorder
        var studio: StudioIdentity
        var payload: PairingPayload
    }

    static func setup(allowUnpaired: Bool = false, _ adjust: (inout ControllerConfiguration) -> Void = { _ in }) async throws -> Setup {
        let clock = ManualClock()
        let advertiser = AdvertiserRecorder()
        let controller = ControllerTests.makeController(allowUnpaired: allowUnpaired, clock: clock, advertiser: .custom(advertiser)) { configuration in
            configuration.wallClock = { wallNow }
            adjust(&configuration)
        }
        try await controller.start()
        let studio = StudioIdentity.generated(id: "studio-\(UInt32.random(in: 0...UInt32.max))")
        let payload = PairingPayload.generate(studioId: studio.id, studioName: "Studio One", now: wallNow)
        return Setup(controller: controller, clock: clock, advertiser: advertiser, studio: studio, payload: payload)
    }

    /// Waits (real time, bounded) until the pairing listener has its port.
    static func pairingPort(_ controller: CamoController) async throws -> Int {
        for _ in 0..<500 {
            if let port = controller.pairingStatus?.port { return port }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        throw StudioClientError.invalidArgument("the pairing listener never reported its port: \(String(describing: controller.pairingStatus))")
    }

    /// Receives a pairing completion.
    final class Box: Sendable {
        let value = Mutex<Result<PairedStudio, PairingFailure>?>(nil)
        func set(_ result: Result<PairedStudio, PairingFailure>) { value.withLock { $0 = result } }
        var current: Result<PairedStudio, PairingFailure>? { value.withLock { $0 } }
    }

    /// Opens a window and returns a box that receives the completion.
    static func open(_ s: Setup) -> Box {
        let box = Box()
        _ = s.controller.openPairing(payloadText: s.payload.uri) { box.set($0) }
        return box
    }

    static func outcome(_ box: Box) async throws -> Result<PairedStudio, PairingFailure> {
        for _ in 0..<500 {
            if let result = box.current { return result }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        throw StudioClientError.invalidArgument("the pairing never completed")
    }

    @Test func theWindowClosesAtExactlyThirtySecondsAndWithdraws() async throws {
        let s = try await Self.setup()
        let box = Self.open(s)
        let port = try await Self.pairingPort(s.controller)
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)"]))
        await s.clock.waitForSleepers(2)  // the pacer and the window timer
        s.clock.advance(to: 30 * Self.second - 1)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(box.current == nil, "still open one nanosecond before 30 s")
        #expect(s.controller.pairingStatus?.phase == .waiting)
        s.clock.advance(to: 30 * Self.second)
        let result = try await Self.outcome(box)
        #expect(result == .failure(.timedOut(seconds: 30)))
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)", "closed"]))
        #expect(s.controller.pairingStatus?.phase == .failed)
        #expect(s.controller.pairingStatus?.failureCode == "timedOut")
        // The listener is closed: pairing now fails to connect.
        await #expect(throws: StudioClientError.self) {
            _ = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: s.payload, identity: s.studio, studioName: "late")
        }
        await s.controller.stop()
    }

    @Test func aStudioAt29point9SecondsPairsAndThenConnectsWithKK() async throws {
        let s = try await Self.setup()
        let box = Self.open(s)
        let port = try await Self.pairingPort(s.controller)
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)"]))
        await s.clock.waitForSleepers(2)
        s.clock.advance(to: 29_900_000_000)
        let agent = try await StudioPairing.pair(
            host: "127.0.0.1", port: port, payload: s.payload, identity: s.studio, studioName: "Studio One")
        #expect(agent.id == "agent-test")
        #expect(agent.publicKey == Data(s.controller.configuration.identity.keyPair.publicKey))
        let result = try await Self.outcome(box)
        #expect((try? result.get())?.id == s.studio.id)
        #expect(s.controller.pairedDevices.map(\.id) == [s.studio.id])
        #expect(s.controller.pairedDevices.first?.publicKey == Data(s.studio.publicKey))
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)", "closed"]))

        // From now on: KK with the stored keys, no QR.
        var configuration = StudioClientConfiguration(identity: s.studio, studioName: "Studio One")
        configuration.handshake = .paired(agentKey: Array(agent.publicKey))
        let session = try await StudioClient.connect(host: "127.0.0.1", port: try #require(s.controller.port), configuration: configuration)
        #expect(session.agent.agentId == "agent-test")
        try await ControllerTests.waitForState(s.controller, "active") { if case .active = $0 { true } else { false } }
        // "Last seen" is written off the event loop (each write syncs the disk), so it lands a little later.
        let deadline = Date().addingTimeInterval(5)
        while s.controller.pairedDevices.first?.lastSeen == nil, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(s.controller.pairedDevices.first?.lastSeen != nil, "last seen is recorded within 5 s")

        // Unpairing ends the live session at once, and the studio is refused afterwards with the reason.
        let removed = try s.controller.removePairedDevice(s.studio.id)
        #expect(removed)
        var closed: StudioCloseReason?
        for await event in session.events { if case .closed(let why) = event { closed = why } }
        guard case .agentError(let code, _)? = closed else {
            Issue.record("the session did not end with an agent error: \(String(describing: closed))")
            return
        }
        #expect(code == WireErrorCode.notPaired.rawValue)
        do {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: try #require(s.controller.port), configuration: configuration)
            Issue.record("an unpaired studio connected with KK")
        } catch let error as StudioClientError {
            guard case .agentRefused(let code, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == WireErrorCode.notPaired.rawValue)
            #expect(reason.contains("not paired"))
        }
        await s.controller.stop()
    }

    @Test func aKKStudioWithAnotherKeyIsRefusedAsNotMatching() async throws {
        let s = try await Self.setup()
        let agentKey = s.controller.configuration.identity.keyPair.publicKey
        try s.controller.pairedDeviceStore.add(PairedStudio(
            id: s.studio.id, name: "Studio One", publicKey: NoiseKeyPair.generate().publicKey, pairedAt: Date()))
        var configuration = StudioClientConfiguration(identity: s.studio, studioName: "Studio One")
        configuration.handshake = .paired(agentKey: agentKey)
        do {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: try #require(s.controller.port), configuration: configuration)
            Issue.record("a studio with another key connected")
        } catch let error as StudioClientError {
            guard case .agentRefused(let code, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == WireErrorCode.notPaired.rawValue)
            #expect(reason.contains("do not match"))
        }
        await s.controller.stop()
    }

    @Test func cancelAndStopCompleteAtOnce() async throws {
        let s = try await Self.setup()
        let box = Self.open(s)
        _ = try await Self.pairingPort(s.controller)
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)"]))
        #expect(s.controller.cancelPairing())
        #expect(try await Self.outcome(box) == .failure(.cancelled))
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)", "closed"]))
        #expect(!s.controller.cancelPairing(), "nothing left to cancel")

        let second = Self.open(s)
        _ = try await Self.pairingPort(s.controller)
        let opened = ["open \(s.payload.studioId)", "closed"]
        // The advertisement goes out on the advertiser's queue; wait for it, so stop has something to withdraw.
        #expect(await s.advertiser.waitFor(opened + ["open \(s.payload.studioId)"]))
        await s.controller.stop()
        #expect(try await Self.outcome(second) == .failure(.stopped))
        #expect(await s.advertiser.waitFor(opened + opened))
    }

    @Test func aSecondWindowIsRefusedWithAReason() async throws {
        let s = try await Self.setup()
        let box = Self.open(s)
        let other = PairingPayload.generate(studioId: "other-studio", studioName: "Other", now: Self.wallNow)
        guard case .failure(let failure) = s.controller.openPairing(payloadText: other.uri) else {
            Issue.record("a second window opened")
            return
        }
        #expect(failure == .alreadyOpen(studioName: "Studio One"))
        #expect(failure.description.contains("already open"))
        #expect(box.current == nil, "the first window is untouched")
        await s.controller.stop()
    }

    @Test func badCodesAreRefusedBeforeAnyWindowOpens() async throws {
        let s = try await Self.setup()
        var expired = s.payload
        expired.expiry = Self.wallNow - 3_600
        for (text, reason) in [(expired.uri, "expired"), ("hello", "notAPairingCode"), ("camo-pair:2?id=x", "unknownVersion")] {
            guard case .failure(.invalidCode(let got, let detail)) = s.controller.openPairing(payloadText: text) else {
                Issue.record("\(text) was not refused")
                continue
            }
            #expect(got == reason, "\(text)")
            #expect(!detail.isEmpty)
        }
        #expect(s.controller.pairingStatus == nil)
        #expect(s.advertiser.log.isEmpty)
        await s.controller.stop()
    }

    @Test func aWrongSecretNeverPairsNorEndsTheWindowAndStalledPeersDoNotBlock() async throws {
        // The connections' deadlines are the manual clock's, which stands still: the stalled peers keep their slots.
        let s = try await Self.setup()
        let box = Self.open(s)
        let port = try await Self.pairingPort(s.controller)
        // Three peers that send a pairing preamble and then stall mid-handshake, and one that sends garbage.
        var stalled: [any Channel] = []
        let preamble = Preamble(pattern: .xxpsk3, initiatorId: s.studio.id).encoded()
        for _ in 0..<3 {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(channel.allocator.buffer(bytes: preamble))
            stalled.append(channel)
        }
        let garbage = try await RawPeer.exchange(port: port, send: Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(garbage.unauthenticatedError != nil)
        // The right id with a wrong secret.
        var wrong = s.payload
        wrong.secret = [UInt8](repeating: 0x55, count: 32)
        await #expect(throws: StudioClientError.self) {
            _ = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: wrong, identity: s.studio, studioName: "Impostor")
        }
        // The right secret with another studio's id.
        let impostor = StudioIdentity.generated(id: "someone-else")
        var stolen = s.payload
        stolen.studioId = impostor.id
        await #expect(throws: StudioClientError.self) {
            _ = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: stolen, identity: impostor, studioName: "Impostor")
        }
        #expect(box.current == nil, "nothing ended the window")
        #expect(s.controller.pairingStatus?.phase == .waiting)
        #expect(s.controller.pairedDevices.isEmpty)
        // The real studio pairs while the stalled peers still hold their connections.
        let agent = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: s.payload, identity: s.studio, studioName: "Studio One")
        #expect(agent.id == "agent-test")
        let stillConnected = stalled.filter { $0.isActive }.count
        #expect(stillConnected == 3, "the stalled peers were still connected when the studio paired")
        #expect((try? await Self.outcome(box).get())?.id == s.studio.id)
        for channel in stalled { try? await channel.close() }
        await s.controller.stop()
    }

    @Test func scanningReportsBadCodesAndOpensTheWindowWithTheFirstGoodOne() async throws {
        let s = try await Self.setup()
        let frames = Mutex(0)
        let good = s.payload.uri
        let decode: @Sendable (VideoFrame) -> [String] = { _ in
            let n = frames.withLock { value -> Int in
                value += 1
                return value
            }
            return n < 3 ? ["https://example.com/not-a-pairing-code"] : [good]
        }
        guard case .success(let status) = s.controller.startScanning(decode: decode) else {
            Issue.record("scanning did not start")
            return
        }
        #expect(status.phase == .scanning)
        #expect(status.remainingSeconds == 30)
        let frame = VideoFrame(width: 64, height: 36, bytesPerRow: 256, data: [UInt8](repeating: 0, count: 256 * 36), captureTime: 0)
        for _ in 0..<200 where s.controller.pairingStatus?.phase == .scanning {
            try s.controller.enqueueVideo(frame)
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let now = try #require(s.controller.pairingStatus)
        #expect(now.phase == .waiting)
        #expect(now.studioId == s.studio.id)
        #expect(now.invalidCodes.count == 1, "the same bad code is reported once: \(now.invalidCodes)")
        #expect(now.invalidCodes.first?.hasPrefix("unknownScheme") == true)
        let port = try await Self.pairingPort(s.controller)
        _ = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: s.payload, identity: s.studio, studioName: "Studio One")
        #expect(s.controller.pairingStatus?.phase == .paired)
        await s.controller.stop()
    }

    @Test func scanningGivesUpAfterThirtySecondsSayingWhatItSaw() async throws {
        let s = try await Self.setup()
        let box = Box()
        _ = s.controller.startScanning(decode: { _ in [] }) { box.set($0) }
        try s.controller.enqueueVideo(VideoFrame(width: 64, height: 36, bytesPerRow: 256, data: [UInt8](repeating: 0, count: 256 * 36), captureTime: 0))
        await s.clock.waitForSleepers(2)
        s.clock.advance(to: 30 * Self.second)
        #expect(try await Self.outcome(box) == .failure(.noCodeSeen(seconds: 30, invalidCodes: 0)))
        await s.controller.stop()
    }
}
