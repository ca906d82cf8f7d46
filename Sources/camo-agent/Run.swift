import ArgumentParser
import CamoCapture
import CamoMedia
import CamoProducerKit
import CamoStorage
import CamoUSB
import Foundation
import Logging
import Synchronization

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs the agent: captures, listens for studios, streams. Prints port=N first.")

    @Option(help: "TCP port to listen on (0 picks any free port).") var port: Int = 47_800
    @Option(help: "The name studios see (default: this machine's host name).") var name: String?
    @OptionGroup var state: StateOptions
    @Flag(help: "Accept unpaired studios (Noise XX), from this machine (loopback) only.") var allowUnpaired = false
    @Option(help: "on: a studio connecting over the USB cable (camo-agent usb up) may do so without pairing and gets raw BGRA; off: over USB, too, only paired studios.")
    var usbTrust: USBTrust = .on
    @Option(help: "Camera: auto (the first webcam, else the test pattern), test (the synthetic test pattern), image:FILE (a PNG or JPEG shown at 30 fps), or a device path.")
    var camera: String = "auto"
    @Option(help: "Camera pixel format to insist on, e.g. YUYV, NV12, MJPG (default: the agent chooses).")
    var cameraFormat: String?
    @Option(help: "Frame rate to ask the camera for (the studio always gets 30 fps; slower cameras show as repeats).")
    var cameraFps: Double = 30
    @Option(help: "Write the first raw camera frame to this file (and its layout to FILE.json), for diagnosis.")
    var dumpRaw: String?
    @Option(help: "Microphone: auto (the default capture device, else the test tone), test (the synthetic tone), or an ALSA device name.")
    var microphone: String = "auto"
    @Option(help: "Microphone sample format to insist on: S16_LE, S24_3LE, S32_LE or FLOAT_LE (default: the best the device has).")
    var microphoneFormat: String?
    @Option(help: "Microphone channels to insist on, 1 or 2 (default: 2, else 1; mono goes to both studio channels).")
    var microphoneChannels: Int?
    @Option(help: "Microphone ring buffer in milliseconds (at least 40; longer survives longer stalls, adds no latency).")
    var microphoneBufferMs: Int = 100
    @Flag(help: "Start with the microphone muted (studios get silence; `camo-agent mute off` unmutes).")
    var mute = false
    @Option(help: "JPEG quality 1...100 for studios that leave it to the agent.") var jpegQuality: Int = 80
    @Flag(inversion: .prefixedNo, help: "Publish _camo._tcp (and _camopairing._tcp while pairing) through avahi-daemon.")
    var mdns = true
    @Option(help: "TCP port of the pairing listener while a pairing window is open (0 picks any free port).")
    var pairingPort: Int = 0
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0...65535.") }
        guard (0...65_535).contains(pairingPort) else { throw ValidationError("--pairing-port must be 0...65535.") }
        guard (1...100).contains(jpegQuality) else { throw ValidationError("--jpeg-quality must be 1...100.") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
        guard cameraFps > 0, cameraFps <= 240 else { throw ValidationError("--camera-fps must be in 0...240.") }
        if let microphoneFormat, MicrophoneSampleFormat(name: microphoneFormat) == nil {
            throw ValidationError("--microphone-format must be S16_LE, S24_3LE, S32_LE or FLOAT_LE, not '\(microphoneFormat)'.")
        }
        if let microphoneChannels, !(1...2).contains(microphoneChannels) {
            throw ValidationError("--microphone-channels must be 1 or 2.")
        }
        guard (40...2_000).contains(microphoneBufferMs) else { throw ValidationError("--microphone-buffer-ms must be 40...2000.") }
        if let cameraFormat, FourCC(cameraFormat) == nil {
            throw ValidationError("--camera-format must be a four-character code such as YUYV or MJPG, not '\(cameraFormat)'.")
        }
    }

    func run() async throws {
        // Safe: validate() checked the level.
        let level = Logger.Level(rawValue: logLevel)!
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "camo-agent")
        ALSALog.route(to: Logger(label: "camo-agent.alsa"))
        let agentName = name ?? ProcessInfo.processInfo.hostName
        try AtomicFile.makeDirectory(state.stateDir)
        let lock = try StateDirectoryLock(directory: state.stateDir)
        let identity = try AgentIdentity.loadOrCreate(in: state.stateDir, name: agentName, logger: logger)

        let sources = try SourceSelection.choose(
            camera: camera, format: cameraFormat.flatMap(FourCC.init), framesPerSecond: cameraFps, dumpRaw: dumpRaw,
            microphone: microphone,
            microphoneOptions: SourceSelection.MicrophoneOptions(
                format: microphoneFormat.flatMap(MicrophoneSampleFormat.init(name:)), channels: microphoneChannels,
                bufferMilliseconds: microphoneBufferMs),
            logger: logger)
        let cameraName = SharedText(sources.cameraName)
        var configuration = ControllerConfiguration(
            identity: identity,
            description: AgentDescription(
                model: "Linux \(SourceSelection.machine())", softwareVersion: AgentVersion.software,
                camera: sources.cameraName, microphone: sources.microphoneName),
            admission: AdmissionPolicy(allowUnpaired: allowUnpaired, usbTrust: usbTrust == .on))
        configuration.port = port
        configuration.pairingPort = pairingPort
        configuration.defaultJPEGQuality = jpegQuality

        let clock = SystemMonotonicClock()
        let pairedDevices = try PairedDeviceStore(directory: state.stateDir, logger: logger)
        let controller = CamoController(configuration: configuration, logger: logger, clock: clock, pairedDevices: pairedDevices)
        if mute { controller.muteMicrophone() }
        try await controller.start()
        // Safe: a started controller has a port.
        let boundPort = controller.port!
        // The first line of output, for scripts; written straight to fd 1 so no buffering delays it.
        FileHandle.standardOutput.write(Data("port=\(boundPort)\n".utf8))
        let discovery = mdns
            ? Advertisement.start(
                name: agentName, port: boundPort, identity: identity, description: configuration.description,
                controller: controller, logger: logger)
            : nil

        let socketPath = ControlSocketPath.path(forStateDirectory: state.stateDir)
        let control = try await ControlServer.start(
            path: socketPath, logger: logger,
            handler: AgentControl.handler(
                controller: controller, camera: { cameraName.value }, microphone: sources.microphoneName,
                microphoneDetail: { sources.microphoneStatus },
                rescan: {
                    if case .camera(let source, _) = sources.video { source.rescanNow() }
                },
                scanDecoder: Advertisement.qrDecoder))
        let agentFile = state.stateDir + "/agent.json"
        try AgentFile(port: boundPort, pid: getpid(), name: agentName, agentId: identity.id, controlSocket: socketPath)
            .write(to: agentFile)

        // The agent's end of a USB cable: nudges the kernel's f_ncm when it strands outgoing frames (see
        // GadgetStallDetector); does nothing without a gadget interface.
        let usbLinks = GadgetLinkWatch(logger: logger)
        usbLinks.start()

        let capture = Task {
            await SourceSelection.run(sources, controller: controller, clock: clock, cameraName: cameraName, logger: logger)
        }
        let signal = await ShutdownSignal.wait()
        logger.info("Shutting down", metadata: ["signal": "\(signal)"])
        capture.cancel()
        await capture.value
        await controller.stop()
        usbLinks.stop()
        discovery?.stop()
        await control.stop()
        try? FileManager.default.removeItem(atPath: agentFile)
        withExtendedLifetime(lock) {}
    }
}

/// `--usb-trust on|off`.
enum USBTrust: String, ExpressibleByArgument, CaseIterable {
    case on, off
}
