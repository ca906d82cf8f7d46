import CALSA
import CamoMedia
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// The only file that calls the ALSA library (libasound). Everything above it sees Swift types.

/// A sample layout a microphone can deliver that the agent converts itself to float32.
public enum MicrophoneSampleFormat: String, Sendable, CaseIterable, Codable {
    case float32 = "FLOAT_LE"
    case s32 = "S32_LE"
    case s24Packed = "S24_3LE"
    case s16 = "S16_LE"

    /// Bytes of one sample of one channel.
    public var bytesPerSample: Int {
        switch self {
        case .float32, .s32: return 4
        case .s24Packed: return 3
        case .s16: return 2
        }
    }

    /// Accepts ALSA's names (`S16_LE`) and short forms (`s16`, `s32`, `s24`, `float`), any case.
    public init?(name: String) {
        switch name.uppercased() {
        case "FLOAT_LE", "FLOAT", "F32", "FLOAT32": self = .float32
        case "S32_LE", "S32": self = .s32
        case "S24_3LE", "S24", "S24_3": self = .s24Packed
        case "S16_LE", "S16": self = .s16
        default: return nil
        }
    }

    fileprivate var alsa: snd_pcm_format_t {
        switch self {
        case .float32: return SND_PCM_FORMAT_FLOAT_LE
        case .s32: return SND_PCM_FORMAT_S32_LE
        case .s24Packed: return SND_PCM_FORMAT_S24_3LE
        case .s16: return SND_PCM_FORMAT_S16_LE
        }
    }
}

/// Why a microphone operation failed, in words a user can act on.
public enum MicrophoneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such ALSA device (unknown name, or the card is not there).
    case notFound(device: String, detail: String)
    /// This user may not open the device.
    case permissionDenied(device: String)
    /// Another program holds the device exclusively.
    case busy(device: String)
    /// The device cannot deliver anything usable, even through ALSA's plug layer.
    case unsupported(device: String, detail: String)
    /// The device went away (unplugged, driver unbound).
    case disconnected(device: String)
    /// An ALSA call failed.
    case call(device: String, call: String, code: Int32)

    /// What went wrong and what to do, for people.
    public var description: String {
        switch self {
        case .notFound(let device, let detail):
            return "No microphone \"\(device)\" (\(detail)). Run `camo-agent devices` to list the microphones, or plug it in."
        case .permissionDenied(let device):
            return "Permission denied opening microphone \"\(device)\". Add this user to the 'audio' group (or install the udev rules in udev/), then log in again."
        case .busy(let device):
            return "Microphone \"\(device)\" is in use by another program. Close it, or use a shared device such as `default` or a `dsnoop` one."
        case .unsupported(let device, let detail):
            return "Microphone \"\(device)\" cannot be used: \(detail). Try its plughw: name (ALSA converts) or another sample format."
        case .disconnected(let device):
            return "Microphone \"\(device)\" went away (unplugged?). Plug it back in; the agent picks it up again and sends silence meanwhile."
        case .call(let device, let call, let code):
            return "\(call) failed on microphone \"\(device)\": \(ALSAPCM.describe(code)) (\(code)). "
                + "For `default`, is PipeWire or PulseAudio running? Or name a card, e.g. plughw:0,0."
        }
    }

    /// True when the device is gone (so the source should send silence and try again).
    public var isDisconnect: Bool {
        switch self {
        case .disconnected, .notFound: return true
        case .call(_, _, let code): return ALSAPCM.isDisconnect(code)
        default: return false
        }
    }

    static func fromOpen(device: String, code: Int32) -> MicrophoneError {
        switch -code {
        case ENOENT, ENODEV, ENXIO: return .notFound(device: device, detail: ALSAPCM.describe(code))
        case EACCES, EPERM: return .permissionDenied(device: device)
        case EBUSY: return .busy(device: device)
        default: return .call(device: device, call: "snd_pcm_open", code: code)
        }
    }
}

