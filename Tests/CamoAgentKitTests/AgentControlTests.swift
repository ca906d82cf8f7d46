@testable import CamoAgentKit
import CamoMedia
import CamoProducerKit
import CamoWire
import Foundation
import Logging
import Testing

/// The control socket's commands as the agent answers them (AgentControl), its status text and JSON, and the real
/// socket (ControlServer, ControlClient).
@Suite("Control socket: commands, status and the socket itself", .timeLimit(.minutes(1)))
struct AgentControlTests {
    /// A controller that is not started: the commands act on its state.
    /// A controller on loopback; with `settingsDirectory`, its settings are saved there.
    static func makeController(settingsDirectory: String? = nil) -> CamoController {
        var configuration = ControllerConfiguration(
            identity: AgentIdentity(id: "agent-test", name: "Test agent", keyPair: .generate()),
            description: AgentDescription(model: "test", softwareVersion: "0.0", camera: "none", microphone: "none"),
            admission: AdmissionPolicy(allowUnpaired: true))
        configuration.host = "127.0.0.1"
        configuration.port = 0
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return CamoController(
            configuration: configuration, logger: logger, pairedDevices: PairedDeviceStore(inMemory: []), advertiser: .off,
            settingsDirectory: settingsDirectory)
    }

    // MARK: Control socket

    static let micDetail = MicrophoneStatus(
        setup: "hw:1,0 S16_LE 48000 Hz 2 ch", lost: false, capturedFrames: 96_000, overruns: 2, suspends: 1,
        filledFrames: 480, droppedFrames: 3, silentFramesWhileLost: 0, losses: 0)

    @Test func muteCommandSwitchesTheMicrophoneAndTheStatusShowsIt() throws {
        let controller = Self.makeController()
        let handler = AgentControl.handler(
            controller: controller, camera: { "test camera" }, microphone: "test mic", microphoneDetail: { Self.micDetail })

        let status = try #require(handler(ControlRequest(command: "status")).status)
        #expect(status.microphoneMuted == false)
        #expect(status.microphoneDetail == Self.micDetail)
        #expect(!status.humanDescription.contains("(muted)"))

        let on = handler(ControlRequest(command: "mute", value: "on"))
        #expect(on.ok)
        #expect(on.error == nil)
        let onStatus = try #require(on.status)
        #expect(onStatus.microphoneMuted == true)
        #expect(controller.isMicrophoneMuted)
        #expect(onStatus.microphoneDetail == Self.micDetail)
        #expect(onStatus.humanDescription.contains("microphone test mic (muted)"), "\(onStatus.humanDescription)")
        #expect(onStatus.humanDescription.contains("overruns 2"), "\(onStatus.humanDescription)")
        #expect(onStatus.humanDescription.contains("hw:1,0 S16_LE 48000 Hz 2 ch"), "\(onStatus.humanDescription)")

        let again = handler(ControlRequest(command: "mute", value: "on"))
        #expect(again.ok && again.status?.microphoneMuted == true, "muting twice is harmless")
        #expect(handler(ControlRequest(command: "status")).status?.microphoneMuted == true, "status does not change it")

        let off = handler(ControlRequest(command: "mute", value: "off"))
        #expect(off.ok)
        #expect(off.status?.microphoneMuted == false)
        #expect(!controller.isMicrophoneMuted)
        #expect(off.status?.humanDescription.contains("(muted)") == false)
    }

    @Test(arguments: [nil, "maybe", "", "ON", "true"] as [String?])
    func muteCommandRefusesAnyValueButOnOrOff(_ value: String?) throws {
        let controller = Self.makeController()
        let handler = AgentControl.handler(controller: controller, camera: { "cam" }, microphone: "mic")
        for muted in [false, true] {
            if muted { controller.muteMicrophone() } else { controller.unmuteMicrophone() }
            let response = handler(ControlRequest(command: "mute", value: value))
            #expect(!response.ok)
            #expect(response.status == nil)
            let error = try #require(response.error)
            #expect(error.contains("on") && error.contains("off"), "\(error)")
            #expect(controller.isMicrophoneMuted == muted, "a refused mute leaves the state as it was")
        }
    }

    @Test func unknownCommandsListMute() throws {
        let controller = Self.makeController()
        let handler = AgentControl.handler(controller: controller, camera: { "cam" }, microphone: "mic")
        let response = handler(ControlRequest(command: "silence"))
        #expect(!response.ok)
        let error = try #require(response.error)
        #expect(error.contains("silence"), "\(error)")
        #expect(error.contains("mute"), "\(error)")
        #expect(!controller.isMicrophoneMuted)
    }

