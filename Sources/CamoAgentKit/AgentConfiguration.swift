import CamoCapture
import CamoMedia
import Foundation
import CamoProducerKit
import Logging

/// Everything `camo-agent run` runs, as one value: an ``AgentService`` is built from it.
///
/// Its keys are the names in the config file (JSON, see ``AgentConfigurationLoader``) and, in kebab case, the
/// flags of `camo-agent run` (`jpegQuality` is `--jpeg-quality`).
public struct AgentConfiguration: Codable, Sendable, Equatable {
    /// TCP port to listen on (0 picks any free port).
    public var port: Int = 47_800
    /// The name studios see (nil: this machine's host name).
    public var name: String?
    /// The state directory: the agent's key, the paired-device list, `agent.json`.
    public var stateDir: String = AgentPaths.defaultStateDirectory()
    /// The runtime directory for the control socket (nil: `$RUNTIME_DIRECTORY`, else the user's shared one;
    /// see ``AgentPaths``).
    public var runtimeDir: String?
    /// Accept unpaired studios (Noise XX) from this machine (loopback).
    public var allowUnpaired = false
    /// Accept unpaired studios over the USB cable (they get raw BGRA).
    public var usbTrust = true
    /// `auto`, `test`, `image:FILE` or a device path.
    public var camera = "auto"
    /// A camera pixel format to insist on (a four-character code such as YUYV or MJPG).
    public var cameraFormat: String?
    /// The frame rate to ask the camera for.
    public var cameraFps: Double = 30
    /// Write the first raw camera frame here (and its layout to FILE.json).
    public var dumpRaw: String?
    /// `auto`, `test` or an ALSA device name.
    public var microphone = "auto"
    /// A microphone sample format to insist on: S16_LE, S24_3LE, S32_LE or FLOAT_LE.
    public var microphoneFormat: String?
    /// Microphone channels to insist on, 1 or 2.
    public var microphoneChannels: Int?
    /// The microphone's ring buffer in milliseconds.
    public var microphoneBufferMs = 100
    /// Start with the microphone muted.
    public var mute = false
    /// JPEG quality 1...100 for studios that leave it to the agent.
    public var jpegQuality = 80
    /// The H.264 encoder for studios on the network: `auto` (a hardware encoder that really opens, then x264, then
    /// openh264), `x264`, `openh264`, `v4l2m2m`, `vaapi`, or `off` (bgra and jpeg only).
    public var encoder = "auto"
    /// Seconds between H.264 keyframes (0.5...10).
    public var gopSeconds = 2.0
    /// The H.264 rate control's floor and ceiling at 1280x720 in kb/s (other sizes scale by pixel count).
    public var minBitrateKbps = 500
    /// See ``minBitrateKbps``.
    public var maxBitrateKbps = 6_000
    /// The latency budget of the H.264 rate control in milliseconds: frames are skipped before the encoder when the
    /// queue would pass it.
    public var latencyBudgetMs = 200
    /// The camera's infrared light for night vision: an LED (a name under /sys/class/leds), or `camera:CONTROL`, a
    /// control of the camera (a boolean, an integer from off to full, or a menu's off and on entries); nil: none.
    public var nightVisionLed: String?
    /// The camera's status light, named as ``nightVisionLed``; nil: none.
    public var statusLed: String?
    /// Serve the page, WHEP live view, the JSON API and `/metrics` (HTTPS on ``webPort``).
    public var web = true
    /// The address the page listens on (`0.0.0.0`: every interface; off-loopback requests need a token).
    public var webHost = "0.0.0.0"
    /// The page's TCP port.
    public var webPort = 8_443
    /// Requests from this machine (loopback) need no token. Off-loopback requests always do.
    public var webLoopbackWithoutToken = false
    /// Seconds a live view lasts unless the viewer extends it (the camera model's session duration).
    public var leaseSeconds = 120
    /// Live viewers at once (WebRTC); one more is told the agent is busy.
    public var maxViewers = 4
    /// Talkback's output: `auto` (the default ALSA output), `none`, or an ALSA playback device name.
    public var speaker = "auto"
    /// Serve the picture and sound over RTSP for NVRs and restreamers (``rtspPort``, digest authentication).
    public var rtsp = true
    /// The address the RTSP server listens on.
    public var rtspHost = "0.0.0.0"
    /// The RTSP server's TCP port.
    public var rtspPort = 8_554
    /// The RTSP user name.
    public var rtspUser = "camo"
    /// The RTSP password; nil: one generated at first start and kept in the state directory (`rtsp-password`,
    /// 0600), which `camo-agent web rtsp` shows.
    public var rtspPassword: String?
    /// The picture size of live view (WebRTC and RTSP), WIDTHxHEIGHT; it shares the H.264 rendition of a studio
    /// that takes the same size.
    public var liveSize = "1280x720"
    /// Live view's H.264 bitrate in kb/s while no studio shares its rendition.
    public var liveBitrateKbps = 2_000
    /// Run the event detectors (motion in activity zones, sound, smoke and CO alarm patterns, the doorbell
    /// button); which triggers are on is a setting (`enabledEventTriggers`).
    public var events = true
    /// The doorbell button: `gpio:LINE_NAME`, `gpio:CHIP:OFFSET` (a GPIO line through libgpiod; active low unless
    /// `:active-high` follows) or `evdev:/dev/input/eventN[:KEYCODE]` (an input key); nil: no doorbell.
    public var doorbellButton: String?
    /// The wired (external) chime: a GPIO output line, `gpio:LINE_NAME` or `gpio:CHIP:OFFSET`, held active for the
    /// settings' `externalChimeDuration` on each press; nil: none.
    public var externalChime: String?
    /// Where events are posted (an HMAC-signed JSON body): an http or https URL; nil: no webhook.
    public var webhookURL: String?
    /// The webhook's HMAC-SHA256 key; nil: one generated at first start and kept in the state directory
    /// (`webhook-secret`, 0600), which `camo-agent events secret` shows.
    public var webhookSecret: String?
    /// Keep recordings as the setting `selectedRecordingMode` says (it starts at liveView: nothing is kept until a
    /// studio, the page or `camo-agent settings set` chooses a mode).
    public var recordings = true
    /// Where recordings and their index go; nil: `recordings` in the state directory.
    public var recordingsDir: String?
    /// The most the recordings may take on disk, MB; the oldest go first.
    public var recordingsMaxMb = 2_048
    /// Publish `_camo._tcp` (and `_camopairing._tcp` while pairing) through avahi-daemon.
    public var mdns = true
    /// The pairing listener's TCP port (0 picks any free port).
    public var pairingPort = 0
    /// trace, debug, info, notice, warning, error or critical.
    public var logLevel = "info"