/// What a microphone was opened with, as ALSA reported it back.
public struct MicrophoneSetup: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The device name that was asked for.
    public var device: String
    /// The name that was opened: the same, or a `plug` wrapper around it.
    public var openedName: String
    /// The sample format read from the device.
    public var format: MicrophoneSampleFormat
    /// Channels read from the device (1 is duplicated to both studio channels; beyond 2 the first two are used).
    public var channels: Int
    /// The rate read from the device (always 48000; the plug layer resamples when the device cannot).
    public var rate: Int
    /// Frames per period.
    public var periodFrames: Int
    /// Frames in the ring buffer.
    public var bufferFrames: Int
    /// True when ALSA's plug layer converts for the agent (format, channels or rate the device lacks).
    public var throughPlugLayer: Bool
    /// True when the plug layer resamples (the device cannot run at 48 kHz).
    public var resampled: Bool
    /// True when the PCM reports CLOCK_MONOTONIC timestamps (otherwise the agent reads the clock itself).
    public var monotonicTimestamps: Bool

    /// The parameters in one line, for the log and the status.
    public var description: String {
        var text = "\(openedName): \(format.rawValue), \(channels) ch, \(rate) Hz, period \(periodFrames), buffer \(bufferFrames)"
        if resampled { text += ", resampled by ALSA's plug layer" } else if throughPlugLayer { text += ", converted by ALSA's plug layer" }
        return text
    }
}

/// A capture PCM as `camo-agent devices` lists it.
public struct MicrophoneInfo: Sendable, Codable, Equatable {
    /// The ALSA name to pass to `--microphone`.
    public var name: String
    /// ALSA's description (card and device names).
    public var description: String
    /// The card's id (`CARD=` in the name), when the name names one.
    public var card: String?
    /// Formats the device offers, when it could be opened to ask (hardware devices only).
    public var formats: [String]?
    /// Channel range, when known.
    public var channels: ClosedRange<Int>?
    /// Rate range in Hz, when known.
    public var rates: ClosedRange<Int>?
    /// Why the capabilities are missing (busy, permission), when they are.
    public var note: String?
}

/// The hardware and software parameters the source asks for.
struct ALSARequest {
    var format: MicrophoneSampleFormat?
    var channels: Int?
    var rate = 48_000
    var periodFrames = 480
    var bufferFrames = 4_800
}

/// One ALSA capture PCM: open, negotiate, read, timestamp, recover, close.
final class ALSAPCM {
    let name: String
    private var handle: OpaquePointer?
    private let status: OpaquePointer
    private(set) var setup: MicrophoneSetup?

