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

        /// V4L2 has no standard control for an infrared light or a status LED; a camera that has one names it in its
        /// own way (a UVC camera's `led1_mode` through uvcdynctrl). vivid's test controls stand in: `boolean` for the
        /// infrared light and `menu` (entries 1, 3 and 4, none named off or on: off is the first, on the last) for the
        /// status light.
        @Test("Lights on the camera's controls (camera:boolean, camera:menu): nightVision from a studio sets vivid's control; the status light follows a receiving studio")
        func lightsOnCameraControls() throws {
            try Vivid.with(Hardware.webcam) {
                let scratch = try HardwareScratch("lights")
                let agent = try HardwareAgent(scratch, arguments: ["--night-vision-led", "camera:boolean", "--status-led", "camera:menu"])
                defer { agent.stop() }
                let on = try Self.studioSettings(agent.port, ["nightVision", "on"])
                #expect(on.status == 0, "\(on)")
                let lit = try Vivid.ctl("--get-ctrl boolean")
                let off = try Self.studioSettings(agent.port, ["nightVision", "off"])
                #expect(off.status == 0, "\(off)")
                let dark = try Vivid.ctl("--get-ctrl boolean")
                print("HW lights: nightVision on → \(lit.trimmingCharacters(in: .whitespacesAndNewlines)), off → \(dark.trimmingCharacters(in: .whitespacesAndNewlines))")
                #expect(lit.contains("boolean: 1") && dark.contains("boolean: 0"), "on: \(lit), off: \(dark)")
                let listing = try Self.studioSettings(agent.port, ["--json"])
                let model = (try? JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [[String: Any]]) ?? []
                let note = model.first { $0["name"] as? String == "statusLightEnabled" }?["note"] as? String ?? ""
                #expect(note.contains("camera control menu"), "the status light's note: \(note)")

                let idle = try Vivid.ctl("--get-ctrl menu")
                let studio = try HardwareStudio(scratch, port: agent.port, label: "watching", seconds: 4, size: "320x180", codec: "jpeg")
                let watched = Hardware.wait(seconds: 15) { (try? Vivid.ctl("--get-ctrl menu"))?.contains("menu: 4") == true }
                _ = try studio.summary()
                let after = Hardware.wait(seconds: 15) { (try? Vivid.ctl("--get-ctrl menu"))?.contains("menu: 1") == true }
                print("HW lights: the status light (vivid's menu): \(idle.trimmingCharacters(in: .whitespacesAndNewlines)) with no studio, 4 while one received: \(watched), 1 after: \(after)")
                #expect(idle.contains("menu: 1") && watched && after, "menu before: \(idle); lit while watched: \(watched); off after: \(after)\n\(tail(agent.log))")
            }
        }
    }
}
