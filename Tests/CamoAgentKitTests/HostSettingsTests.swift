@testable import CamoAgentKit
import CamoMedia
import CamoProducerKit
import CamoWire
import Foundation
import Logging
import Synchronization
import Testing

/// The agent's settings providers: the lights on sysfs LEDs (a directory shaped like /sys/class/leds here; the real
/// LED class is exercised by SysfsLEDHardwareTests in the VM) and the power source.
@Suite("Host settings: night vision, the status light and the power source")
struct HostSettingsTests {
    static func tree() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("leds-\(UUID().uuidString)").path
        for name in ["ir", "status"] {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            try "0\n".write(toFile: root + "/\(name)/brightness", atomically: true, encoding: .utf8)
            try "255\n".write(toFile: root + "/\(name)/max_brightness", atomically: true, encoding: .utf8)
            try "[none] timer\n".write(toFile: root + "/\(name)/trigger", atomically: true, encoding: .utf8)
        }
        return root
    }

    static func brightness(_ root: String, _ name: String) -> Int {
        Int(((try? String(contentsOfFile: root + "/\(name)/brightness", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    static func frame(luma: UInt8) -> VideoFrame {
        VideoFrame(width: 64, height: 36, bytesPerRow: 256, data: [UInt8](repeating: luma, count: 64 * 36 * 4), captureTime: 0)
    }

    @Test func nightVisionOnOffAndAutoFollowTheSceneAndTellTheStudios() throws {
        let root = try Self.tree()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let told = Mutex<[[String]]>([])
        let lights = try LightSettings(nightVisionLed: "ir", statusLed: "status", root: root, saved: { _ in nil },
                                       logger: Logger(label: "test"), changed: { names in told.withLock { $0.append(names) } })
        let controller = AgentControlTests.makeController()
        controller.addSettingsProvider(lights)
        let model = controller.settingsModel()
        #expect(model.first { $0.name == "nightVision" }?.supported == true)
        #expect(model.first { $0.name == "statusLightBrightness" }?.choices == ["low", "medium", "high", "auto"])

        #expect(controller.writeSettings(["nightVision": .text("on")], by: "test").refused.isEmpty)
        #expect(Self.brightness(root, "ir") == 255)
        #expect(controller.savedSetting("nightVision") == .text("on"))
        _ = controller.writeSettings(["nightVision": .text("off")], by: "test")
        #expect(Self.brightness(root, "ir") == 0)

        // Auto: a dark scene for more than 2 s switches it on (measured twice a second), and the studios are told.
        _ = controller.writeSettings(["nightVision": .text("auto")], by: "test")
        for step in 0...6 { lights.observe(Self.frame(luma: 10), now: UInt64(step) * 500_000_000) }
        #expect(Self.brightness(root, "ir") == 255)
        #expect(told.withLock { $0 }.first?.contains("nightVision") == true)
        for step in 7...20 { lights.observe(Self.frame(luma: 200), now: UInt64(step) * 500_000_000) }
        #expect(Self.brightness(root, "ir") == 0)

        // The status light: off until a studio receives the picture, then at its level.
        #expect(Self.brightness(root, "status") == 0)
        lights.setStreaming(true)
        #expect(Self.brightness(root, "status") == 170)
        _ = controller.writeSettings(["statusLightBrightness": .text("low")], by: "test")
        #expect(Self.brightness(root, "status") == 85)
        _ = controller.writeSettings(["statusLightEnabled": .bool(false)], by: "test")
        #expect(Self.brightness(root, "status") == 0)
    }

    @Test func aMissingLEDIsRefusedNamingTheOnesThereAre() throws {
        let root = try Self.tree()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: (any Error).self) {
            _ = try LightSettings(nightVisionLed: "nope", statusLed: nil, root: root, saved: { _ in nil }, logger: Logger(label: "t"), changed: { _ in })
        }
        do {
            _ = try LightSettings(nightVisionLed: "nope", statusLed: nil, root: root, saved: { _ in nil }, logger: Logger(label: "t"), changed: { _ in })
        } catch {
            #expect("\(error)".contains("ir") && "\(error)".contains("status"), "\(error)")
        }
    }

    @Test func thePowerSourceIsReadOnlyFacts() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("power-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/BAT0", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (file, text) in [("type", "Battery"), ("present", "1"), ("capacity", "15"), ("status", "Discharging"), ("scope", "System")] {
            try (text + "\n").write(toFile: root + "/BAT0/" + file, atomically: true, encoding: .utf8)
        }
        let descriptor = try #require(PowerSourceSettings(root: root).settingDescriptors().first)
        guard case .facts(let facts)? = descriptor.value else {
            Issue.record("no facts: \(descriptor)")
            return
        }
        #expect(facts["source"] == "battery" && facts["batChargeLevel"] == "warning" && facts["chargingState"] == "discharging", "\(facts)")
        #expect(!descriptor.writable)
    }
}