    /// Opens `name` for capture (blocking mode). `configuration` is ALSA configuration text added to the
    /// system's (for PCMs defined by a test or an embedded setup); nil uses the system's configuration.
    init(name: String, configuration: String?) throws(MicrophoneError) {
        ALSALog.install()
        self.name = name
        var pcm: OpaquePointer?
        let code: Int32
        if let configuration {
            guard let config = ALSAConfig.merged(with: configuration) else {
                throw .unsupported(device: name, detail: "the ALSA configuration text does not parse")
            }
            defer { snd_config_delete(config) }
            code = snd_pcm_open_lconf(&pcm, name, SND_PCM_STREAM_CAPTURE, 0, config)
        } else {
            code = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, 0)
        }
        guard code >= 0, let pcm else { throw MicrophoneError.fromOpen(device: name, code: code) }
        var st: OpaquePointer?
        guard snd_pcm_status_malloc(&st) >= 0, let st else {
            snd_pcm_close(pcm)
            throw .call(device: name, call: "snd_pcm_status_malloc", code: -ENOMEM)
        }
        handle = pcm
        status = st
    }

    deinit {
        close()
        snd_pcm_status_free(status)
    }

    /// Closes the PCM (idempotent).
    func close() {
        if let handle { snd_pcm_close(handle) }
        handle = nil
    }

    private var pcm: OpaquePointer {
        get throws(MicrophoneError) {
            guard let handle else { throw .disconnected(device: name) }
            return handle
        }
    }

    /// What the device itself cannot do of `request` (empty when it can do all of it), without setting anything on
    /// the device. The rate and channels narrow the space first, as ``configure(_:device:throughPlugLayer:resampled:)``
    /// sets them, so a format offered only at another rate counts as missing.
    func missing(_ request: ALSARequest) throws(MicrophoneError) -> [String] {
        let pcm = try pcm
        let hw = try HardwareParameters(pcm, device: name)
        var missing: [String] = []
        if snd_pcm_hw_params_set_access(pcm, hw.pointer, SND_PCM_ACCESS_RW_INTERLEAVED) < 0 { missing.append("interleaved access") }
        if snd_pcm_hw_params_set_rate(pcm, hw.pointer, UInt32(request.rate), 0) < 0 { missing.append("\(request.rate) Hz") }
        let channelChoices = request.channels.map { [$0] } ?? [2, 1]
        if let channels = channelChoices.first(where: { snd_pcm_hw_params_test_channels(pcm, hw.pointer, UInt32($0)) >= 0 }) {
            snd_pcm_hw_params_set_channels(pcm, hw.pointer, UInt32(channels))
        } else {
            missing.append("\(channelChoices.map(String.init).joined(separator: " or ")) channel(s)")
        }
        if let format = request.format {
            if snd_pcm_hw_params_test_format(pcm, hw.pointer, format.alsa) < 0 { missing.append("format \(format.rawValue)") }
        } else if !MicrophoneSampleFormat.allCases.contains(where: { snd_pcm_hw_params_test_format(pcm, hw.pointer, $0.alsa) >= 0 }) {
            missing.append("a format among FLOAT_LE, S32_LE, S24_3LE, S16_LE (offered: \(hw.formats(pcm).joined(separator: ", ")))")
        }
        return missing
    }

    /// True when the device itself offers `channels` channels.
    func offers(channels: Int) -> Bool {
        guard let pcm = try? pcm, let hw = try? HardwareParameters(pcm, device: name) else { return false }
        return snd_pcm_hw_params_test_channels(pcm, hw.pointer, UInt32(channels)) >= 0
    }

    /// Sets the hardware and software parameters: interleaved, the best format (FLOAT_LE, S32_LE, S24_3LE,
    /// S16_LE) unless one is asked for, 2 channels else 1, the exact rate, the period and buffer sizes nearest
    /// the request, and CLOCK_MONOTONIC timestamps. The PCM is prepared but not started.
    func configure(_ request: ALSARequest, device: String, throughPlugLayer: Bool, resampled: Bool) throws(MicrophoneError) -> MicrophoneSetup {
        let pcm = try pcm
        let hw = try HardwareParameters(pcm, device: name)
        func check(_ code: Int32, _ call: String) throws(MicrophoneError) {
            if code < 0 { throw ALSAPCM.isDisconnect(code) ? .disconnected(device: name) : .call(device: name, call: call, code: code) }
        }
        try check(snd_pcm_hw_params_set_access(pcm, hw.pointer, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_set_access")
        // Rate and channels first: the format is then chosen among those the device has at that rate.
        try check(snd_pcm_hw_params_set_rate(pcm, hw.pointer, UInt32(request.rate), 0), "snd_pcm_hw_params_set_rate")
        let channelChoices = request.channels.map { [$0] } ?? [2, 1]
        guard let channels = channelChoices.first(where: { snd_pcm_hw_params_test_channels(pcm, hw.pointer, UInt32($0)) >= 0 }) else {
            throw .unsupported(device: name, detail: "it offers neither 1 nor 2 channels at \(request.rate) Hz")
        }
        try check(snd_pcm_hw_params_set_channels(pcm, hw.pointer, UInt32(channels)), "snd_pcm_hw_params_set_channels")
        let formats = request.format.map { [$0] } ?? MicrophoneSampleFormat.allCases
        guard let format = formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw.pointer, $0.alsa) >= 0 }) else {
            throw .unsupported(device: name, detail: "no usable sample format (offered: \(hw.formats(pcm).joined(separator: ", ")))")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw.pointer, format.alsa), "snd_pcm_hw_params_set_format")
        var period = snd_pcm_uframes_t(request.periodFrames)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw.pointer, &period, &direction), "snd_pcm_hw_params_set_period_size_near")
        var buffer = snd_pcm_uframes_t(max(request.bufferFrames, 4 * Int(period)))
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw.pointer, &buffer), "snd_pcm_hw_params_set_buffer_size_near")
        try check(snd_pcm_hw_params(pcm, hw.pointer), "snd_pcm_hw_params")
        snd_pcm_hw_params_get_period_size(hw.pointer, &period, &direction)
        snd_pcm_hw_params_get_buffer_size(hw.pointer, &buffer)

        var sw: OpaquePointer?
        try check(snd_pcm_sw_params_malloc(&sw), "snd_pcm_sw_params_malloc")
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), "snd_pcm_sw_params_current")
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, period), "snd_pcm_sw_params_set_avail_min")
        try check(snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE), "snd_pcm_sw_params_set_tstamp_mode")
        let monotonic = snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC) >= 0
        try check(snd_pcm_sw_params(pcm, sw), "snd_pcm_sw_params")
        try check(snd_pcm_prepare(pcm), "snd_pcm_prepare")
        let result = MicrophoneSetup(
            device: device, openedName: name, format: format, channels: channels, rate: request.rate,
            periodFrames: Int(period), bufferFrames: Int(buffer), throughPlugLayer: throughPlugLayer, resampled: resampled,
            monotonicTimestamps: monotonic)
        setup = result
        return result
    }

    /// Starts capturing (after ``configure(_:device:throughPlugLayer:resampled:)`` or a recovery).
    func start() throws(MicrophoneError) {
        let code = snd_pcm_start(try pcm)
        if code < 0 { throw ALSAPCM.isDisconnect(code) ? .disconnected(device: name) : .call(device: name, call: "snd_pcm_start", code: code) }
    }

    /// Waits up to `milliseconds` for a period: 1 ready, 0 timed out, negative an ALSA error (-EPIPE overrun,
    /// -ESTRPIPE suspended, -ENODEV gone).
    func wait(milliseconds: Int32) -> Int32 {
        guard let handle else { return -ENODEV }
        return snd_pcm_wait(handle, milliseconds)
    }

    /// Reads up to `frames` frames into `buffer` (which holds at least that many): the count read, or a negative
    /// ALSA error.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let handle else { return Int(-ENODEV) }
        return Int(snd_pcm_readi(handle, buffer, snd_pcm_uframes_t(frames)))
    }

    /// Frames ready to read now, or a negative ALSA error.
    func available() -> Int {
        guard let handle else { return Int(-ENODEV) }
        return Int(snd_pcm_avail_update(handle))
    }

    /// The status timestamp (ns of the PCM's clock; 0 when it has none) and the delay in frames at that time.
    func timestampAndDelay() -> (timestamp: UInt64, delay: Int)? {
        guard let handle, snd_pcm_status(handle, status) >= 0 else { return nil }
        var stamp = timespec()
        snd_pcm_status_get_htstamp(status, &stamp)
        let ns = UInt64(max(0, stamp.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, stamp.tv_nsec))
        return (ns, Int(snd_pcm_status_get_delay(status)))
    }

    /// Recovers from an overrun (-EPIPE) or suspend (-ESTRPIPE) and starts again; returns the error that
    /// could not be recovered, or nil.
    func recover(from code: Int32) -> Int32? {
        guard let handle else { return -ENODEV }
        let result = snd_pcm_recover(handle, code, 1)
        if result < 0 { return result }
        let started = snd_pcm_start(handle)
        return started < 0 && started != -EBADFD ? started : nil
    }

    /// ALSA's text for an error code.
    static func describe(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

    /// True when an error code means the device is gone.
    static func isDisconnect(_ code: Int32) -> Bool {
        let errno = -code
        return errno == ENODEV || errno == ENXIO || errno == EIO || errno == EBADFD || errno == ENOENT
    }

    // MARK: Listing

    /// The capture PCMs ALSA's name hints list (without `null`); with `capabilities`, each hardware one is opened to
    /// ask for its formats, channels and rates.
    static func captureDevices(capabilities withCapabilities: Bool = true) -> [MicrophoneInfo] {
        ALSALog.install()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var result: [MicrophoneInfo] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = hintValue(hint, "NAME"), name != "null" else { continue }
            let direction = hintValue(hint, "IOID")
            guard direction == nil || direction == "Input" else { continue }
            let description = (hintValue(hint, "DESC") ?? "").split(separator: "\n").joined(separator: " - ")
            var info = MicrophoneInfo(name: name, description: description)
            if let range = name.range(of: "CARD=") {
                info.card = String(name[range.upperBound...].prefix { $0 != "," })
            }
            if withCapabilities && name.hasPrefix("hw:") { capabilities(of: name, into: &info) }
            result.append(info)
        }
        return result
    }

    /// True when ALSA lists at least one capture PCM besides `null`.
    static func hasCaptureDevice() -> Bool {
        var card: Int32 = -1
        guard snd_card_next(&card) == 0, card >= 0 else { return false }
        return !captureDevices(capabilities: false).isEmpty
    }

    private static func capabilities(of name: String, into info: inout MicrophoneInfo) {
        var pcm: OpaquePointer?
        let code = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard code >= 0, let pcm else {
            info.note = describe(code)
            return
        }
        defer { snd_pcm_close(pcm) }
        guard let hw = try? HardwareParameters(pcm, device: name) else { return }
        info.formats = hw.formats(pcm)
        var low: UInt32 = 0
        var high: UInt32 = 0
        var direction: Int32 = 0
        if snd_pcm_hw_params_get_channels_min(hw.pointer, &low) >= 0, snd_pcm_hw_params_get_channels_max(hw.pointer, &high) >= 0, low <= high {
            info.channels = Int(low)...Int(high)
        }
        if snd_pcm_hw_params_get_rate_min(hw.pointer, &low, &direction) >= 0, snd_pcm_hw_params_get_rate_max(hw.pointer, &high, &direction) >= 0, low <= high {
            info.rates = Int(low)...Int(high)
        }
    }

    private static func hintValue(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}

