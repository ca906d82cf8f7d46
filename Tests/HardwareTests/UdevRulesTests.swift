import Foundation
import Testing

// The udev rules against real kernel devices (vivid's camera, snd-aloop's sound card). These tests install camo-agent
// into the system for real (user, group, rules, units), load kernel modules and run systemd-udevd, so they run only
// inside the throw-away VM of scripts/vm-test (which sets CAMO_HARDWARE=1; as root, and every write vanishes with
// the VM). Elsewhere they are skipped, and the skip shows in the test output with the reason below.
@Suite(
    "udev rules on real devices (VM)",
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["CAMO_HARDWARE"] == "1",
        "needs the VM with kernel devices: run scripts/vm-test --filter UdevRulesTests (it sets CAMO_HARDWARE=1)")
)
struct UdevRulesTests {
    @Test("udevadm test: a vivid capture node gets the group ACL, the systemd tag and the rescan unit")
    func udevadmTestOnTheCamera() throws {
        try UdevBench.install()
        defer { UdevBench.uninstall() }
        try UdevBench.modprobe("vivid", "node_types=0x1", "num_inputs=1", "input_types=0x0")
        defer { UdevBench.removeModule("vivid") }

        let test = try UdevBench.sh("udevadm test /sys/class/video4linux/video0 2>&1")
        #expect(test.status == 0, "udevadm test failed:\n\(test.output)")
        let lines = test.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("SYSTEMD_WANTS=camo-agent-rescan@.service"), "udevadm test:\n\(test.output)")
        #expect(lines.contains { $0.hasPrefix("CURRENT_TAGS=") && $0.contains(":systemd:") }, "udevadm test:\n\(test.output)")
        #expect(lines.contains("run: '/usr/bin/setfacl -m g:camo-agent:rw /dev/video0'"), "udevadm test:\n\(test.output)")
        // The node keeps Debian's owner, group and mode (udevadm test applies those).
        #expect(try UdevBench.ownership("/dev/video0") == "root video 660")
    }

    @Test("systemd-udevd: capture nodes get the ACL and the rescan, outputs and playback get nothing, on add and replug")
    func udevdOnCameraAndSoundCard() throws {
        try UdevBench.install()
        defer { UdevBench.uninstall() }
        // A capture node (video0) and an output node (video1).
        try UdevBench.modprobe("vivid", "node_types=0x101", "num_inputs=1", "input_types=0x0", "num_outputs=1")
        defer { UdevBench.removeModule("vivid") }
        let haveSound = UdevBench.tryModprobe("snd-aloop")
        defer { if haveSound { UdevBench.removeModule("snd_aloop") } }
        if !haveSound { print("UdevRulesTests: snd-aloop cannot be loaded here; the sound checks are left out") }

        try UdevBench.startUdevd()
        defer { UdevBench.stopUdevd() }

        // Camera: the group ACL next to Debian's video group; the systemd tag and the rescan unit.
        try UdevBench.expectAccess("/dev/video0", group: "video", granted: true)
        try UdevBench.expectAccess("/dev/video1", group: "video", granted: false)
        let camera = try UdevBench.info("/dev/video0")
        #expect(camera.contains("E: SYSTEMD_WANTS=camo-agent-rescan@.service"), "udevadm info /dev/video0:\n\(camera)")
        #expect(camera.split(separator: "\n").contains { $0.hasPrefix("E: CURRENT_TAGS=") && $0.contains(":systemd:") },
                "udevadm info /dev/video0:\n\(camera)")
        let output = try UdevBench.info("/dev/video1")
        #expect(!output.contains("camo-agent-rescan"), "an output node must not start a rescan:\n\(output)")

        // The service user can open the camera; a user outside the video group and without the ACL cannot.
        let asAgent = try UdevBench.sh("setpriv --reuid=camo-agent --regid=camo-agent --init-groups v4l2-ctl -d /dev/video0 --info 2>&1")
        #expect(asAgent.status == 0, "camo-agent cannot open /dev/video0:\n\(asAgent.output)")
        let asNobody = try UdevBench.sh("setpriv --reuid=nobody --regid=nogroup --clear-groups v4l2-ctl -d /dev/video0 --info 2>&1")
        #expect(asNobody.status != 0, "nobody should not open /dev/video0 (the ACL must be the only way in)")

        // Replug (what a USB camera does): the new node gets the ACL again.
        try UdevBench.sh("echo vivid.0 > /sys/bus/platform/drivers/vivid/unbind && echo vivid.0 > /sys/bus/platform/drivers/vivid/bind && udevadm settle -t 30")
            .expectSuccess("replugging vivid")
        try UdevBench.expectAccess("/dev/video0", group: "video", granted: true)

        guard haveSound else { return }
        // Sound: the control node and the capture PCMs, never the playback PCMs.
        try UdevBench.expectAccess("/dev/snd/controlC0", group: "audio", granted: true)
        try UdevBench.expectAccess("/dev/snd/pcmC0D1c", group: "audio", granted: true)
        try UdevBench.expectAccess("/dev/snd/pcmC0D0p", group: "audio", granted: false)
        let pcm = try UdevBench.info("/dev/snd/pcmC0D1c")
        #expect(pcm.contains("E: SYSTEMD_WANTS=camo-agent-rescan@.service"), "udevadm info pcmC0D1c:\n\(pcm)")
        let record = try UdevBench.sh(
            "setpriv --reuid=camo-agent --regid=camo-agent --init-groups arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -d 1 /dev/null 2>&1")
        #expect(record.status == 0, "camo-agent cannot record from the loopback card:\n\(record.output)")
        let play = try UdevBench.sh(
            "head -c 19200 /dev/zero | setpriv --reuid=camo-agent --regid=camo-agent --init-groups aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 2 2>&1")
        #expect(play.status != 0, "camo-agent must not be able to play sound")
    }

    @Test("install.sh --uninstall takes the group's ACL entries off the present devices")
    func uninstallRemovesTheACLs() throws {
        try UdevBench.install()
        try UdevBench.modprobe("vivid", "node_types=0x1", "num_inputs=1", "input_types=0x0")
        defer { UdevBench.removeModule("vivid") }
        try UdevBench.startUdevd()
        defer { UdevBench.stopUdevd() }
        try UdevBench.expectAccess("/dev/video0", group: "video", granted: true)
        UdevBench.uninstall()
        try UdevBench.expectAccess("/dev/video0", group: "video", granted: false)
        #expect(!FileManager.default.fileExists(atPath: "/etc/udev/rules.d/60-camo-agent.rules"))
    }
}

