@testable import CamoAgentKit
import CamoMedia
import CamoProducerKit
import CamoWire
import Foundation
import Synchronization
import Testing

/// `camo-agent settings` through the control socket's commands: the model with the camera's controls, writes with
/// reasons, and the old commands (`pause`, `mute`, `set-control`) as names in the same model.
@Suite("Control socket: the settings model")
struct SettingsControlTests {
    /// A camera with one brightness control (0...255); it records what was set. (The real camera is vivid, in the VM.)
    final class Camera: CameraControlling {
        let brightness = Mutex(128)
        func cameraControls() throws -> [CameraControl] {
            [CameraControl(id: 0x0098_0900, name: "brightness", label: "Brightness", kind: .integer, minimum: 0, maximum: 255, step: 1,
                           defaultValue: 128, value: brightness.withLock { $0 }, isReadOnly: false, isInactive: false, menu: [])]
        }
        func setCameraControl(name: String, value: String) throws -> CameraControl {
            guard name == "brightness" else { throw CameraControlError("no control \(name)") }
            var control = try cameraControls()[0]
            let parsed = try control.parse(value)
            brightness.withLock { $0 = parsed }
            control.value = parsed
            return control
        }
    }

    @Test func settingsListTheModelAndTheCameraAndWritesComeBackWithReasons() throws {
        let controller = AgentControlTests.makeController()
        let camera = Camera()
        controller.camera = camera
        let handler = AgentControl.handler(controller: controller, camera: { "cam" }, microphone: "mic")
        let model = try #require(handler(ControlRequest(command: "settings")).settings)
        #expect(model.contains { $0.name == "streamingEnabled" } && model.contains { $0.name == "brightness" && $0.maximum == 255 })

        let set = handler(ControlRequest(command: "set-setting", name: "brightness", value: "200"))
        #expect(set.ok && set.settings?.first?.value == .int(200), "\(set)")
        #expect(camera.brightness.withLock { $0 } == 200)
        let tooMuch = handler(ControlRequest(command: "set-setting", name: "brightness", value: "300"))
        #expect(!tooMuch.ok && tooMuch.error?.contains("0...255") == true, "\(tooMuch)")
        let unknown = handler(ControlRequest(command: "set-setting", name: "brightnes", value: "3"))
        #expect(!unknown.ok && unknown.errorCode == "unknownSetting" && unknown.error?.contains("camo-agent settings") == true)
        let word = handler(ControlRequest(command: "set-setting", name: "imageRotation", value: "sideways"))
        #expect(!word.ok && word.error?.contains("0, 90, 180, 270") == true, "\(word)")

        // The old commands are names in the model.
        _ = handler(ControlRequest(command: "pause"))
        _ = handler(ControlRequest(command: "mute", value: "on"))
        _ = handler(ControlRequest(command: "set-control", name: "brightness", value: "17"))
        controller.flushSettings()
        let after = try #require(handler(ControlRequest(command: "settings")).settings)
        #expect(after.first { $0.name == "streamingEnabled" }?.value == .bool(false))
        #expect(after.first { $0.name == "microphoneMuted" }?.value == .bool(true))
        #expect(after.first { $0.name == "brightness" }?.value == .int(17))
        let resume = handler(ControlRequest(command: "set-setting", name: "streamingEnabled", value: "on"))
        #expect(resume.ok && !controller.isPaused)
    }

    /// A camera with its own horizontal flip control.
    final class FlippingCamera: CameraControlling {
        let flip = Mutex(0)
        func cameraControls() throws -> [CameraControl] {
            [CameraControl(id: 0x0098_0914, name: "horizontal_flip", label: "Horizontal Flip", kind: .boolean, minimum: 0, maximum: 1,
                           step: 1, defaultValue: 0, value: flip.withLock { $0 }, isReadOnly: false, isInactive: false, menu: [])]
        }
        func setCameraControl(name: String, value: String) throws -> CameraControl {
            var control = try cameraControls()[0]
            let parsed = try control.parse(value)
            flip.withLock { $0 = parsed }
            control.value = parsed
            return control
        }
    }

