import CamoStudioKit
import Foundation
import Testing

extension CameraHardware {
    /// The settings model against vivid, driven from a studio (`camo-studio settings`, protocol 1.2): the camera's
    /// controls are listed, a control changes the picture the studio receives, and the value comes back after the
    /// camera is unplugged and plugged in again.
    @Suite(
        "Settings: vivid's controls from a studio", .serialized,
        .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
    struct Settings {
        /// The mean BT.601 luma of the last frame of DIR/video.bgra (tightly packed BGRA frames of `width`x`height`).
        static func lastFrameLuma(_ studio: HardwareStudio, width: Int, height: Int) throws -> Double {
            let data = try Data(contentsOf: URL(fileURLWithPath: studio.out + "/video.bgra"))
            let frameBytes = width * height * 4
            guard data.count >= frameBytes else { throw HardwareError("video.bgra holds \(data.count) bytes, less than a frame") }
            let start = (data.count / frameBytes - 1) * frameBytes
            var sum = 0.0
            data.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                var index = start
                while index < start + frameBytes {
                    sum += 0.114 * Double(bytes[index]) + 0.587 * Double(bytes[index + 1]) + 0.299 * Double(bytes[index + 2])
                    index += 4 * 7  // every 7th pixel is plenty
                }
            }
            return sum / Double(frameBytes / (4 * 7))
        }

        static func studioSettings(_ port: Int, _ arguments: [String]) throws -> CommandResult {
            try runCommand(try Hardware.binary("camo-studio"), ["settings", "--connect", "127.0.0.1:\(port)"] + arguments, timeout: 90)
        }

        @Test("Through a studio: vivid's controls are listed, brightness at its maximum raises the received picture's luma, unbind and bind restore it; the status light is unsupported and a write says so")
        func brightnessFromTheStudio() throws {
            try Vivid.with(Hardware.webcam) {
                let scratch = try HardwareScratch("settings")
                let agent = try HardwareAgent(scratch)
                defer { agent.stop() }

                let listing = try Self.studioSettings(agent.port, ["--json"])
                try #require(listing.status == 0, "camo-studio settings --json: \(listing)")
                let model = try #require(try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [[String: Any]])
                let brightness = try #require(model.first { $0["name"] as? String == "brightness" }, "no brightness in \(model.compactMap { $0["name"] })")
                let maximum = try #require(brightness["maximum"] as? Int)
                let initial = brightness["value"] as? Int ?? -1
                print("HW settings: vivid lists \(model.filter { $0["group"] as? String == "camera" }.count) controls; brightness \(initial) of \(brightness["minimum"] ?? "?")...\(maximum)")
                #expect(maximum > initial && initial >= 0, "\(brightness)")
                let light = try #require(model.first { $0["name"] as? String == "statusLightEnabled" })
                #expect(light["supported"] as? Bool == false, "\(light)")

                let before = try HardwareStudio(scratch, port: agent.port, label: "before", seconds: 2, size: "320x180", codec: "jpeg", videoFile: true)
                _ = try before.summary()
                let lumaBefore = try Self.lastFrameLuma(before, width: 320, height: 180)

                let set = try Self.studioSettings(agent.port, ["brightness", String(maximum)])
                #expect(set.status == 0 && set.stdout.contains("brightness = \(maximum)"), "\(set)")
                let after = try HardwareStudio(scratch, port: agent.port, label: "after", seconds: 2, size: "320x180", codec: "jpeg", videoFile: true)
                _ = try after.summary()
                let lumaAfter = try Self.lastFrameLuma(after, width: 320, height: 180)
                print("HW settings: mean luma \(lumaBefore) at brightness \(initial), \(lumaAfter) at \(maximum)")
                #expect(lumaAfter > lumaBefore + 20, "brightness \(maximum) should brighten the received picture: \(lumaBefore) → \(lumaAfter)")

                // Unplugged and back: once the camera streams again, the agent writes the saved value to it again.
                try Vivid.unplug()
                Thread.sleep(forTimeInterval: 2)
                try Vivid.replug()
                let replugged = try HardwareStudio(scratch, port: agent.port, label: "replugged", seconds: 3, size: "320x180", codec: "jpeg", videoFile: true)
                _ = try replugged.summary()
                #expect(agent.log.contains("Restored the camera's saved settings"), "no restore after the replug:\n\(tail(agent.log))")
                let readBack = try Vivid.ctl("--get-ctrl brightness")
                #expect(readBack.contains("\(maximum)"), "vivid's brightness after the replug: \(readBack)")
                let lumaReplugged = try Self.lastFrameLuma(replugged, width: 320, height: 180)
                print("HW settings: mean luma \(lumaReplugged) after the replug")
                #expect(lumaReplugged > lumaBefore + 20, "after the replug: \(lumaReplugged), before any change \(lumaBefore)")

                // Out of range and unsupported: clear refusals.
                let tooBright = try Self.studioSettings(agent.port, ["brightness", String(maximum + 1)])
                #expect(tooBright.status != 0 && tooBright.stderr.contains("\(maximum)"), "\(tooBright)")
                let lightWrite = try Self.studioSettings(agent.port, ["statusLightEnabled", "false"])
                #expect(lightWrite.status != 0 && lightWrite.stderr.contains("not supported"), "\(lightWrite)")
            }
        }
    }
}
