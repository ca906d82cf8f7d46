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
        guard let sink = SpeakerSink.description(output) else { throw .talkbackUnsupported }
        let description = """
            appsrc name=talk is-live=true format=time do-timestamp=true block=false max-bytes=960000 leaky-type=downstream \
            caps="\(SpeakerSink.sourceCaps)" ! \(sink)
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

    /// Applies the speaker settings (speakerVolumeLevel 0–100, speakerMuted).
    func setVolume(percent: Int, muted: Bool) {
        SpeakerSink.setVolume(volume, percent: percent, muted: muted)
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