    /// The defaults.
    public init() {}

    /// The log level as swift-log's type (validated by ``validate(sources:)``).
    public var loggerLevel: Logger.Level { Logger.Level(rawValue: logLevel) ?? .info }

    /// Checks every value; the error names the key, its value and where it came from.
    /// - Parameter sources: where each key's value came from, for the message (``AgentConfigurationLoader``).
    public func validate(sources: [String: String] = [:]) throws(AgentConfigurationError) {
        func check(_ ok: Bool, _ key: String, _ value: Any?, _ rule: String) throws(AgentConfigurationError) {
            guard !ok else { return }
            throw AgentConfigurationError.invalid(key: key, value: value.map { "\($0)" } ?? "nil", rule: rule, source: sources[key] ?? "default")
        }
        try check((0...65_535).contains(port), "port", port, "a TCP port 0...65535 (0 picks any free port)")
        try check((0...65_535).contains(pairingPort), "pairingPort", pairingPort, "a TCP port 0...65535 (0 picks any free port)")
        try check((1...100).contains(jpegQuality), "jpegQuality", jpegQuality, "1...100")
        try check(["auto", "off", "x264", "openh264", "v4l2m2m", "vaapi"].contains(encoder), "encoder", encoder,
                  "auto, off, x264, openh264, v4l2m2m or vaapi")
        try check(gopSeconds >= 0.5 && gopSeconds <= 10, "gopSeconds", gopSeconds, "0.5...10")
        try check((100...50_000).contains(minBitrateKbps), "minBitrateKbps", minBitrateKbps, "100...50000")
        try check((200...100_000).contains(maxBitrateKbps) && maxBitrateKbps > minBitrateKbps, "maxBitrateKbps", maxBitrateKbps,
                  "200...100000 and above minBitrateKbps (\(minBitrateKbps))")
        try check((50...5_000).contains(latencyBudgetMs), "latencyBudgetMs", latencyBudgetMs, "50...5000")
        try check(Logger.Level(rawValue: logLevel) != nil, "logLevel", logLevel, "trace, debug, info, notice, warning, error or critical")
        try check(cameraFps > 0 && cameraFps <= 240, "cameraFps", cameraFps, "a rate above 0 and at most 240")
        try check(microphoneFormat.map { MicrophoneSampleFormat(name: $0) != nil } ?? true, "microphoneFormat", microphoneFormat,
                  "S16_LE, S24_3LE, S32_LE or FLOAT_LE")
        try check(microphoneChannels.map { (1...2).contains($0) } ?? true, "microphoneChannels", microphoneChannels, "1 or 2")
        try check((40...2_000).contains(microphoneBufferMs), "microphoneBufferMs", microphoneBufferMs, "40...2000")
        try check(cameraFormat.map { FourCC($0) != nil } ?? true, "cameraFormat", cameraFormat,
                  "a four-character code such as YUYV or MJPG")
        try check(!stateDir.isEmpty, "stateDir", stateDir, "a directory path")
        try check((0...65_535).contains(webPort), "webPort", webPort, "a TCP port 0...65535 (0 picks any free port)")
        try check((0...65_535).contains(rtspPort), "rtspPort", rtspPort, "a TCP port 0...65535 (0 picks any free port)")
        try check((10...86_400).contains(leaseSeconds), "leaseSeconds", leaseSeconds, "10...86400")
        try check((1...32).contains(maxViewers), "maxViewers", maxViewers, "1...32")
        try check(!speaker.isEmpty, "speaker", speaker, "auto, none or an ALSA playback device name")
        try check(!rtspUser.isEmpty && !rtspUser.contains(":"), "rtspUser", rtspUser, "a user name without a colon")
        try check(rtspPassword.map { $0.count >= 8 } ?? true, "rtspPassword", rtspPassword.map { _ in "(hidden)" }, "at least 8 characters")
        try check(Self.size(liveSize).map { $0.width % 2 == 0 && $0.height % 2 == 0 } ?? false, "liveSize", liveSize,
                  "WIDTHxHEIGHT with even sides from 160x90 to 3840x2160, e.g. 1280x720")
        try check((100...50_000).contains(liveBitrateKbps), "liveBitrateKbps", liveBitrateKbps, "100...50000")
        try check(name.map { !$0.isEmpty && $0.utf8.count <= 63 } ?? true, "name", name, "1 to 63 bytes (a DNS-SD instance name)")
        try check(doorbellButton.map { $0.hasPrefix("gpio:") || $0.hasPrefix("evdev:") } ?? true, "doorbellButton", doorbellButton,
                  "gpio:LINE_NAME, gpio:CHIP:OFFSET or evdev:/dev/input/eventN[:KEYCODE]")
        try check(externalChime.map { $0.hasPrefix("gpio:") } ?? true, "externalChime", externalChime, "gpio:LINE_NAME or gpio:CHIP:OFFSET")
        try check(webhookURL.map { $0.hasPrefix("http://") || $0.hasPrefix("https://") } ?? true, "webhookURL", webhookURL,
                  "an http:// or https:// URL")
        try check((16...10_000_000).contains(recordingsMaxMb), "recordingsMaxMb", recordingsMaxMb, "16...10000000 (MB)")
        try check(recordingsDir.map { !$0.isEmpty } ?? true, "recordingsDir", recordingsDir, "a directory path")
        try check(webhookSecret.map { $0.utf8.count >= 16 } ?? true, "webhookSecret", webhookSecret.map { _ in "(hidden)" },
                  "at least 16 characters")
    }
}