/// A `snd_pcm_hw_params_t` filled with everything the PCM can do, freed on deinit.
private final class HardwareParameters {
    let pointer: OpaquePointer

    init(_ pcm: OpaquePointer, device: String) throws(MicrophoneError) {
        var params: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&params) >= 0, let params else {
            throw .call(device: device, call: "snd_pcm_hw_params_malloc", code: -ENOMEM)
        }
        pointer = params
        let code = snd_pcm_hw_params_any(pcm, params)
        if code < 0 {
            throw ALSAPCM.isDisconnect(code) ? .disconnected(device: device) : .call(device: device, call: "snd_pcm_hw_params_any", code: code)
        }
    }

    deinit { snd_pcm_hw_params_free(pointer) }

    /// The names of every format the PCM accepts.
    func formats(_ pcm: OpaquePointer) -> [String] {
        var names: [String] = []
        for raw in 0...Int32(SND_PCM_FORMAT_LAST.rawValue) {
            let format = snd_pcm_format_t(rawValue: raw)
            if snd_pcm_hw_params_test_format(pcm, pointer, format) >= 0, let name = snd_pcm_format_name(format) {
                names.append(String(cString: name))
            }
        }
        return names
    }
}

/// Builds the configuration tree for `snd_pcm_open_lconf`: the system's configuration plus extra text.
private enum ALSAConfig {
    static func merged(with text: String) -> OpaquePointer? {
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return nil }
        defer { snd_config_unref(top) }
        var copy: OpaquePointer?
        guard snd_config_copy(&copy, top) >= 0, let copy else { return nil }
        var input: OpaquePointer?
        let bytes = Array(text.utf8)
        let opened = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, bytes.count) }
        }
        guard opened >= 0, let input else {
            snd_config_delete(copy)
            return nil
        }
        defer { snd_input_close(input) }
        guard snd_config_load(copy, input) >= 0 else {
            snd_config_delete(copy)
            return nil
        }
        return copy
    }
}

