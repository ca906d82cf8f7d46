import CGStreamer
import Foundation
import Synchronization

/// GStreamer for the whole process: `gst_init` once, and one GLib main loop on its own thread, on the default
/// main context, where webrtcbin's and gst-rtsp-server's sources and callbacks run. Nothing here blocks capture:
/// the loop's thread only dispatches GStreamer's own events.
public final class GStreamerRuntime: Sendable {
    /// The process's runtime (started on first use).
    public static let shared = GStreamerRuntime()

    private struct State {
        var loop: OpaquePointer?
        var thread: Thread?
        var version = ""
    }

    private let state = Mutex(State())

    private init() {}

    /// Initializes GStreamer and starts the main loop thread (once; later calls return at once).
    /// - Returns: GStreamer's version string, e.g. "GStreamer 1.22.0".
    @discardableResult
    public func start() -> String {
        state.withLock { state in
            if state.loop != nil { return state.version }
            gst_init(nil, nil)
            let loop = g_main_loop_new(nil, 0)
            state.loop = loop
            let text = gst_version_string()
            state.version = text.map { String(cString: $0) } ?? "GStreamer"
            if let text { g_free(text) }
            let thread = Thread { [loopBits = UInt(bitPattern: loop)] in
                g_main_loop_run(OpaquePointer(bitPattern: loopBits))
            }
            thread.name = "camo.gstreamer"
            thread.start()
            state.thread = thread
            return state.version
        }
    }

    /// Whether an element factory is installed (`webrtcbin`, `opusenc`, `alsasink`, ...).
    public func hasElement(_ name: String) -> Bool {
        start()
        guard let factory = gst_element_factory_find(name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }
}