/// Helpers for UdevRulesTests only (the other hardware tests have their own).
enum UdevBench {
    struct Result {
        let status: Int32
        let output: String

        func expectSuccess(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(status == 0, "\(what) failed:\n\(output)", sourceLocation: sourceLocation)
        }
    }

    static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Runs a shell command line as root in the VM and returns its stdout. SYSTEMD_IGNORE_CHROOT: the VM runs the
    /// tests in a chroot of the host's root, where udevadm would otherwise ignore control requests. The output goes
    /// through a file, not a pipe, so a daemon started here cannot hold the reading end open.
    @discardableResult
    static func sh(_ command: String) throws -> Result {
        let outputPath = NSTemporaryDirectory() + "udev-rules-test-\(UUID().uuidString).out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
              let output = FileHandle(forWritingAtPath: outputPath) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outputPath])
        }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["SYSTEMD_IGNORE_CHROOT"] = "1"
        process.environment = environment
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try output.close()
        let data = FileManager.default.contents(atPath: outputPath) ?? Data()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Installs camo-agent for real (only ever inside scripts/vm-run's VM, which sets VM_RUN=1).
    static func install() throws {
        try #require(ProcessInfo.processInfo.environment["VM_RUN"] == "1",
                     "refusing to install camo-agent into a real system: these tests run only under scripts/vm-test")
        for (tool, package) in ["udevadm": "udev", "setfacl": "acl", "getfacl": "acl", "v4l2-ctl": "v4l-utils", "arecord": "alsa-utils"] {
            try #require(try sh("command -v \(tool)").status == 0, "\(tool) not found: install the Debian package \(package)")
        }
        let binaryFolder = try #require(ProcessInfo.processInfo.environment["CAMO_BIN_DIR"], "CAMO_BIN_DIR is not set (scripts/vm-test sets it)")
        let result = try sh("'\(packageRoot)/udev/install.sh' --no-enable --binary '\(binaryFolder)/camo-agent' 2>&1")
        try #require(result.status == 0, "install.sh failed:\n\(result.output)")
    }

    static func uninstall() {
        _ = try? sh("'\(packageRoot)/udev/install.sh' --uninstall 2>&1")
    }

    /// Loads a module with parameters, unloading it first if an earlier test left it loaded with others.
    static func modprobe(_ module: String, _ parameters: String...) throws {
        removeModule(module)
        let result = try sh("modprobe \(module) \(parameters.joined(separator: " ")) 2>&1")
        try #require(result.status == 0, "modprobe \(module) failed:\n\(result.output)")
        _ = try sh("udevadm settle -t 10 2>/dev/null")
    }

    static func tryModprobe(_ module: String) -> Bool {
        removeModule(module)
        return (try? sh("modprobe \(module) 2>&1"))?.status == 0
    }

    static func removeModule(_ module: String) {
        _ = try? sh("grep -q '^\(module.replacingOccurrences(of: "-", with: "_")) ' /proc/modules && rmmod \(module) 2>&1")
    }

    /// systemd-udevd in the background, then an "add" for every video and sound device, as at boot. The daemon
    /// starts with no descriptor beyond stdio: Foundation's Process learns that a child ended when an inherited
    /// socket closes, and a daemon holding it would keep waitUntilExit() waiting forever.
    static func startUdevd() throws {
        stopUdevd()
        let start = try sh("""
            bash -c 'for fd in /proc/$$/fd/*; do n=${fd##*/}; if ((n > 2)); then eval "exec $n>&-"; fi; done 2>/dev/null
                     exec /lib/systemd/systemd-udevd --daemon' 2>&1 && \
            udevadm trigger --action=add --subsystem-match=video4linux --subsystem-match=sound 2>&1 && \
            udevadm settle -t 30 2>&1
            """)
        try #require(start.status == 0, "systemd-udevd did not start:\n\(start.output)")
    }

    static func stopUdevd() {
        _ = try? sh("[ -S /run/udev/control ] && udevadm control --exit 2>&1")
    }

    static func info(_ node: String) throws -> String {
        let result = try sh("udevadm info '\(node)' 2>&1")
        try #require(result.status == 0, "udevadm info \(node) failed:\n\(result.output)")
        return result.output
    }

    /// "owner group mode" of a node, e.g. "root video 660".
    static func ownership(_ node: String) throws -> String {
        let result = try sh("stat -c '%U %G %a' '\(node)'")
        try #require(result.status == 0, "\(node) is missing")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Checks a node's ACL: Debian's owner, group and mode stay, and the camo-agent entry is there or not.
    static func expectAccess(_ node: String, group: String, granted: Bool,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try ownership(node) == "root \(group) 660", "\(node) must keep root:\(group) 0660", sourceLocation: sourceLocation)
        let acl = try sh("getfacl -p '\(node)' 2>&1")
        try #require(acl.status == 0, "getfacl \(node) failed:\n\(acl.output)", sourceLocation: sourceLocation)
        let entries = acl.output.split(separator: "\n").map(String.init)
        #expect(entries.contains("group:camo-agent:rw-") == granted,
                "\(node): camo-agent ACL should be \(granted ? "present" : "absent"):\n\(acl.output)", sourceLocation: sourceLocation)
        if granted {
            #expect(entries.contains("mask::rw-"), "\(node): the ACL mask must allow rw:\n\(acl.output)", sourceLocation: sourceLocation)
        }
    }
}
