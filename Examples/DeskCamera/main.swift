import CamoCapture
import CamoMedia
import CamoProducerKit
import Foundation
import Logging

// A Camo camera in one page: the synthetic test pattern and tone, found by studios through avahi-daemon as
// "Desk camera", paired studios remembered in the state directory. `desk-camera QR-TEXT` also pairs the studio
// whose code `camo-studio pair` shows. DESK_CAMERA_STATE names another state directory.
let logger = Logger(label: "desk-camera")
let environment = ProcessInfo.processInfo.environment
let stateDirectory = environment["DESK_CAMERA_STATE"] ?? AgentPaths.defaultStateDirectory()
let identity = try AgentIdentity.loadOrCreate(in: stateDirectory, name: "Desk camera", logger: logger)
var configuration = ControllerConfiguration(
    identity: identity,
    description: AgentDescription(model: "Linux", softwareVersion: "1.0", camera: "synthetic test pattern", microphone: "synthetic tone"),
    admission: AdmissionPolicy(allowUnpaired: false))
configuration.stateDirectory = stateDirectory
configuration.port = Int(environment["DESK_CAMERA_PORT"] ?? "") ?? 0
let controller = try CamoController(configuration: configuration, logger: logger)  // Avahi; paired.json on disk
try await controller.start()  // publishes _camo._tcp
print("port=\(controller.port ?? 0)")
if CommandLine.arguments.count > 1 {
    // Opens the pairing window: _camopairing._tcp is published until the studio pairs or 30 s pass.
    controller.pairStudio(withQRCodeData: CommandLine.arguments[1]) { result in
        print((try? result.get()).map { "paired \($0.name)" } ?? "not paired: \(result)")
    }
}
let clock = SystemMonotonicClock()
let start = clock.now.nanoseconds
async let video: Void = SyntheticVideoSource().run(clock: clock, startTime: start, size: { controller.preferredCaptureSize }) {
    try? controller.enqueueVideo($0)  // VideoFrame, BGRA; the controller paces it to 30 fps
}
async let audio: Void = SyntheticAudioSource().run(clock: clock, startTime: start) {
    try? controller.enqueuePCMAudio($0)  // AudioChunk, 48 kHz stereo float32
}
_ = await (video, audio)
