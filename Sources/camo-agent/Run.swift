import ArgumentParser
import CamoAgentKit
import CamoCapture
import CamoCommandLine
import CamoProducerKit
import Foundation
import Logging
import ServiceLifecycle

/// The flags of `camo-agent run` and `camo-agent config`: each one, when given, overrides the config file's key
/// of the same name in camel case (``AgentConfiguration``).
struct AgentOptions: ParsableArguments {
    @Option(help: "A JSON config file (default: /etc/camo-agent/config.json for root, else ~/.config/camo-agent/config.json; flags override it).")
    var config: String?
    @Option(help: "TCP port to listen on (0 picks any free port; default 47800).") var port: Int?
    @Option(help: "The name studios see (default: this machine's host name).") var name: String?
    @Option(name: .long, help: "The state directory: the agent's key, paired studios, agent.json.") var stateDir: String?
    @Option(name: .long, help: "The runtime directory for the control socket (default: systemd's RuntimeDirectory, else $XDG_RUNTIME_DIR/camo-agent, /run/camo-agent for root).")
    var runtimeDir: String?
    @Flag(inversion: .prefixedNo, help: "Accept unpaired studios (Noise XX) from this machine (loopback); default off.")
    var allowUnpaired: Bool?
    @Option(help: "on: a studio connecting over the USB cable (camo-agent usb up) may do so without pairing and gets raw BGRA; off: over USB, too, only paired studios (default on).")
    var usbTrust: USBTrust?
    @Option(help: "Camera: auto (the first webcam, else the synthetic test pattern), test (the synthetic test pattern; test:busy adds rows of noise that need every bit a link gives; test:block a still room with a block moving in its left quarter, test:steps the room with brightness steps, for the event detectors), image:FILE (a PNG or JPEG shown at 30 fps), or a device path.")
    var camera: String?
    @Option(help: "Camera pixel format to insist on, e.g. YUYV, NV12, MJPG (default: the agent chooses).")
    var cameraFormat: String?
    @Option(help: "Frame rate to ask the camera for (default 30; the studio always gets 30 fps; slower cameras show as repeats).")
    var cameraFps: Double?
    @Option(help: "Write the first raw camera frame to this file (and its layout to FILE.json), for diagnosis.")
    var dumpRaw: String?
    @Option(help: "Microphone: auto (the default capture device, else the synthetic tone), test (the synthetic tone), or an ALSA device name.")
    var microphone: String?
    @Option(help: "Microphone sample format to insist on: S16_LE, S24_3LE, S32_LE or FLOAT_LE (default: the best the device has).")
    var microphoneFormat: String?
    @Option(help: "Microphone channels to insist on, 1 or 2 (default: 2, else 1; mono goes to both studio channels).")
    var microphoneChannels: Int?
    @Option(help: "Microphone ring buffer in milliseconds (40...2000, default 100; longer survives longer stalls, adds no latency).")
    var microphoneBufferMs: Int?
    @Flag(inversion: .prefixedNo, help: "Start with the microphone muted (studios get silence; `camo-agent mute off` unmutes); default off.")
    var mute: Bool?
    @Option(help: "JPEG quality 1...100 for studios that leave it to the agent (default 80).") var jpegQuality: Int?
    @Option(help: "H.264 encoder for studios on the network: auto, x264, openh264, v4l2m2m, vaapi or off (default auto; `camo-agent devices` lists this host's).")
    var encoder: String?
    @Option(help: "Seconds between H.264 keyframes, 0.5...10 (default 2).") var gopSeconds: Double?
    @Option(help: "H.264 rate control floor at 1280x720 in kb/s (default 500; other sizes scale by pixel count).") var minBitrateKbps: Int?
    @Option(help: "H.264 rate control ceiling at 1280x720 in kb/s (default 6000).") var maxBitrateKbps: Int?
    @Option(help: "H.264 latency budget in ms: frames are skipped before the encoder when the queue would pass it (default 200).")
    var latencyBudgetMs: Int?
    @Option(help: "The infrared light for night vision: a name under /sys/class/leds, or camera:CONTROL for a control of the camera (the settings' nightVision then works; default none).")
    var nightVisionLed: String?
    @Option(help: "The status light: a name under /sys/class/leds, or camera:CONTROL for a control of the camera (the settings' statusLight* then work; default none).")
    var statusLed: String?
    @Flag(inversion: .prefixedNo, help: "Serve the page: live view in a browser (WHEP), talkback, settings, status, /metrics, over HTTPS (default on).")
    var web: Bool?
    @Option(help: "The page's address (default 0.0.0.0; requests from other machines need a token: camo-agent web token).") var webHost: String?
    @Option(help: "The page's HTTPS port (default 8443).") var webPort: Int?
    @Flag(inversion: .prefixedNo, help: "Requests from this machine need no token (default off; behind a reverse proxy on this machine every request comes from here, so leave it off there).") var webLoopbackWithoutToken: Bool?
    @Option(help: "Seconds a live view lasts unless the viewer extends it (10...86400, default 120).") var leaseSeconds: Int?
    @Option(help: "Live viewers at once (default 4; one more is told the agent is busy).") var maxViewers: Int?
    @Option(help: "Talkback's output: auto (the default ALSA output), none, or an ALSA playback device (default auto).") var speaker: String?
    @Flag(inversion: .prefixedNo, help: "Serve rtsp://HOST:8554/camo for NVRs, with digest authentication (default on).") var rtsp: Bool?
    @Option(help: "The RTSP server's address (default 0.0.0.0).") var rtspHost: String?
    @Option(help: "The RTSP server's port (default 8554).") var rtspPort: Int?
    @Option(help: "The RTSP user name (default camo).") var rtspUser: String?
    @Option(help: "Live view's picture size (default 1280x720; a studio at the same size shares its encoder).") var liveSize: String?
    @Option(help: "Live view's H.264 bitrate in kb/s while no studio shares its encoder (default 2000).") var liveBitrateKbps: Int?
    @Flag(inversion: .prefixedNo, help: "Run the event detectors: motion in activity zones, sound, smoke and CO alarms, the doorbell button (default on; which triggers are on is the setting enabledEventTriggers).")
    var events: Bool?
    @Option(help: "The doorbell button: gpio:LINE_NAME, gpio:CHIP:OFFSET[:active-high] or evdev:/dev/input/eventN[:KEYCODE] (default none).")
    var doorbellButton: String?
    @Option(help: "The wired chime's GPIO output line: gpio:LINE_NAME or gpio:CHIP:OFFSET (default none).") var externalChime: String?
    @Option(help: "Post each event to this http(s) URL, HMAC-signed (default none; camo-agent events secret shows the key).")
    var webhookURL: String?
    @Flag(inversion: .prefixedNo, help: "Keep recordings as the setting selectedRecordingMode says (default on; the mode starts at liveView, which keeps nothing).")
    var recordings: Bool?
    @Option(help: "Where recordings go (default: recordings in the state directory).") var recordingsDir: String?
    @Option(help: "The most recordings may take, MB; the oldest go first (default 2048).") var recordingsMaxMb: Int?
    @Flag(inversion: .prefixedNo, help: "Publish _camo._tcp (and _camopairing._tcp while pairing) through avahi-daemon (default on).")
    var mdns: Bool?
    @Option(help: "TCP port of the pairing listener while a pairing window is open (0 picks any free port; default 0).")
    var pairingPort: Int?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default info).") var logLevel: String?

    /// The flags that were given, as config keys and JSON-like values.
    var overrides: [String: Any] {
        var values: [String: Any] = [:]
        values["port"] = port
        values["name"] = name
        values["stateDir"] = stateDir
        values["runtimeDir"] = runtimeDir
        values["allowUnpaired"] = allowUnpaired
        values["usbTrust"] = usbTrust.map { $0 == .on }
        values["camera"] = camera
        values["cameraFormat"] = cameraFormat
        values["cameraFps"] = cameraFps
        values["dumpRaw"] = dumpRaw
        values["microphone"] = microphone
        values["microphoneFormat"] = microphoneFormat
        values["microphoneChannels"] = microphoneChannels
        values["microphoneBufferMs"] = microphoneBufferMs
        values["mute"] = mute
        values["jpegQuality"] = jpegQuality
        values["encoder"] = encoder
        values["gopSeconds"] = gopSeconds
        values["minBitrateKbps"] = minBitrateKbps
        values["maxBitrateKbps"] = maxBitrateKbps
        values["latencyBudgetMs"] = latencyBudgetMs
        values["nightVisionLed"] = nightVisionLed
        values["statusLed"] = statusLed
        values["web"] = web
        values["webHost"] = webHost
        values["webPort"] = webPort
        values["webLoopbackWithoutToken"] = webLoopbackWithoutToken
        values["leaseSeconds"] = leaseSeconds
        values["maxViewers"] = maxViewers
        values["speaker"] = speaker
        values["rtsp"] = rtsp
        values["rtspHost"] = rtspHost
        values["rtspPort"] = rtspPort
        values["rtspUser"] = rtspUser
        values["liveSize"] = liveSize
        values["liveBitrateKbps"] = liveBitrateKbps
        values["events"] = events
        values["doorbellButton"] = doorbellButton
        values["externalChime"] = externalChime
        values["webhookURL"] = webhookURL
        values["recordings"] = recordings
        values["recordingsDir"] = recordingsDir
        values["recordingsMaxMb"] = recordingsMaxMb
        values["mdns"] = mdns
        values["pairingPort"] = pairingPort
        values["logLevel"] = logLevel
        return values
    }

    /// The defaults, then the config file, then these flags.
    func load() throws -> AgentConfigurationLoader {
        var loader = AgentConfigurationLoader()
        try loader.apply(file: config ?? AgentConfigurationLoader.defaultFile(), required: config != nil)
        try loader.apply(overrides) { key in
            let flag = key.replacing(/[A-Z]/) { "-" + $0.output.lowercased() }
            let negated = ["mdns", "allowUnpaired", "mute", "web", "webLoopbackWithoutToken", "rtsp", "events", "recordings"].contains(key) && overrides[key] as? Bool == false
            return negated ? "--no-" + flag : "--" + flag
        }
        try loader.configuration.validate(sources: loader.sources)
        return loader
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs the agent: captures, listens for studios, streams. Prints port=N first.",
        discussion: "SIGTERM or SIGINT stops it gracefully at any moment (a second one exits at once).")

    @OptionGroup var options: AgentOptions

    func run() async throws {
        let loader: AgentConfigurationLoader
        do {
            loader = try options.load()
        } catch {
            throw ValidationError("\(error)")
        }
        let configuration = loader.configuration
        let level = configuration.loggerLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "camo-agent")
        ALSALog.route(to: Logger(label: "camo-agent.alsa"))
        let service = AgentService(configuration: configuration, logger: logger) { event in
            switch event {
            case .listening(let port):
                // The first line of output, for scripts; written straight to fd 1 so no buffering delays it.
                FileHandle.standardOutput.write(Data("port=\(port)\n".utf8))
            case .ready(.advertised(let name)):
                FileHandle.standardOutput.write(Data("advertised as \"\(name)\" (_camo._tcp)\n".utf8))
            case .ready(.off(let reason, let connect)):
                FileHandle.standardOutput.write(Data("discovery is off: \(reason); connect with: \(connect)\n".utf8))
            case .live(let live):
                var lines: [String] = []
                if let url = live.pageURL {
                    lines.append("page \(url) (certificate SHA-256 \(live.certificateSHA256 ?? "?")); a token for a browser: camo-agent web token")
                } else if let problem = live.pageProblem {
                    lines.append("page off: \(problem)")
                }
                if let url = live.rtspURL {
                    lines.append("rtsp \(url) (user and password: camo-agent web rtsp)")
                } else if let problem = live.rtspProblem {
                    lines.append("rtsp off: \(problem)")
                }
                FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))
            }
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [.init(service: service)], logger: logger))
        ShutdownSignals.watch(wait: ShutdownSignal.wait) { name in
            logger.info("Shutting down", metadata: ["signal": "\(name)"])
            Task { await group.triggerGracefulShutdown() }
        }
        do {
            try await group.run()
        } catch {
            FileHandle.standardError.write(Data("camo-agent: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// `camo-agent config`: the effective configuration and where each value came from.
struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the effective configuration of `camo-agent run` with these flags, and where each value came from.")

    @OptionGroup var options: AgentOptions
    @Flag(help: "Print the configuration as JSON (the config file's format).") var json = false

    func run() throws {
        let loader: AgentConfigurationLoader
        do {
            loader = try options.load()
        } catch {
            throw ValidationError("\(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(loader.configuration), as: UTF8.self))
            return
        }
        // The RTSP password is not for a screen or a log (`camo-agent web rtsp` shows it on purpose).
        let rows = loader.effectiveValues.map { row in
            ["rtspPassword", "webhookSecret"].contains(row.key) && row.value != "null" ? (key: row.key, value: "\"(hidden)\"", source: row.source) : row
        }
        let keyWidth = rows.map(\.key.count).max() ?? 0
        let valueWidth = rows.map(\.value.count).max() ?? 0
        for row in rows {
            print(row.key.padding(toLength: keyWidth, withPad: " ", startingAt: 0) + "  "
                + row.value.padding(toLength: valueWidth, withPad: " ", startingAt: 0) + "  " + row.source)
        }
    }
}

/// `--usb-trust on|off`.
enum USBTrust: String, ExpressibleByArgument, CaseIterable {
    case on, off
}
