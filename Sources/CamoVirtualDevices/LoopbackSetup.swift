import Logging

/// Makes the studio's virtual devices appear: loads v4l2loopback for the camera (`/dev/video10`, exclusive_caps=1
/// so Chrome lists it) and snd-aloop for the microphone (card `CamoMic`), or reports what is already there.
///
/// It never unloads a module: a program may be reading the camera. When a loaded module is not as asked, it says
/// how to reload it. All machine access goes through a ``LoopbackHost``, so tests run it against a model.
///
/// ```swift
/// let setup = LoopbackSetup(options: LoopbackSetupOptions(label: "Camo: desk"), logger: logger)
/// try setup.run { step in print(step) }
/// ```
public struct LoopbackSetup: Sendable {
    /// What to make.
    public let options: LoopbackSetupOptions
    /// The machine.
    public let host: any LoopbackHost
    let logger: Logger

    /// A setup of `options` on `host` (the real machine unless a test passes its own).
    public init(options: LoopbackSetupOptions, host: any LoopbackHost = SystemLoopbackHost(), logger: Logger) {
        self.options = options
        self.host = host
        self.logger = logger
    }

    /// Loads what is missing, reporting each step as it happens. A dry run only reports the commands it would run
    /// (``SetupStep/wouldRun(_:)``), needing neither root nor the modules.
    public func run(dryRun: Bool = false, report: (SetupStep) -> Void) throws(LoopbackSetupError) {
        try options.validate()
        if dryRun {
            options.commands.forEach { report(.wouldRun($0)) }
            return
        }
        try setUpCamera(report: report)
        if options.microphone {
            try setUpMicrophone(report: report)
        } else {
            report(.microphoneSkipped)
        }
    }

    /// Loads v4l2loopback, or reports the device it already has.
    func setUpCamera(report: (SetupStep) -> Void) throws(LoopbackSetupError) {
        let number = options.videoNumber
        let present = VideoNode.read(number: number, from: host)
        if let state = LoopbackModuleState.read(from: host) {
            guard let device = state.device(number: number) else {
                if let present, !present.isLoopback { throw .deviceNumberTaken(number: number, name: present.name) }
                throw .loadedWithoutDevice(number: number, devices: state.devices)
            }
            logger.info("v4l2loopback already loaded", metadata: ["device": "\(device.path)", "parameters": "\(state.parameterSummary)"])
            report(.cameraAlreadyLoaded(state, device: device))
            if state.exclusiveCaps(number: number) == false { report(.exclusiveCapsOff(device)) }
            if device.name != options.label { report(.labelDiffers(device, requested: options.label)) }
            return
        }
        // The kernel would quietly give v4l2loopback the next free number instead, so a taken one is refused here.
        if let present, !present.isLoopback { throw .deviceNumberTaken(number: number, name: present.name) }
        let modinfo = host.run(["modinfo", "v4l2loopback"])
        if modinfo.programMissing { throw .toolMissing("modinfo") }
        guard modinfo.succeeded else {
            let kernel = host.kernelRelease
            throw .cameraModuleMissing(kernel: kernel, headersInstalled: host.exists("/lib/modules/\(kernel)/build"))
        }
        guard host.isRoot else { throw .notRoot }
        try load(options.cameraCommand, module: "v4l2loopback", report: report)
        guard let device = VideoNode.read(number: number, from: host), device.isLoopback else {
            throw .deviceDidNotAppear(number: number, devices: LoopbackModuleState.read(from: host)?.devices ?? [])
        }
        report(.cameraReady(device))
        if device.name != options.label { report(.labelDiffers(device, requested: options.label)) }
    }

    /// Loads snd-aloop, or reports the card it already has.
    func setUpMicrophone(report: (SetupStep) -> Void) throws(LoopbackSetupError) {
        let cardID = LoopbackSetupOptions.microphoneCardID
        if LoopbackSoundCard.isLoaded(on: host) {
            let cards = LoopbackSoundCard.all(from: host)
            if let ours = cards.first(where: { $0.id == cardID }) {
                report(.microphoneAlreadyLoaded(ours))
            } else {
                report(.microphoneOtherCards(cards))
            }
            return
        }
        let modinfo = host.run(["modinfo", "snd-aloop"])
        if modinfo.programMissing { throw .toolMissing("modinfo") }
        guard modinfo.succeeded else { throw .microphoneModuleMissing(kernel: host.kernelRelease) }
        guard host.isRoot else { throw .notRoot }
        try load(options.microphoneCommand, module: "snd-aloop", report: report)
        let cards = LoopbackSoundCard.all(from: host)
        guard let ours = cards.first(where: { $0.id == cardID }) else { throw .microphoneDidNotAppear(cards: cards) }
        report(.microphoneReady(ours))
    }

    /// Runs a modprobe command, telling a Secure Boot refusal from other failures.
    func load(_ command: [String], module: String, report: (SetupStep) -> Void) throws(LoopbackSetupError) {
        logger.info("loading a module", metadata: ["command": "\(shellLine(command))"])
        let result = host.run(command)
        if result.programMissing { throw .toolMissing(command[0]) }
        guard result.succeeded else {
            let message = result.message
            logger.info("modprobe failed", metadata: ["status": "\(result.status)", "message": "\(message)"])
            if message.contains("Key was rejected by service") || message.contains("Required key not available") {
                throw .secureBootRejected(module: module, secureBoot: secureBootEnabled(), message: message)
            }
            throw .loadFailed(command: command, status: result.status, message: message)
        }
        report(.ran(command))
    }

    /// What `mokutil --sb-state` says: true for "SecureBoot enabled", false for "disabled", nil when it cannot tell.
    func secureBootEnabled() -> Bool? {
        let result = host.run(["mokutil", "--sb-state"])
        let text = result.output + result.errors
        if text.contains("SecureBoot enabled") { return true }
        if text.contains("SecureBoot disabled") { return false }
        return nil
    }
}
