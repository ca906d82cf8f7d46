import CamoTestSupport
import CamoVirtualDevices
import Logging
import Testing

/// `camo-studio setup` against a model of the machine: what it loads, what it reports, and each error's sentence.
@Suite("loopback setup")
struct LoopbackSetupTests {
    let host = FakeLoopbackHost()

    /// Runs setup on the fake host, returning the steps it reported.
    func run(_ options: LoopbackSetupOptions = LoopbackSetupOptions(), dryRun: Bool = false) throws(LoopbackSetupError) -> [SetupStep] {
        var steps: [SetupStep] = []
        try LoopbackSetup(options: options, host: host, logger: LogRecorder().logger()).run(dryRun: dryRun) { steps.append($0) }
        return steps
    }

    /// The error setup throws, or nil.
    func failure(_ options: LoopbackSetupOptions = LoopbackSetupOptions()) -> LoopbackSetupError? {
        do {
            _ = try run(options)
            return nil
        } catch {
            return error
        }
    }

    var modprobes: [[String]] { host.commands.filter { $0.first == "modprobe" } }

    @Test("on a clean machine it loads v4l2loopback with exclusive_caps=1, video_nr and card_label, then snd-aloop as CamoMic")
    func loadsBothModules() throws {
        let steps = try run(LoopbackSetupOptions(videoNumber: 10, label: "Camo: desk"))
        #expect(modprobes == [
            ["modprobe", "v4l2loopback", "exclusive_caps=1", "video_nr=10", "card_label=Camo: desk"],
            ["modprobe", "snd-aloop", "index=-2", "id=CamoMic", "pcm_substreams=2"],
        ])
        let device = VideoNode(number: 10, name: "Camo: desk", isLoopback: true)
        let card = LoopbackSoundCard(index: 1, id: "CamoMic")
        #expect(steps == [.ran(modprobes[0]), .cameraReady(device), .ran(modprobes[1]), .microphoneReady(card)])
        #expect(steps.allSatisfy { !$0.isWarning })
        #expect(steps[0].description == "ran: modprobe v4l2loopback exclusive_caps=1 video_nr=10 card_label='Camo: desk'")
        #expect(steps[1].description.contains("/dev/video10 \"Camo: desk\""))
        #expect(steps[3].description.contains("hw:CamoMic,0,0") && steps[3].description.contains("programs record from hw:CamoMic,1,0"))
    }

    @Test("--no-microphone loads only v4l2loopback and says the microphone was skipped")
    func noMicrophone() throws {
        let steps = try run(LoopbackSetupOptions(videoNumber: 12, microphone: false))
        #expect(modprobes == [["modprobe", "v4l2loopback", "exclusive_caps=1", "video_nr=12", "card_label=Camo"]])
        #expect(steps.last == .microphoneSkipped)
    }

    @Test("--dry-run reports the commands, runs nothing and needs neither root nor the modules")
    func dryRunRunsNothing() throws {
        host.update {
            $0.root = false
            $0.installed = []
        }
        let steps = try run(LoopbackSetupOptions(label: "Camo: it's mine"), dryRun: true)
        #expect(host.commands.isEmpty)
        #expect(steps.map(\.description) == [
            "modprobe v4l2loopback exclusive_caps=1 video_nr=10 card_label='Camo: it'\\''s mine'",
            "modprobe snd-aloop index=-2 id=CamoMic pcm_substreams=2",
        ])
    }

    @Test("a loaded v4l2loopback with our device is reported with its parameters and left loaded")
    func alreadyLoadedIsReported() throws {
        host.loadLoopback([(10, true, "Camo")])
        host.loadAloop(id: "CamoMic", index: 2)
        let steps = try run()
        #expect(modprobes.isEmpty, "nothing is loaded or unloaded")
        guard case .cameraAlreadyLoaded(let state, let device) = steps.first else {
            Issue.record("first step: \(steps)")
            return
        }
        #expect(device == VideoNode(number: 10, name: "Camo", isLoopback: true))
        #expect(state.exclusiveCaps(number: 10) == true)
        #expect(state.requestedNumbers == [10, -1, -1, -1, -1, -1, -1, -1])
        #expect(steps[0].description.contains("exclusive_caps=Y,N,N,N,N,N,N,N"))
        #expect(steps[0].description.contains("video_nr=10,-1"))
        #expect(steps[0].description.contains("/dev/video10 \"Camo\" is one of its devices"))
        #expect(steps.dropFirst().first == .microphoneAlreadyLoaded(LoopbackSoundCard(index: 2, id: "CamoMic")))
        #expect(steps.allSatisfy { !$0.isWarning })
    }

    @Test("already loaded needs no root: only reading sysfs")
    func alreadyLoadedNeedsNoRoot() throws {
        host.update { $0.root = false }
        host.loadLoopback([(10, true, "Camo")])
        host.loadAloop(id: "CamoMic", index: 1)
        let steps = try run()
        #expect(steps.count == 2)
    }

    @Test("loaded with exclusive_caps off: Chrome will not list it, and it says how to reload")
    func exclusiveCapsOffIsAWarning() throws {
        host.loadLoopback([(10, false, "Camo")])
        let steps = try run(LoopbackSetupOptions(microphone: false))
        #expect(modprobes.isEmpty, "a module some program may use is never unloaded")
        let warning = try #require(steps.first { $0.isWarning })
        #expect(warning == .exclusiveCapsOff(VideoNode(number: 10, name: "Camo", isLoopback: true)))
        #expect(warning.description.contains("Chrome will not list it"))
        #expect(warning.description.contains("sudo modprobe -r v4l2loopback"))
        #expect(warning.description.contains("camo-studio setup again"))
    }

    @Test("a loaded device with another label is ours, with a warning naming both labels")
    func otherLabelIsAWarning() throws {
        host.loadLoopback([(10, true, "OBS Virtual Camera")])
        let steps = try run(LoopbackSetupOptions(label: "Camo", microphone: false))
        let warning = try #require(steps.first { $0.isWarning })
        #expect(warning.description.contains("\"OBS Virtual Camera\", not \"Camo\""))
    }

    @Test("exclusive_caps of a device whose number the kernel chose: known when all devices were made alike")
    func exclusiveCapsOfAChosenNumber() {
        let state = LoopbackModuleState(
            parameters: [:], requestedNumbers: Array(repeating: -1, count: 8), exclusiveCaps: [true, true] + Array(repeating: false, count: 6),
            devices: [VideoNode(number: 3, name: "a", isLoopback: true), VideoNode(number: 4, name: "b", isLoopback: true)])
        #expect(state.exclusiveCaps(number: 4) == true)
        var mixed = state
        mixed.exclusiveCaps[1] = false
        #expect(mixed.exclusiveCaps(number: 4) == nil)
        #expect(mixed.deviceLines == ["/dev/video3 \"a\"", "/dev/video4 \"b\""])
        #expect(state.deviceLines == ["/dev/video3 \"a\" (exclusive_caps on)", "/dev/video4 \"b\" (exclusive_caps on)"])
    }

    @Test("v4l2loopback not installed: apt install v4l2loopback-dkms")
    func moduleMissing() {
        host.update { $0.installed = ["snd-aloop"] }
        let error = failure()
        #expect(error == .cameraModuleMissing(kernel: "6.1.0-56-amd64", headersInstalled: true))
        #expect(error?.description.contains("sudo apt install v4l2loopback-dkms") == true)
        #expect(error?.description.contains("linux-headers") == false)
        #expect(modprobes.isEmpty)
    }

    @Test("v4l2loopback not installed and the kernel has no headers: install linux-headers-$(uname -r) too")
    func moduleMissingWithoutHeaders() {
        host.update {
            $0.installed = []
            $0.files["/lib/modules/6.1.0-56-amd64/build/Makefile"] = nil
        }
        let error = failure()
        #expect(error == .cameraModuleMissing(kernel: "6.1.0-56-amd64", headersInstalled: false))
        #expect(error?.description.contains("sudo apt install linux-headers-6.1.0-56-amd64") == true)
        #expect(error?.description.contains("v4l2loopback-dkms") == true)
    }

    @Test("snd-aloop not installed: says how to get it or to run with --no-microphone")
    func microphoneModuleMissing() {
        host.update { $0.installed = ["v4l2loopback"] }
        let error = failure()
        #expect(error == .microphoneModuleMissing(kernel: "6.1.0-56-amd64"))
        #expect(error?.description.contains("--no-microphone") == true)
        #expect(modprobes.count == 1, "the camera was still loaded")
    }

    @Test("Secure Boot refusing the unsigned module: says how to enrol the DKMS key", arguments: [
        "modprobe: ERROR: could not insert 'v4l2loopback': Key was rejected by service",
        "modprobe: ERROR: could not insert 'v4l2loopback': Required key not available",
    ])
    func secureBootRejects(message: String) {
        host.update {
            $0.modprobeFailures["v4l2loopback"] = CommandResult(status: 1, errors: message + "\n")
            $0.secureBoot = "SecureBoot enabled"
        }
        let error = failure()
        #expect(error == .secureBootRejected(module: "v4l2loopback", secureBoot: true, message: message))
        let text = error?.description ?? ""
        #expect(text.contains("Secure Boot is enabled"))
        #expect(text.contains("sudo mokutil --import /var/lib/dkms/mok.pub"))
        #expect(text.contains("reboot"))
        #expect(text.contains("Enroll MOK"))
        #expect(host.commands.contains(["mokutil", "--sb-state"]))
    }

    @Test("Secure Boot refusal without mokutil still names Secure Boot, as probable")
    func secureBootWithoutMokutil() {
        host.update { $0.modprobeFailures["snd-aloop"] = CommandResult(status: 1, errors: "modprobe: ERROR: could not insert 'snd_aloop': Key was rejected by service\n") }
        let error = failure()
        guard case .secureBootRejected(let module, let secureBoot, _)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(module == "snd-aloop")
        #expect(secureBoot == nil)
        #expect(error?.description.contains("Secure Boot is probably enabled") == true)
    }

    @Test("/dev/video10 taken by vivid: choose another --video-nr, and nothing is loaded")
    func numberTakenByAnotherDriver() {
        host.addVideoNode(10, name: "vivid-000-vid-cap")
        let error = failure()
        #expect(error == .deviceNumberTaken(number: 10, name: "vivid-000-vid-cap"))
        #expect(error?.description.contains("--video-nr") == true)
        #expect(error?.description.contains("vivid-000-vid-cap") == true)
        #expect(host.commands.isEmpty, "not even modinfo: the kernel would quietly pick another number")
    }

    @Test("/dev/video10 taken by another driver while v4l2loopback is loaded elsewhere is still 'taken'")
    func numberTakenWhileLoaded() {
        host.loadLoopback([(11, true, "Camo")])
        host.addVideoNode(10, name: "vivid-000-vid-cap")
        #expect(failure() == .deviceNumberTaken(number: 10, name: "vivid-000-vid-cap"))
    }

    @Test("v4l2loopback loaded without our number: names its devices and how to use or reload them")
    func loadedWithoutOurNumber() {
        host.loadLoopback([(0, true, "Dummy video device (0x0000)")], requestedNumbers: [-1])
        let error = failure()
        #expect(error == .loadedWithoutDevice(number: 10, devices: [VideoNode(number: 0, name: "Dummy video device (0x0000)", isLoopback: true)]))
        #expect(error?.description.contains("--video-nr 0") == true)
        #expect(error?.description.contains("sudo modprobe -r v4l2loopback") == true)
        #expect(modprobes.isEmpty)
    }

    @Test("not root: run it with sudo (after checking the module is there)")
    func notRoot() {
        host.update { $0.root = false }
        let error = failure()
        #expect(error == .notRoot)
        #expect(error?.description.contains("sudo camo-studio setup") == true)
        #expect(host.commands == [["modinfo", "v4l2loopback"]])
    }

    @Test("not root for the microphone when the camera is already there")
    func notRootForTheMicrophone() {
        host.update { $0.root = false }
        host.loadLoopback([(10, true, "Camo")])
        #expect(failure() == .notRoot)
    }

    @Test("modprobe or modinfo missing: install kmod")
    func toolsMissing() {
        host.update { $0.missingTools = ["modinfo"] }
        #expect(failure() == .toolMissing("modinfo"))
        host.update { $0.missingTools = ["modprobe"] }
        let error = failure()
        #expect(error == .toolMissing("modprobe"))
        #expect(error?.description.contains("apt install kmod") == true)
    }

    @Test("another modprobe failure carries modprobe's own words")
    func otherLoadFailure() {
        host.update { $0.modprobeFailures["v4l2loopback"] = CommandResult(status: 1, errors: "modprobe: ERROR: could not insert 'v4l2loopback': Invalid argument\n") }
        let error = failure()
        #expect(error?.description == "modprobe v4l2loopback exclusive_caps=1 video_nr=10 card_label=Camo failed: modprobe: ERROR: could not insert 'v4l2loopback': Invalid argument; dmesg shows the kernel's side of it.")
    }

    @Test("the module loads but its device lands on another number: said, with the devices it has")
    func deviceElsewhere() {
        host.update { $0.makesDevice = false }
        let error = failure()
        #expect(error == .deviceDidNotAppear(number: 10, devices: [VideoNode(number: 11, name: "Camo", isLoopback: true)]))
    }

    @Test("snd-aloop already loaded with another card id: a warning, nothing reloaded")
    func aloopWithAnotherID() throws {
        host.loadLoopback([(10, true, "Camo")])
        host.loadAloop(id: "Loopback", index: 3)
        let steps = try run()
        #expect(steps.last == .microphoneOtherCards([LoopbackSoundCard(index: 3, id: "Loopback")]))
        #expect(steps.last?.isWarning == true)
        #expect(steps.last?.description.contains("sudo modprobe -r snd-aloop") == true)
        #expect(modprobes.isEmpty)
    }

    @Test("labels and numbers the kernel cannot take are refused before anything runs", arguments: [
        LoopbackSetupOptions(label: "Camo, desk"), LoopbackSetupOptions(label: ""), LoopbackSetupOptions(label: "say \"hi\""),
        LoopbackSetupOptions(label: String(repeating: "x", count: 32)), LoopbackSetupOptions(videoNumber: 256),
        LoopbackSetupOptions(videoNumber: -1),
    ])
    func invalidOptions(options: LoopbackSetupOptions) {
        let error = failure(options)
        #expect(error != nil)
        #expect(error?.description.contains(options.videoNumber == 10 ? "--label" : "--video-nr") == true)
        #expect(host.commands.isEmpty)
    }

    @Test("every error's description is one sentence ending in a full stop")
    func descriptionsAreSentences() {
        let node = VideoNode(number: 0, name: "x", isLoopback: true)
        let errors: [LoopbackSetupError] = [
            .invalidVideoNumber(300), .invalidLabel("a,b", reason: "r"), .notRoot, .toolMissing("modprobe"),
            .cameraModuleMissing(kernel: "k", headersInstalled: false), .microphoneModuleMissing(kernel: "k"),
            .secureBootRejected(module: "m", secureBoot: false, message: "Key was rejected by service"),
            .deviceNumberTaken(number: 10, name: nil), .loadedWithoutDevice(number: 10, devices: []),
            .deviceDidNotAppear(number: 10, devices: [node]), .microphoneDidNotAppear(cards: []),
            .loadFailed(command: ["modprobe", "x"], status: 1, message: ""),
        ]
        for error in errors {
            #expect(error.description.hasSuffix("."), "\(error.description)")
            #expect(error.description.first?.isUppercase == true || error.description.hasPrefix("/dev") || error.description.hasPrefix("v4l2loopback")
                || error.description.hasPrefix("snd-aloop") || error.description.hasPrefix("modprobe"), "\(error.description)")
        }
    }
}
