import CamoMedia
import CamoProducerKit
import CamoStudioKit
import CamoTestSupport
import CamoWire
import Foundation
import Logging
import NIOPosix
import Synchronization
import Testing

/// A delegate that answers with `answer`, optionally after `gate` is opened, and records where it was called.
final class RecordingDelegate: CamoControllerDelegate {
    struct Call: Sendable {
        var studioName: String
        var onEventLoop: Bool
    }

    let answer: Bool
    let gate: DispatchSemaphore?
    private let calls = Mutex<[Call]>([])
    var recorded: [Call] { calls.withLock { $0 } }

    init(answer: Bool, gate: DispatchSemaphore? = nil) {
        self.answer = answer
        self.gate = gate
    }

    func camoController(_ controller: CamoController, shouldAcceptIncomingConnection connection: IncomingConnection) -> Bool {
        calls.withLock {
            $0.append(Call(
                studioName: connection.name, onEventLoop: MultiThreadedEventLoopGroup.currentEventLoop != nil))
        }
        gate?.wait()
        return answer
    }
}

@Suite("CamoController keeps the SDK's promises", .timeLimit(.minutes(1)))
struct ControllerSDKTests {
    static func refusal(_ error: any Error) -> (code: UInt16, reason: String)? {
        // Refused after the hello: the session is established, and the agent's error closes it.
        switch error {
        case StudioClientError.agentRefused(let code, let reason): return (code, reason)
        case StudioClientError.sessionEnded(.agentError(let code, let reason)): return (code, reason)
        default: return nil
        }
    }

