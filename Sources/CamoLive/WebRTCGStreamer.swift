import CGStreamer

/// A GStreamer element (or bin) reference shared between threads. GStreamer objects are reference counted and
/// thread-safe; whoever holds one of these owns one reference and releases it with ``release()``.
struct GstElementRef: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GstElement>

    /// The element as an appsrc.
    var appSource: UnsafeMutablePointer<GstAppSrc> { UnsafeMutablePointer(OpaquePointer(pointer)) }
    /// The element as an appsink.
    var appSink: UnsafeMutablePointer<GstAppSink> { UnsafeMutablePointer(OpaquePointer(pointer)) }
    /// The element as a bin.
    var bin: UnsafeMutablePointer<GstBin> { UnsafeMutablePointer(OpaquePointer(pointer)) }

    func release() { gst_object_unref(UnsafeMutableRawPointer(pointer)) }
}

/// A GstBuffer reference handed between threads (one reference owned by the holder).
struct GstBufferRef: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GstBuffer>
}

/// The small set of GStreamer calls CamoLive's WebRTC side makes, with the unsafe pointer work kept here.
enum GstCalls {
    /// A pipeline from a gst-launch description, or the parser's message.
    static func launch(_ description: String) -> Result<GstElementRef, LiveViewError> {
        var error: UnsafeMutablePointer<GError>?
        let element = gst_parse_launch(description, &error)
        let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } }
        if let error { g_error_free(error) }
        guard let element, message == nil else {
            if let element { gst_object_unref(UnsafeMutableRawPointer(element)) }
            return .failure(.negotiationFailed("GStreamer could not build the pipeline: \(message ?? "unknown error")"))
        }
        return .success(GstElementRef(pointer: camo_gst_as_pipeline(element)))
    }

    /// A bin from a gst-launch description whose unlinked pads are ghosted ("sink", "src").
    static func bin(_ description: String) -> GstElementRef? {
        var error: UnsafeMutablePointer<GError>?
        let element = gst_parse_bin_from_description(description, 1, &error)
        if let error { g_error_free(error) }
        return element.map { GstElementRef(pointer: $0) }
    }

    /// The child named `name` (a new reference).
    static func child(_ bin: GstElementRef, _ name: String) -> GstElementRef? {
        camo_gst_bin_get_by_name(bin.pointer, name).map { GstElementRef(pointer: $0) }
    }

    /// Now on GStreamer's system clock, which is CLOCK_MONOTONIC (the agent's capture clock), ns.
    static func monotonicNow() -> UInt64 {
        let clock = gst_system_clock_obtain()
        defer { gst_object_unref(UnsafeMutableRawPointer(clock)) }
        return UInt64(gst_clock_get_time(clock))
    }

    /// Starts a pipeline with a fixed base time (its running time is then `clock - baseTime` on the monotonic
    /// system clock, so buffers stamped `captureTime - baseTime` carry capture instants).
    static func play(_ pipeline: GstElementRef, baseTime: UInt64) -> Bool {
        let clock = gst_system_clock_obtain()
        gst_pipeline_use_clock(UnsafeMutablePointer(OpaquePointer(pipeline.pointer)), clock)
        gst_object_unref(UnsafeMutableRawPointer(clock))
        gst_element_set_start_time(pipeline.pointer, camo_gst_clock_time_none())
        gst_element_set_base_time(pipeline.pointer, GstClockTime(baseTime))
        return gst_element_set_state(pipeline.pointer, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE
    }

    /// Stops a pipeline (state NULL, which joins its streaming threads) and releases it. Never call from one of
    /// its own streaming threads.
    static func stop(_ pipeline: GstElementRef) {
        gst_element_set_state(pipeline.pointer, GST_STATE_NULL)
        if let bus = gst_element_get_bus(pipeline.pointer) {
            gst_bus_set_sync_handler(bus, nil, nil, nil)
            gst_object_unref(UnsafeMutableRawPointer(bus))
        }
        pipeline.release()
    }

    /// Sends end-of-stream into a pipeline and waits up to `timeout` for it to come out (files get their headers).
    static func drain(_ pipeline: GstElementRef, timeout: Duration) {
        gst_element_send_event(pipeline.pointer, gst_event_new_eos())
        guard let bus = gst_element_get_bus(pipeline.pointer) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        let nanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000)
        let types = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        if let message = gst_bus_timed_pop_filtered(bus, GstClockTime(nanoseconds), types) { gst_message_unref(message) }
    }

    /// Connects a GObject signal to a C callback; `context` is retained for as long as the handler exists.
    static func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: GCallback, context: AnyObject) {
        let data = Unmanaged.passRetained(context).toOpaque()
        _ = camo_g_signal_connect_full(instance, signal, handler, data) { data, _ in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
    }

    /// Routes every bus message of `pipeline` to `handler` on the posting thread (messages are then dropped).
    static func watchBus(_ pipeline: GstElementRef, context: AnyObject, _ handler: GstBusSyncHandler) {
        guard let bus = gst_element_get_bus(pipeline.pointer) else { return }
        gst_bus_set_sync_handler(bus, handler, Unmanaged.passRetained(context).toOpaque()) { data in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        gst_object_unref(UnsafeMutableRawPointer(bus))
    }

    /// Emits an action through `emit` with a new promise, and waits up to `timeout` for the promise to settle.
    /// Returns the settled promise (the caller unrefs it) or nil when it did not settle in time.
    static func settle(
        timeout: Duration, _ emit: (UnsafeMutablePointer<GstPromise>) -> Void
    ) async -> UnsafeMutablePointer<GstPromise>? {
        let signal = WebRTCSignal()
        let promise = gst_promise_new_with_change_func(
            { _, data in
                guard let data else { return }
                Unmanaged<WebRTCSignal>.fromOpaque(data).takeUnretainedValue().fire()
            },
            Unmanaged.passRetained(signal).toOpaque(),
            { data in
                guard let data else { return }
                Unmanaged<WebRTCSignal>.fromOpaque(data).release()
            })
        guard let promise else { return nil }
        emit(promise)
        if await signal.wait(timeout: timeout) { return promise }
        gst_promise_interrupt(promise)
        gst_promise_unref(promise)
        return nil
    }

    /// Takes a C string GLib allocated, as a Swift string.
    static func take(_ text: UnsafeMutablePointer<gchar>?) -> String? {
        guard let text else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }
}
