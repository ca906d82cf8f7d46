import CALSA
import Glibc

/// A blocking ALSA playback PCM for the virtual microphone: interleaved S16_LE stereo at 48 kHz, the format every
/// program recording from snd-aloop's other end accepts. The one file of this module that calls ALSA.
final class ALSAPlayback {
    /// The device's name (`hw:CamoMic,0,0`).
    let name: String
    /// Frames per period and in the whole buffer, as the device granted them.
    let periodFrames: Int
    let bufferFrames: Int
    /// Underruns of the device recovered (the writer was late).
    private(set) var xruns = 0
    private var pcm: OpaquePointer?

    /// Opens `name` for playback with periods near `periodFrames` and a buffer near `bufferFrames`.
    init(name: String, rate: Int = 48_000, periodFrames: Int = 480, bufferFrames: Int = 1_920) throws(VirtualDeviceError) {
        Self.quietALSA
        self.name = name
        var handle: OpaquePointer?
        var code = snd_pcm_open(&handle, name, SND_PCM_STREAM_PLAYBACK, 0)
        guard code >= 0, let handle else { throw Self.error(name, "cannot open it for playback", code) }
        func fail(_ call: String, _ code: Int32) -> VirtualDeviceError {
            snd_pcm_close(handle)
            return Self.error(name, "\(call) failed", code)
        }
        var hw: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hw) >= 0, let hw else { throw fail("snd_pcm_hw_params_malloc", -ENOMEM) }
        defer { snd_pcm_hw_params_free(hw) }
        code = snd_pcm_hw_params_any(handle, hw)
        if code < 0 { throw fail("snd_pcm_hw_params_any", code) }
        code = snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        if code < 0 { throw fail("setting interleaved access", code) }
        code = snd_pcm_hw_params_set_format(handle, hw, SND_PCM_FORMAT_S16_LE)
        if code < 0 { throw fail("setting S16_LE (another program may have fixed the loopback's format)", code) }
        code = snd_pcm_hw_params_set_channels(handle, hw, 2)
        if code < 0 { throw fail("setting 2 channels", code) }
        code = snd_pcm_hw_params_set_rate(handle, hw, UInt32(rate), 0)
        if code < 0 { throw fail("setting \(rate) Hz (a program recording from the other end may hold another rate)", code) }
        var period = snd_pcm_uframes_t(periodFrames)
        var direction: Int32 = 0
        code = snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &direction)
        if code < 0 { throw fail("setting the period", code) }
        var buffer = snd_pcm_uframes_t(bufferFrames)
        code = snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer)
        if code < 0 { throw fail("setting the buffer", code) }
        code = snd_pcm_hw_params(handle, hw)
        if code < 0 { throw fail("snd_pcm_hw_params", code) }

        var sw: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&sw) >= 0, let sw else { throw fail("snd_pcm_sw_params_malloc", -ENOMEM) }
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(handle, sw)
        // Starts once half the buffer is written, so the first periods do not underrun.
        snd_pcm_sw_params_set_start_threshold(handle, sw, buffer / 2)
        snd_pcm_sw_params_set_avail_min(handle, sw, period)
        code = snd_pcm_sw_params(handle, sw)
        if code < 0 { throw fail("snd_pcm_sw_params", code) }
        self.periodFrames = Int(period)
        self.bufferFrames = Int(buffer)
        pcm = handle
    }

    deinit { close() }

    /// Closes the PCM (idempotent).
    func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
    }

    /// Frames written but not yet played (0 when the device cannot say).
    func delay() -> Int {
        guard let pcm else { return 0 }
        var frames: snd_pcm_sframes_t = 0
        return snd_pcm_delay(pcm, &frames) >= 0 ? max(0, Int(frames)) : 0
    }

    /// Writes interleaved stereo frames, blocking until the device has taken them all; an underrun is recovered
    /// and counted. Throws when the device is gone.
    func write(_ samples: [Int16]) throws(VirtualDeviceError) {
        guard let pcm else { throw Self.error(name, "it is closed", -EBADF) }
        var offset = 0
        let frames = samples.count / 2
        while offset < frames {
            let written = samples.withUnsafeBufferPointer { buffer in
                snd_pcm_writei(pcm, buffer.baseAddress! + offset * 2, snd_pcm_uframes_t(frames - offset))
            }
            if written >= 0 {
                offset += Int(written)
                continue
            }
            let code = Int32(written)
            if code == -EAGAIN || code == -EINTR { continue }
            if code == -EPIPE { xruns += 1 }
            let recovered = snd_pcm_recover(pcm, code, 1)
            if recovered < 0 { throw Self.error(name, "writing failed", code) }
        }
    }

    /// ALSA prints its own messages to stderr ("Cannot get card index for …"); ours say the same with what to do,
    /// so its are dropped (once per process).
    private static let quietALSA: Void = {
        _ = camo_alsa_set_log_sink { _, _, _, _, _ in }
    }()

    private static func error(_ name: String, _ what: String, _ code: Int32) -> VirtualDeviceError {
        .microphone(device: name, reason: "\(what): \(String(cString: snd_strerror(code)))")
    }
}