    @Test func theDelegateAcceptsOffTheEventLoop() async throws {
        let controller = ControllerTests.makeController(clock: ManualClock())
        let delegate = RecordingDelegate(answer: true)
        controller.delegate = delegate
        try await controller.start()
        let studio = try await ControllerTests.studio(try #require(controller.port), name: "Accepted")
        try await ControllerTests.waitForState(controller, "active") { if case .active = $0 { true } else { false } }
        let calls = delegate.recorded
        #expect(calls.count == 1)
        #expect(calls.first?.studioName == "Accepted")
        #expect(calls.first?.onEventLoop == false, "the delegate never runs on an event loop")
        await studio.close()
        await controller.stop()
    }

    @Test func aDeclinedStudioIsRefusedWithTheReason() async throws {
        let controller = ControllerTests.makeController(clock: ManualClock())
        let delegate = RecordingDelegate(answer: false)
        controller.delegate = delegate
        try await controller.start()
        let error = await #expect(throws: StudioClientError.self) {
            _ = try await ControllerTests.studio(try #require(controller.port), name: "Declined")
        }
        let refusal = try #require(error.flatMap(Self.refusal))
        #expect(refusal.code == WireErrorCode.notPaired.rawValue)
        #expect(refusal.reason == "The agent's owner declined this studio.")
        #expect(controller.connections.isEmpty)
        #expect(controller.state == .notConnected)
        await controller.stop()
    }

    @Test func aSlowDecisionIsRefusedAtTheDeadlineOfTheInjectedClock() async throws {
        let clock = ManualClock()
        let controller = ControllerTests.makeController(clock: clock) { $0.admissionDecisionSeconds = 3 }
        let gate = DispatchSemaphore(value: 0)
        let delegate = RecordingDelegate(answer: true, gate: gate)
        controller.delegate = delegate
        try await controller.start()
        let port = try #require(controller.port)
        let attempt = Task { try await ControllerTests.studio(port, name: "Waiting") }
        // The pacer sleeps on the clock, and so does the decision's deadline once the hello arrived. The
        // connection's handshake deadline slept on it too until then; the hello cancelled it before the delegate
        // was asked.
        for _ in 0..<1_000 where delegate.recorded.isEmpty { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(delegate.recorded.count == 1, "the delegate was asked")
        await clock.waitForSleepers(2)
        clock.advance(by: 2_999_999_999)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(controller.connections.isEmpty, "no decision yet, and the deadline has not passed")
        clock.advance(by: 1)
        let result = await attempt.result
        gate.signal()  // the delegate answers "accept", too late
        let refusal = try #require(result.failure.flatMap(Self.refusal), "refused: \(result)")
        #expect(refusal.code == WireErrorCode.notPaired.rawValue)
        #expect(refusal.reason.contains("did not decide within 3.0 seconds"), "\(refusal.reason)")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(controller.connections.isEmpty, "a late yes admits nobody")
        await controller.stop()
    }

    @Test func startPublishesTheAgentAndStopWithdrawsIt() async throws {
        let advertiser = AdvertiserRecorder()
        let controller = ControllerTests.makeController(advertiser: .custom(advertiser))
        #expect(controller.advertiser != nil)
        try await controller.start()
        let port = try #require(controller.port)
        let expected = "started \(port) v=\(WireLimits.versionMajor) id=agent-test name=Test agent model=test sw=0.0"
        for _ in 0..<300 where advertiser.agentLog.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(advertiser.agentLog == [expected])
        await controller.stop()
        #expect(advertiser.agentLog == [expected, "stopped"], "stop() returns once the service is withdrawn")
    }

    /// A configuration whose state directory is `root/state` in a new scratch folder (removed by the caller).
    static func onDisk() -> (configuration: ControllerConfiguration, root: String) {
        let root = NSTemporaryDirectory() + "camo-sdk-\(UUID().uuidString.prefix(8))"
        var configuration = ControllerConfiguration(
            identity: AgentIdentity(id: "agent-disk", name: "Disk", keyPair: .generate()),
            description: AgentDescription(model: "m", softwareVersion: "s", camera: "c", microphone: "m"),
            admission: AdmissionPolicy(allowUnpaired: false))
        configuration.stateDirectory = root + "/state"
        return (configuration, root)
    }

    @Test func avahiIsTheDefaultAdvertiserAndOffMeansNone() throws {
        let (configuration, root) = Self.onDisk()
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            let controller = try CamoController(configuration: configuration, logger: Logger(label: "t"))
            #expect(controller.advertiser is AvahiAdvertiser)
        }
        do {
            let controller = try CamoController(configuration: configuration, logger: Logger(label: "t"), advertiser: .off)
            #expect(controller.advertiser == nil)
        }
    }

    @Test func pairedStudiosPersistByDefault() throws {
        let (configuration, root) = Self.onDisk()
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            let first = try CamoController(configuration: configuration, logger: Logger(label: "t"), advertiser: .off)
            try first.pairedDeviceStore.add(PairedStudio(id: "studio-1", name: "One", publicKey: [UInt8](repeating: 7, count: 32), pairedAt: Date()))
            // One agent per state directory: a second controller there is refused while the first lives.
            #expect(throws: StateDirectoryBusy.self) {
                _ = try CamoController(configuration: configuration, logger: Logger(label: "t"), advertiser: .off)
            }
        }
        let again = try CamoController(configuration: configuration, logger: Logger(label: "t"), advertiser: .off)
        #expect(again.pairedDevices.map(\.id) == ["studio-1"], "a new controller on the same state directory remembers the studio")
        #expect(FileManager.default.fileExists(atPath: configuration.stateDirectory + "/paired.json"))
    }

    @Test func pairStudioWithQRCodeDataPairsAndPublishesWhileOpen() async throws {
        let s = try await ControllerPairingTests.setup()
        let outcome = Task { try await s.controller.pairStudio(withQRCodeData: s.payload.uri) }
        let port = try await ControllerPairingTests.pairingPort(s.controller)
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)"]), "_camopairing._tcp is published while the window is open")
        let agent = try await StudioPairing.pair(host: "127.0.0.1", port: port, payload: s.payload, identity: s.studio, studioName: "Studio One")
        #expect(agent.id == "agent-test")
        let studio = try await outcome.value
        #expect(studio.id == s.studio.id && studio.name == "Studio One")
        #expect(await s.advertiser.waitFor(["open \(s.payload.studioId)", "closed"]), "and withdrawn when it closes")
        #expect(s.controller.pairedDevices.map(\.id) == [s.studio.id])
        await s.controller.stop()
    }

    @Test func pairStudioWithQRCodeDataRefusesBadCodes() async throws {
        let s = try await ControllerPairingTests.setup()
        await #expect(throws: PairingFailure.self) { _ = try await s.controller.pairStudio(withQRCodeData: "camo-pair:1?garbage") }
        let box = ControllerPairingTests.Box()
        s.controller.pairStudio(withQRCodeData: "not a code") { box.set($0) }
        let result = try await ControllerPairingTests.outcome(box)
        #expect(result.failure != nil, "a bad code never pairs: \(result)")
        #expect(s.advertiser.log.isEmpty, "nothing is published for a bad code")
        await s.controller.stop()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