    @Test func theCamerasOwnFlipIsUsedOnlyWhereItGivesTheSamePicture() throws {
        let controller = AgentControlTests.makeController()
        let camera = FlippingCamera()
        controller.camera = camera
        controller.cameraOpened(settingsKey: "bus:test")
        controller.flushSettings()
        #expect(!controller.settingsModel().contains { $0.name == "horizontal_flip" }, "the control is imageFlipHorizontal in the model")
        _ = controller.writeSettings(["imageFlipHorizontal": .bool(true)], by: "test")
        #expect(camera.flip.withLock { $0 } == 1 && !controller.imageTransform.flipHorizontal, "no turn: the camera mirrors")
        _ = controller.writeSettings(["imageRotation": .int(90)], by: "test")
        #expect(camera.flip.withLock { $0 } == 0 && controller.imageTransform.flipHorizontal, "a quarter turn: software mirrors after it")
        _ = controller.writeSettings(["imageRotation": .int(0)], by: "test")
        #expect(camera.flip.withLock { $0 } == 1 && !controller.imageTransform.flipHorizontal)
    }

    @Test func settingsAccessMakesAPairedStudioReadOnly() throws {
        let controller = AgentControlTests.makeController()
        try controller.pairedDeviceStore.add(PairedStudio(id: "studio-1", name: "S", publicKey: [UInt8](repeating: 1, count: 32), pairedAt: Date()))
        let handler = AgentControl.handler(controller: controller, camera: { "cam" }, microphone: "mic")
        #expect(handler(ControlRequest(command: "settings-access", name: "studio-1", value: "read-only")).ok)
        #expect(controller.pairedDeviceStore.studio(id: "studio-1")?.maySetSettings == false)
        #expect(handler(ControlRequest(command: "settings-access", name: "studio-1", value: "read-write")).ok)
        #expect(controller.pairedDeviceStore.studio(id: "studio-1")?.maySetSettings == true)
        let missing = handler(ControlRequest(command: "settings-access", name: "nobody", value: "read-only"))
        #expect(!missing.ok && missing.errorCode == "notFound")
        #expect(handler(ControlRequest(command: "settings-access", name: "studio-1", value: "maybe")).errorCode == "badRequest")
    }

    /// The same camera after a firmware change: brightness now goes to 100 only.
    final class NarrowCamera: CameraControlling {
        let brightness = Mutex(50)
        func cameraControls() throws -> [CameraControl] {
            [CameraControl(id: 0x0098_0900, name: "brightness", label: "Brightness", kind: .integer, minimum: 0, maximum: 100, step: 1,
                           defaultValue: 50, value: brightness.withLock { $0 }, isReadOnly: false, isInactive: false, menu: [])]
        }
        func setCameraControl(name: String, value: String) throws -> CameraControl {
            var control = try cameraControls()[0]
            let parsed = try control.parse(value)
            brightness.withLock { $0 = parsed }
            control.value = parsed
            return control
        }
    }

    @Test("A saved control the camera refuses on restore: the camera keeps its value, the model says why, the rest is restored")
    func aSavedControlRefusedOnRestoreIsReported() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("restore-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func make() -> CamoController { AgentControlTests.makeController(settingsDirectory: directory) }
        let first = make()
        first.camera = Camera()
        first.cameraOpened(settingsKey: "usb:1234:5678:SN")
        first.flushSettings()
        #expect(first.writeSettings(["brightness": .int(200), "imageRotation": .int(90)], by: "test").refused.isEmpty)
        first.flushSettings()

        let second = make()
        let narrow = NarrowCamera()
        second.camera = narrow
        second.cameraOpened(settingsKey: "usb:1234:5678:SN")
        second.flushSettings()
        #expect(narrow.brightness.withLock { $0 } == 50, "the refused value never reached the camera")
        let brightness = try #require(second.settingsModel().first { $0.name == "brightness" })
        #expect(brightness.value == .int(50))
        #expect(brightness.note?.contains("refused the saved value 200") == true, "\(brightness.note ?? "no note")")
        #expect(second.imageTransform.rotation == .quarter, "the other saved settings are restored")
    }
}
