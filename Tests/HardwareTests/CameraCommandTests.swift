import Foundation
import Testing

extension CameraHardware {
    /// The agent's camera commands on a real V4L2 device, and its refusals of cameras it cannot use.
    @Suite(
        "Commands: bad cameras, devices, controls, info", .serialized,
        .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
    struct Commands {
        /// `camo-agent run` with a camera it cannot use: it exits (non-zero, not by a signal) with a clear message.
        private func expectRefusal(
            _ arguments: [String], mentioning expected: [String], sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let scratch = try HardwareScratch("refusal")
            let result = try agentCommand(
                ["run", "--port", "0", "--allow-unpaired", "--state-dir", scratch.path + "/state", "--microphone", "test", "--no-web", "--no-rtsp"] + arguments,
                timeout: 60)
            print("HW refusal \(arguments.joined(separator: " ")): exit \(result.status), \(result.stderr.split(separator: "\n").last ?? "")")
            #expect(!result.timedOut, "\(arguments) kept running instead of refusing: \(result)", sourceLocation: sourceLocation)
            #expect(!result.signaled, "\(arguments) crashed: \(result)", sourceLocation: sourceLocation)
            #expect(result.status != 0, "\(arguments) exited 0: \(result)", sourceLocation: sourceLocation)
            for text in expected {
                #expect(result.stderr.localizedCaseInsensitiveContains(text), "\(arguments): stderr should mention '\(text)': \(result)", sourceLocation: sourceLocation)
            }
        }

        @Test("Bad cameras: a missing path, non-capture nodes, formats it cannot convert or that are not offered")
        func badCameras() throws {
            // video0: capture; video1: an output node.
            try Vivid.with("node_types=0x101 num_inputs=1 input_types=0x0 num_outputs=1") {
                try #require(FileManager.default.fileExists(atPath: "/dev/video1"), "vivid made no output node")
                try expectRefusal(["--camera", "/dev/nonexistent"], mentioning: ["/dev/nonexistent", "camo-agent devices"])
                try expectRefusal(["--camera", "/dev/null"], mentioning: ["/dev/null", "not a video capture device"])
                try expectRefusal(["--camera", "/dev/video1"], mentioning: ["/dev/video1", "not a video capture device"])
                if FileManager.default.fileExists(atPath: "/dev/media0") {
                    try expectRefusal(["--camera", "/dev/media0"], mentioning: ["/dev/media0", "not a video capture device"])
                }

                // Formats vivid offers that `devices` marks as not convertible.
                let listing = try agentCommand(["devices", "--json"])
                let devices = try #require((try parseJSON(listing.stdout) as? [String: Any])?["cameras"] as? [[String: Any]], "devices --json: \(listing)")
                let camera = try #require(devices.first { ($0["identity"] as? [String: Any])?["path"] as? String == "/dev/video0" }, "\(listing)")
                let formats = try #require(camera["formats"] as? [[String: Any]], "\(listing)")
                let unconvertible = Set(formats.filter { $0["convertible"] as? Bool == false }.compactMap { $0["fourcc"] as? String })
                for fourcc in ["HSV3", "Y16 ", "NV24"] {
                    #expect(unconvertible.contains(fourcc), "devices should list \(fourcc) as not convertible; unconvertible: \(unconvertible.sorted())")
                    try expectRefusal(["--camera", "/dev/video0", "--camera-format", fourcc], mentioning: [fourcc.trimmingCharacters(in: .whitespaces), "convert"])
                }
                // A format the camera does not offer at all.
                try expectRefusal(["--camera", "/dev/video0", "--camera-format", "MJPG"], mentioning: ["MJPG", "does not offer"])
            }
        }

        @Test("A multi-planar device through libv4l2: formats with one buffer per plane (NM12, YM12) are refused clearly, and the device stays usable")
        func multiBufferFormatsRefused() throws {
            try Vivid.with("multiplanar=2 " + Hardware.webcam) {
                for fourcc in ["NM12", "YM12"] {
                    try expectRefusal(["--camera", "/dev/video0", "--camera-format", fourcc], mentioning: [fourcc, "does not offer"])
                }
                // Nothing was left set that libv4l2 cannot read back: devices still lists the camera with YUYV.
                let listing = try agentCommand(["devices", "--json"])
                #expect(listing.status == 0 && listing.stdout.contains("\"YUYV\""), "devices --json after the refusals: \(listing)")
            }
        }

        @Test("devices lists vivid; controls read and set brightness directly and through the running agent; info names the camera")
        func devicesControlsInfo() throws {
            try Vivid.with(Hardware.webcam) {
                // devices --json: /dev/video0, card vivid, YUYV with 640x360 at 30 fps.
                let listing = try agentCommand(["devices", "--json"])
                #expect(listing.status == 0, "devices --json: \(listing)")
                let devices = try #require((try parseJSON(listing.stdout) as? [String: Any])?["cameras"] as? [[String: Any]], "devices --json: \(listing)")
                let camera = try #require(devices.first { ($0["identity"] as? [String: Any])?["path"] as? String == "/dev/video0" },
                                          "no /dev/video0 in \(tail(listing.stdout))")
                let identity = camera["identity"] as? [String: Any] ?? [:]
                #expect(identity["card"] as? String == "vivid" && identity["driver"] as? String == "vivid", "identity \(identity)")
                let formats = camera["formats"] as? [[String: Any]] ?? []
                let yuyv = try #require(formats.first { $0["fourcc"] as? String == "YUYV" }, "no YUYV in \(formats.compactMap { $0["fourcc"] })")
                #expect(yuyv["convertible"] as? Bool == true)
                let sizes = yuyv["sizes"] as? [String] ?? []
                let size640 = sizes.first { $0.hasPrefix("640x360 @") } ?? ""
                #expect(size640.split(separator: " ").contains("30"), "YUYV sizes: \(sizes)")
                // Every format it claims to convert is covered by the capture tests (in the VM or, for a byte order of a
                // path run here, by the host's PixelConverterTests).
                let convertible = Set(formats.filter { $0["convertible"] as? Bool == true }.compactMap { $0["fourcc"] as? String })
                let tested = Set(CameraHardware.Capture.claimedFormats + CameraHardware.Capture.otherConvertibleFormats
                                 + CameraHardware.Capture.sameWayAsAnother)
                #expect(convertible.subtracting(tested).isEmpty, "convertible formats not covered by the capture tests: \(convertible.subtracting(tested).sorted())")

                // Controls on the device directly.
                let set = try agentCommand(["controls", "--camera", "/dev/video0", "--set", "brightness=200", "--json"])
                #expect(set.status == 0, "controls --set: \(set)")
                #expect(try brightness(in: set.stdout) == 200, "controls --set printed \(tail(set.stdout, 600))")
                let list = try agentCommand(["controls", "--camera", "/dev/video0", "--json"])
                #expect(try brightness(in: list.stdout) == 200, "controls listing: \(tail(list.stdout, 600))")
                #expect(try Vivid.ctl("-C brightness").contains("brightness: 200"), "v4l2-ctl disagrees")

                // Through the running agent's control socket.
                let scratch = try HardwareScratch("controls")
                let agent = try HardwareAgent(scratch)
                defer { agent.stop() }
                let viaAgent = try agentCommand(["controls", "--state-dir", agent.stateDir, "--set", "brightness=90", "--json"])
                #expect(viaAgent.status == 0, "controls --set through the agent: \(viaAgent)")
                #expect(try brightness(in: viaAgent.stdout) == 90, "\(tail(viaAgent.stdout, 600))")
                let listed = try agentCommand(["controls", "--state-dir", agent.stateDir, "--json"])
                #expect(try brightness(in: listed.stdout) == 90, "controls through the agent: \(tail(listed.stdout, 600))")
                #expect(try Vivid.ctl("-C brightness").contains("brightness: 90"), "v4l2-ctl does not see the agent's change")

                // info names the camera in use.
                let info = try agentCommand(["info", "--json", "--state-dir", agent.stateDir])
                #expect(info.status == 0, "info: \(info)")
                let report = try #require(try parseJSON(info.stdout) as? [String: Any], "info: \(info)")
                #expect(report["agentRunning"] as? Bool == true, "info: \(info.stdout)")
                #expect((report["cameraInUse"] as? String)?.contains("vivid") == true, "info: \(info.stdout)")
                #expect((report["camera"] as? [String: Any])?["path"] as? String == "/dev/video0", "info: \(info.stdout)")
                let status = try agentCommand(["status", "--json", "--state-dir", agent.stateDir])
                #expect(status.status == 0, "status: \(status)")
                print("HW commands: info \(info.stdout.replacingOccurrences(of: "\n", with: " "))")
            }
        }

        private func brightness(in json: String) throws -> Int? {
            let controls = try parseJSON(json) as? [[String: Any]] ?? []
            return controls.first { $0["name"] as? String == "brightness" }?["value"] as? Int
        }
    }
}