    @Test func statusWithoutMicrophoneDetailHasNoMicrophoneLine() throws {
        let controller = Self.makeController()
        let handler = AgentControl.handler(controller: controller, camera: { "cam" }, microphone: "tone")
        let status = try #require(handler(ControlRequest(command: "status")).status)
        #expect(status.microphoneDetail == nil)
        #expect(!status.humanDescription.contains("overruns"), "\(status.humanDescription)")
        #expect(status.humanDescription.contains("microphone tone;"), "\(status.humanDescription)")
    }

    @Test func aLostMicrophoneShowsInTheMicrophoneLine() {
        var detail = Self.micDetail
        detail.lost = true
        detail.losses = 1
        detail.silentFramesWhileLost = 4800
        let status = Self.sampleStatus(muted: false, detail: detail)
        #expect(status.humanDescription.contains("LOST (sending silence)"), "\(status.humanDescription)")
        #expect(status.humanDescription.contains("silent while lost 4800"), "\(status.humanDescription)")
        #expect(status.humanDescription.contains("losses 1"), "\(status.humanDescription)")
    }

    @Test func muteOverTheRealControlSocket() async throws {
        let controller = Self.makeController()
        // A directory of our own: the server refuses a socket directory others may write to (such as /tmp itself).
        let path = NSTemporaryDirectory() + "camo-mute-\(getpid())-\(UInt32.random(in: 0...UInt32.max))/control.sock"
        try #require(path.utf8.count <= ControlServer.maxPathLength)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = try await ControlServer.start(
            path: path, logger: logger,
            handler: AgentControl.handler(
                controller: controller, camera: { "cam" }, microphone: "mic", microphoneDetail: { Self.micDetail }))

        let on = try await ControlClient.send(ControlRequest(command: "mute", value: "on"), to: path)
        #expect(on.ok)
        #expect(on.status?.microphoneMuted == true)
        #expect(on.status?.microphoneDetail == Self.micDetail, "the detail survives the socket's JSON")
        #expect(controller.isMicrophoneMuted)

        let refused = try await ControlClient.send(ControlRequest(command: "mute", value: "maybe"), to: path)
        #expect(!refused.ok)
        #expect(refused.error?.contains("on or off") == true, "\(refused.error ?? "no error")")
        #expect(controller.isMicrophoneMuted)

        let off = try await ControlClient.send(ControlRequest(command: "mute", value: "off"), to: path)
        #expect(off.ok)
        #expect(off.status?.microphoneMuted == false)
        #expect(!controller.isMicrophoneMuted)

        await server.stop()
    }

    // MARK: JSON

    static func sampleStatus(muted: Bool, detail: MicrophoneStatus?) -> AgentStatus {
        AgentStatus(
            agentId: "agent-1", name: "Desk", pid: 4242, port: 51_000, state: "active", paused: false,
            camera: "C920", microphone: "USB mic", microphoneMuted: muted, microphoneDetail: detail, captureSize: "1280x720",
            connections: [
                AgentStatus.Connection(
                    studioId: "studio-1", studio: "Recorder", address: "127.0.0.1:50000",
                    since: Date(timeIntervalSince1970: 1_700_000_000), codec: "bgra", size: "1280x720",
                    audioSamplesRequired: 480, pausedByStudio: false, framesSent: 30, framesDropped: 1, framesRepeated: 2,
                    audioPackets: 100, roundTripMs: 1.5)
            ])
    }

    @Test(arguments: [(false, nil), (true, nil), (true, micDetail), (false, micDetail)] as [(Bool, MicrophoneStatus?)])
    func statusRoundTripsThroughJSON(_ muted: Bool, _ detail: MicrophoneStatus?) throws {
        let status = Self.sampleStatus(muted: muted, detail: detail)

        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let data = try encoder.encode(status)
        #expect(try decoder.decode(AgentStatus.self, from: data) == status)

        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["microphoneMuted"] as? Bool == muted)
        if detail != nil {
            let encodedDetail = try #require(object["microphoneDetail"] as? [String: Any])
            #expect(encodedDetail["overruns"] as? Int == 2)
        } else {
            #expect(object["microphoneDetail"] == nil || object["microphoneDetail"] is NSNull)
        }

        // As the control socket sends it, inside a response.
        let response = ControlResponse(ok: true, status: status)
        let line = try ControlResponse.encoder.encode(response)
        #expect(try ControlResponse.decoder.decode(ControlResponse.self, from: line) == response)
    }
}