extension AgentConfiguration {
    /// `WIDTHxHEIGHT` within 160x90...3840x2160, or nil.
    static func size(_ text: String) -> VideoSize? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
            (160...3_840).contains(width), (90...2_160).contains(height)
        else { return nil }
        return VideoSize(width: width, height: height)
    }

    /// ``liveSize`` as a size (validated by ``validate(sources:)``; 1280x720 if not).
    public var liveVideoSize: VideoSize { Self.size(liveSize) ?? .hd720 }
}

/// A configuration that cannot be used, in a sentence that says which key, from where, and what it must be.
public enum AgentConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A value outside its range or set.
    case invalid(key: String, value: String, rule: String, source: String)
    /// The config file names a key the agent does not know.
    case unknownKey(String, file: String, known: [String])
    /// The config file is not a JSON object of the right types.
    case unreadable(file: String, reason: String)

    public var description: String {
        switch self {
        case .invalid(let key, let value, let rule, let source):
            "\(key) is \(value) (from \(source)); it must be \(rule)."
        case .unknownKey(let key, let file, let known):
            "\(file) has the key \"\(key)\", which camo-agent does not know; the keys are \(known.joined(separator: ", "))."
        case .unreadable(let file, let reason):
            "\(file) cannot be read as the agent's configuration: \(reason). It must be a JSON object such as {\"port\": 47800, \"camera\": \"auto\"}; fix or remove it."
        }
    }
}
