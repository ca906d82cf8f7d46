import CGStreamer
import CamoMedia
import Logging
import Synchronization

/// The one Opus encoder all viewers share: `appsrc (F32LE stereo 48 kHz) ! audioconvert ! opusenc ! appsink`.
/// Its packets keep the capture clock (PTS = the monotonic time of their first sample), so each viewer restamps
/// them against its own base time, on the same timeline as video.
final class WebRTCOpusEncoder: Sendable {
    private struct State {
        var stopped = false
        var nextTime: UInt64?
    }

    private let pipeline: GstElementRef
    private let source: GstElementRef
    private let sink: GstElementRef
    private let onPacket: @Sendable (GstBufferRef) -> Void
    private let state = Mutex(State())

    /// Starts the encoder; `onPacket` gets every Opus packet on GStreamer's thread (the buffer stays the
    /// encoder's: copy or ref it to keep it).
    init(logger: Logger, onPacket: @escaping @Sendable (GstBufferRef) -> Void) throws(LiveViewError) {
        let description = """
            appsrc name=pcm is-live=true format=time do-timestamp=false block=false max-bytes=384000 leaky-type=downstream \
            caps="audio/x-raw,format=F32LE,rate=48000,channels=2,layout=interleaved" \
            ! audioconvert ! opusenc bitrate=64000 frame-size=20 \
            ! appsink name=opus sync=false async=false emit-signals=true max-buffers=100 drop=true
            """
        let pipeline = try GstCalls.launch(description).get()
        guard let source = GstCalls.child(pipeline, "pcm"), let sink = GstCalls.child(pipeline, "opus") else {
            GstCalls.stop(pipeline)
            throw .negotiationFailed("the Opus encoder pipeline is incomplete")
        }
        self.pipeline = pipeline
        self.source = source
        self.sink = sink
        self.onPacket = onPacket
        let newSample: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutableRawPointer?) -> GstFlowReturn = { sink, data in
            guard let sink, let data else { return GST_FLOW_OK }
            let encoder = Unmanaged<WebRTCOpusEncoder>.fromOpaque(data).takeUnretainedValue()
            guard let sample = gst_app_sink_pull_sample(GstElementRef(pointer: sink).appSink),
                let buffer = camo_sample_take_buffer(sample)
            else { return GST_FLOW_OK }
            encoder.onPacket(GstBufferRef(pointer: buffer))
            gst_buffer_unref(buffer)
            return GST_FLOW_OK
        }
        GstCalls.connect(UnsafeMutableRawPointer(sink.pointer), "new-sample", unsafeBitCast(newSample, to: GCallback.self), context: self)
        GstCalls.watchBus(pipeline, context: self) { _, message, _ in
            if let message, camo_message_type(message) == GST_MESSAGE_ERROR {
                var text: UnsafeMutablePointer<gchar>?
                var debug: UnsafeMutablePointer<gchar>?
                camo_message_error_text(message, &text, &debug)
                Logger(label: "camo.live.webrtc").warning("webrtc: Opus encoder error: \(GstCalls.take(text) ?? "unknown")")
                _ = GstCalls.take(debug)
            }
            return GST_BUS_DROP
        }
        guard GstCalls.play(pipeline, baseTime: 0) else {
            stop()
            throw .negotiationFailed("the Opus encoder did not start")
        }
    }

    /// Encodes a chunk (never blocks: a full queue drops it).
    func push(_ chunk: AudioChunk) {
        guard chunk.sampleFrames > 0 else { return }
        state.withLock { state in
            guard !state.stopped else { return }
            let byteCount = chunk.sampleFrames * 2 * MemoryLayout<Float>.size
            let buffer = chunk.samples.withUnsafeBytes { bytes in
                camo_gst_buffer_new_copy(bytes.baseAddress, gsize(min(byteCount, bytes.count)))
            }
            guard let buffer else { return }
            let duration = UInt64(chunk.sampleFrames) * 1_000_000_000 / 48_000
            camo_gst_buffer_set_times(buffer, GstClockTime(chunk.firstSampleTime), GstClockTime(duration))
            if let next = state.nextTime, chunk.firstSampleTime > next + 40_000_000 || chunk.firstSampleTime + 40_000_000 < next {
                camo_gst_buffer_set_flags(buffer, GST_BUFFER_FLAG_DISCONT.rawValue)
            }
            state.nextTime = chunk.firstSampleTime + duration
            _ = gst_app_src_push_buffer(source.appSource, buffer)
        }
    }

    /// Stops the encoder and frees its pipeline; idempotent.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        GstCalls.stop(pipeline)
        source.release()
        sink.release()
    }
}