/// Routes ALSA's own error messages (normally printed to stderr) into swift-log.
public enum ALSALog {
    /// Until ``route(to:)``: a logger that shows only errors, so listing devices on a machine without sound cards
    /// does not print ALSA's configuration chatter.
    private static let target = Mutex<Logger>({
        var logger = Logger(label: "camo.alsa")
        logger.logLevel = .error
        return logger
    }())
    private static let installed = Mutex(false)

    /// Sends ALSA's messages to `logger` from now on (at `warning`, with the ALSA source location).
    /// ALSA's handler is one per process, and another library in it may take it (GStreamer's alsa plugin does when
    /// it loads), so this installs ours again.
    public static func route(to logger: Logger) {
        target.withLock { $0 = logger }
        limiter.withLock { $0 = Limiter() }
        installed.withLock { $0 = true }
        setSink()
    }

    static func install() {
        let first = installed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        setSink()
    }

    private static func setSink() {
        _ = camo_alsa_set_log_sink { file, line, function, code, message in
            let text = message.map { String(cString: $0) } ?? ""
            let where_ = "\(file.map { String(cString: $0) } ?? "?"):\(line) \(function.map { String(cString: $0) } ?? "")"
            guard let (logger, suppressed) = ALSALog.admit() else { return }
            var metadata: Logger.Metadata = ["alsa": "\(where_)"]
            if code != 0 { metadata["error"] = "\(ALSAPCM.describe(code < 0 ? code : -code))" }
            if suppressed > 0 { metadata["suppressed"] = "\(suppressed) more in the last second" }
            logger.warning("ALSA: \(text)", metadata: metadata)
        }
    }

    /// At most 5 messages a second (a device in trouble can repeat one per read): the logger, and how many
    /// were dropped since the last one logged; nil to drop this one.
    private static func admit() -> (Logger, Int)? {
        let now = SystemMonotonicClock().now.nanoseconds
        return limiter.withLock { state -> (Logger, Int)? in
            if now &- state.windowStart >= 1_000_000_000 {
                state.windowStart = now
                state.count = 0
            }
            state.count += 1
            guard state.count <= 5 else {
                state.suppressed += 1
                return nil
            }
            defer { state.suppressed = 0 }
            return (target.withLock { $0 }, state.suppressed)
        }
    }

    private struct Limiter {
        var windowStart: UInt64 = 0
        var count = 0
        var suppressed = 0
    }

    private static let limiter = Mutex(Limiter())
}
