import Foundation
import CGStreamer
import Logging
import Synchronization

/// The talkback output while someone talks: `appsrc (F32LE stereo 48 kHz) ! audioconvert ! audioresample !
/// volume ! <ALSA sink or WAV file>`. Opened at talkback start and closed at its end, so the device is held only
/// while a viewer talks (and another program, or the next talker, can use it afterwards).
final class WebRTCSpeaker: Sendable {
    private let pipeline: GstElementRef
    private let source: GstElementRef
    private let volume: GstElementRef
    private let stopped = Mutex(false)

    /// Opens `output` at `volumePercent` (0–100), muted or not.
    init(output: SpeakerOutput, volumePercent: Int, muted: Bool) throws(LiveViewError) {
        let sink: String
        switch output {
        case .none:
            throw .talkbackUnsupported
        case .alsa(let device):
            let chosen = ["", "auto", "default"].contains(device.lowercased()) ? "" : " device=\(Self.quoted(device))"
            sink = "alsasink\(chosen) sync=false async=false"
        case .wavFile(let path):
            sink = "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(Self.quoted(path)) sync=false async=false"
        }
        let description = """
            appsrc name=talk is-live=true format=time do-timestamp=true block=false max-bytes=960000 leaky-type=downstream \
            caps="audio/x-raw,format=F32LE,rate=48000,channels=2,layout=interleaved" \
            ! audioconvert ! audioresample ! volume name=volume ! \(sink)
            """
        let pipeline: GstElementRef
        switch GstCalls.launch(description) {
        case .success(let launched): pipeline = launched
        case .failure(let error): throw .speakerFailed("\(error)")
        }
        guard let source = GstCalls.child(pipeline, "talk"), let volume = GstCalls.child(pipeline, "volume") else {
            GstCalls.stop(pipeline)
            throw .speakerFailed("the speaker pipeline is incomplete")
        }
        self.pipeline = pipeline
        self.source = source
        self.volume = volume
        setVolume(percent: volumePercent, muted: muted)
        guard GstCalls.play(pipeline, baseTime: GstCalls.monotonicNow()) else {
            stop()
            throw .speakerFailed("the output did not open")
        }
    }

    /// A value quoted for a gst-launch description.
    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Applies the speaker settings (speakerVolumeLevel 0–100, speakerMuted).
    func setVolume(percent: Int, muted: Bool) {
        camo_g_object_set_double(volume.pointer, "volume", Double(min(max(percent, 0), 100)) / 100)
        camo_g_object_set_bool(volume.pointer, "mute", muted ? 1 : 0)
    }

    /// Plays a buffer of decoded talkback audio (takes the buffer's reference).
    func play(_ buffer: GstBufferRef) {
        defer { gst_buffer_unref(buffer.pointer) }
        stopped.withLock { stopped in
            guard !stopped, let timeless = camo_gst_buffer_retimed(buffer.pointer, camo_gst_clock_time_none()) else { return }
            _ = gst_app_src_push_buffer(source.appSource, timeless)
        }
    }

    /// Drains (a WAV file gets its final header) and closes the output; idempotent.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        GstCalls.drain(pipeline, timeout: .seconds(2))
        GstCalls.stop(pipeline)
        source.release()
        volume.release()
    }
}
