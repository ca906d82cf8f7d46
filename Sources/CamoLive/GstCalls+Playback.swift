import CGStreamer

/// The GStreamer calls of playing one finished sound (the doorbell's chime), with the pointer work kept here.
extension GstCalls {
    /// How a pipeline ended.
    enum PipelineEnd: Sendable, Hashable {
        /// End-of-stream came out of the sink: everything was played (or written).
        case ended
        /// An element posted an error: its text.
        case failed(String)
        /// Neither came within the time allowed.
        case timedOut
    }

    /// Sets a `volume` element's level (0–1) and mute.
    static func setVolume(_ volume: GstElementRef, level: Double, muted: Bool) {
        camo_g_object_set_double(volume.pointer, "volume", level)
        camo_g_object_set_bool(volume.pointer, "mute", muted ? 1 : 0)
    }

    /// Pushes all of `samples` (interleaved F32 at `rate` frames a second, `channels` channels) into an appsrc as one
    /// buffer stamped from 0, then end-of-stream. False when the appsrc refused it.
    static func pushWhole(_ source: GstElementRef, samples: [Float], rate: Int, channels: Int) -> Bool {
        let buffer = samples.withUnsafeBytes { camo_gst_buffer_new_copy($0.baseAddress, gsize($0.count)) }
        guard let buffer else { return false }
        let frames = UInt64(samples.count / max(channels, 1))
        camo_gst_buffer_set_times(buffer, 0, GstClockTime(frames * 1_000_000_000 / UInt64(max(rate, 1))))
        guard gst_app_src_push_buffer(source.appSource, buffer) == GST_FLOW_OK else { return false }
        return gst_app_src_end_of_stream(source.appSource) == GST_FLOW_OK
    }

    /// Sets a pipeline playing; the error it posted when it cannot (a busy or missing device), else nil.
    static func start(_ pipeline: GstElementRef) -> String? {
        guard gst_element_set_state(pipeline.pointer, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE else { return nil }
        if case .failed(let text) = waitForEnd(pipeline, timeout: 0) { return text }
        return "the output did not open"
    }

    /// Waits up to `timeout` ns for end-of-stream or an error on the pipeline's bus.
    static func waitForEnd(_ pipeline: GstElementRef, timeout: UInt64) -> PipelineEnd {
        guard let bus = gst_element_get_bus(pipeline.pointer) else { return .failed("the pipeline has no bus") }
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        let types = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        guard let message = gst_bus_timed_pop_filtered(bus, GstClockTime(timeout), types) else { return .timedOut }
        defer { gst_message_unref(message) }
        guard camo_message_type(message) == GST_MESSAGE_ERROR else { return .ended }
        var text: UnsafeMutablePointer<gchar>?
        var debug: UnsafeMutablePointer<gchar>?
        camo_message_error_text(message, &text, &debug)
        _ = take(debug)
        return .failed(take(text) ?? "unknown error")
    }
}
