@testable import CamoAgentKit
import CamoMedia
import CamoProducerKit
import Foundation
import Logging
import Synchronization
import Testing

/// Night vision and the status light on a control of the camera (`camera:NAME`): the value each kind of control
/// gets, and the lights driven through a camera the test holds. (vivid's own test controls, in the VM:
/// CameraSettingsTests.)
@Suite("Lights on camera controls")
struct LightOutputTests {
    static func control(_ name: String, _ kind: CameraControl.Kind, _ range: ClosedRange<Int>, step: Int = 1, readOnly: Bool = false,
                        menu: [CameraControl.MenuItem] = [], value: Int = 0) -> CameraControl {
        CameraControl(id: 1, name: name, label: name, kind: kind, minimum: range.lowerBound, maximum: range.upperBound, step: step,
                      defaultValue: range.lowerBound, value: value, isReadOnly: readOnly, isInactive: false, menu: menu)
    }

    @Test("A boolean is 1 or 0; an integer runs from its minimum to its maximum on its step; a menu takes Off and On, else its ends")
    func values() {
        let bool = Self.control("ir", .boolean, 0...1)
        #expect(LightOutput.value(for: bool, level: nil) == 0 && LightOutput.value(for: bool, level: 1) == 1)
        let int = Self.control("led", .integer, 0...255)
        #expect([nil, 1.0 / 3, 2.0 / 3, 1].map { LightOutput.value(for: int, level: $0) } == [0, 85, 170, 255])
        let coarse = Self.control("led", .integer, 10...20, step: 5)
        #expect([nil, 0.1, 1.0 / 3, 2.0 / 3, 1].map { LightOutput.value(for: coarse, level: $0) } == [10, 15, 15, 15, 20])
        let named = Self.control("led1_mode", .menu, 0...3, menu: [.init(value: 0, name: "Off"), .init(value: 1, name: "On"),
                                                                   .init(value: 2, name: "Blinking"), .init(value: 3, name: "Auto")])
        #expect(LightOutput.value(for: named, level: nil) == 0 && LightOutput.value(for: named, level: 2.0 / 3) == 1)
        let plain = Self.control("menu", .menu, 1...4, menu: [.init(value: 1, name: "Menu Item 1"), .init(value: 3, name: "Menu Item 3"),
                                                              .init(value: 4, name: "Menu Item 4")])
        #expect(LightOutput.value(for: plain, level: nil) == 1 && LightOutput.value(for: plain, level: 1) == 4)
        #expect(LightOutput.value(for: Self.control("b", .button, 0...0), level: 1) == nil)
        #expect(LightOutput.value(for: Self.control("ro", .boolean, 0...1, readOnly: true), level: 1) == nil)
    }

    /// A camera with a boolean `ir_cut` and an integer `led_level` (0...100); it records what was set.
    final class Camera: CameraControlling {
        let values = Mutex(["ir_cut": 0, "led_level": 0])
        let sets = Mutex(0)
        func cameraControls() throws -> [CameraControl] {
            let now = values.withLock { $0 }
            return [LightOutputTests.control("ir_cut", .boolean, 0...1, value: now["ir_cut"]!),
                    LightOutputTests.control("led_level", .integer, 0...100, value: now["led_level"]!)]
        }
        func setCameraControl(name: String, value: String) throws -> CameraControl {
            guard var control = try cameraControls().first(where: { $0.name == name }) else { throw CameraControlError("no control \(name)") }
            let parsed = try control.parse(value)
            values.withLock { $0[name] = parsed }
            sets.withLock { $0 += 1 }
            control.value = parsed
            return control
        }
    }

    @Test("camera:ir_cut and camera:led_level follow nightVision and the status light; a replugged camera gets them back within 5 s")
    func lightsOnTheCamera() throws {
        let camera = Camera()
        let lights = try LightSettings(nightVisionLed: "camera:ir_cut", statusLed: "camera:LED_level", saved: { _ in nil },
                                       camera: { camera }, logger: Logger(label: "test"), changed: { _ in })
        let controller = AgentControlTests.makeController()
        controller.addSettingsProvider(lights)
        let model = controller.settingsModel()
        #expect(model.first { $0.name == "nightVision" }?.note?.contains("camera control ir_cut") == true)
        #expect(model.first { $0.name == "statusLightEnabled" }?.note?.contains("camera control led_level") == true)

        #expect(controller.writeSettings(["nightVision": .text("on")], by: "test").refused.isEmpty)
        #expect(camera.values.withLock { $0["ir_cut"] } == 1)
        _ = controller.writeSettings(["nightVision": .text("off")], by: "test")
        #expect(camera.values.withLock { $0["ir_cut"] } == 0)

        lights.setStreaming(true)
        #expect(camera.values.withLock { $0["led_level"] } == 67, "medium is two thirds")
        _ = controller.writeSettings(["statusLightBrightness": .text("high")], by: "test")
        #expect(camera.values.withLock { $0["led_level"] } == 100)
        lights.setStreaming(false)
        #expect(camera.values.withLock { $0["led_level"] } == 0)

        // The camera comes back with its controls at their defaults: frames 5 s apart set the lights again, and a
        // control already right is not written again.
        lights.setStreaming(true)
        _ = controller.writeSettings(["nightVision": .text("on")], by: "test")
        camera.values.withLock { $0 = ["ir_cut": 0, "led_level": 0] }
        let frame = VideoFrame(width: 64, height: 36, bytesPerRow: 256, data: [UInt8](repeating: 200, count: 64 * 36 * 4), captureTime: 0)
        lights.observe(frame, now: 6_000_000_000)
        #expect(camera.values.withLock { $0 } == ["ir_cut": 1, "led_level": 100])
        let before = camera.sets.withLock { $0 }
        lights.observe(frame, now: 12_000_000_000)
        #expect(camera.sets.withLock { $0 } == before)
    }

    @Test("A control the camera does not have: the write is refused naming the ones it has; no camera open yet: kept, set once frames come")
    func missingControl() throws {
        let camera = Camera()
        let lights = try LightSettings(nightVisionLed: "camera:ir_led", statusLed: nil, saved: { _ in nil }, camera: { camera },
                                       logger: Logger(label: "test"), changed: { _ in })
        let controller = AgentControlTests.makeController()
        controller.addSettingsProvider(lights)
        let refused = controller.writeSettings(["nightVision": .text("on")], by: "test").refused
        #expect(refused.first?.reason.contains("no control ir_led") == true && refused.first?.reason.contains("ir_cut, led_level") == true,
                "\(refused)")
        let opened = Mutex<Camera?>(nil)
        let later = try LightSettings(nightVisionLed: "camera:ir_cut", statusLed: nil, saved: { _ in nil }, camera: { opened.withLock { $0 } },
                                      logger: Logger(label: "test"), changed: { _ in })
        let other = AgentControlTests.makeController()
        other.addSettingsProvider(later)
        #expect(other.writeSettings(["nightVision": .text("on")], by: "test").refused.isEmpty)
        let camera2 = Camera()
        opened.withLock { $0 = camera2 }
        let frame = VideoFrame(width: 64, height: 36, bytesPerRow: 256, data: [UInt8](repeating: 200, count: 64 * 36 * 4), captureTime: 0)
        later.observe(frame, now: 6_000_000_000)
        #expect(camera2.values.withLock { $0["ir_cut"] } == 1, "set once the camera's frames come")
    }
}
