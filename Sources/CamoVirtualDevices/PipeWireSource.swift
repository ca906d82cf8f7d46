import CPipeWire
import Foundation
import Glibc

/// The virtual microphone as a PipeWire source: a node of media class `Audio/Source`, named after the agent, that
/// every PipeWire and PulseAudio client lists as an input. Interleaved S16LE stereo at 48 kHz, as from snd-aloop.
/// The one file of this module that calls libpipewire.
///
/// PipeWire pulls: its data thread asks for a quantum of frames whenever the graph runs. The microphone's thread
/// pushes periods into a small ring ``write(_:)`` blocks on, so the graph's clock paces it as the ALSA device's does.
/// When nobody records the source the graph does not run it; then a write waits one period and the oldest frames
/// make room, so the thread keeps time by itself and nothing piles up.
final class PipeWireSource {
    /// The node's name (`camo-kitchen`).
    let nodeName: String
    /// Frames per period the microphone writes, and frames the ring holds (the source's buffer).
    let periodFrames: Int
    let bufferFrames: Int
    private let shared: Shared
    private var loop: OpaquePointer?
    private var context: OpaquePointer?
    private var core: OpaquePointer?
    private let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)

    /// What the data thread and the writer share, under `condition`.
    private final class Shared: @unchecked Sendable {
        let condition = NSCondition()
        var stream: OpaquePointer?
        var ring: [Int16]
        var start = 0
        var count = 0
        var state = PW_STREAM_STATE_UNCONNECTED
        var failure: String?
        var written = false
        var xruns = 0
        var unread = 0
        /// When PipeWire last took frames, and when an unread period is due while nobody does.
        var lastRead: Date?
        var idleDue: Date?

        init(frames: Int) { ring = [Int16](repeating: 0, count: frames * 2) }

        /// Copies `frames` frames out to PipeWire's buffer (silence for what is missing) and wakes the writer.
        func read(into output: UnsafeMutablePointer<Int16>, frames: Int) {
            condition.lock()
            let wanted = frames * 2
            let available = min(wanted, count)
            let first = min(available, ring.count - start)
            ring.withUnsafeBufferPointer { ring in
                output.update(from: ring.baseAddress! + start, count: first)
                if available > first { (output + first).update(from: ring.baseAddress!, count: available - first) }
            }
            if available < wanted {
                (output + available).update(repeating: 0, count: wanted - available)
                if written { xruns += 1 }
            }
            start = (start + available) % ring.count
            count -= available
            lastRead = Date()
            condition.broadcast()
            condition.unlock()
        }

        /// Appends `samples` (`period` seconds of sound) once there is room, and returns the failure if there is one.
        /// While PipeWire reads, it waits for room; while nobody has read for 0.2 s, it waits until the period is due
        /// on its own schedule and makes room from the oldest frames, so the writer keeps time.
        func write(_ samples: [Int16], period: TimeInterval) -> String? {
            condition.lock()
            defer { condition.unlock() }
            let wanted = min(samples.count, ring.count)
            while failure == nil && ring.count - count < wanted {
                let now = Date()
                let reading = lastRead.map { now.timeIntervalSince($0) < 0.2 } ?? false
                if reading {
                    idleDue = nil
                    _ = condition.wait(until: now.addingTimeInterval(0.2))
                    continue
                }
                var due = idleDue ?? now.addingTimeInterval(period)
                if due < now.addingTimeInterval(-1) { due = now }  // far behind (the machine slept): start afresh
                if !condition.wait(until: due) {
                    idleDue = due.addingTimeInterval(period)
                    let drop = wanted - (ring.count - count)
                    start = (start + drop) % ring.count
                    count -= drop
                    unread += drop / 2
                    break
                }
            }
            if let failure { return failure }
            var end = (start + count) % ring.count
            for sample in samples.suffix(wanted) {
                ring[end] = sample
                end += 1
                if end == ring.count { end = 0 }
            }
            count += wanted
            written = true
            return nil
        }
    }

    /// Connects to the PipeWire daemon of this user (`$XDG_RUNTIME_DIR/pipewire-0`, or `remote`: a socket's name
    /// there or its absolute path) and adds the source node `nodeName` ("camo-kitchen"), shown as `description`
    /// ("Camo: kitchen"). Throws when there is no daemon or the node is refused.
    init(nodeName: String, description: String, remote: String? = nil, rate: Int = 48_000, periodFrames: Int = 480,
         bufferFrames: Int = 2_400) throws(VirtualDeviceError) {
        Self.initialized
        self.nodeName = nodeName
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        shared = Shared(frames: bufferFrames)
        hook.initialize(to: spa_hook())
        events.initialize(to: pw_stream_events())
        events.pointee.version = camo_pw_stream_events_version()
        events.pointee.process = { data in
            guard let data else { return }
            let shared = Unmanaged<Shared>.fromOpaque(data).takeUnretainedValue()
            // close() clears it under the lock, then destroys the stream, which waits for this callback to return.
            shared.condition.lock()
            let current = shared.stream
            shared.condition.unlock()
            guard let stream = current, let buffer = pw_stream_dequeue_buffer(stream) else { return }
            defer { pw_stream_queue_buffer(stream, buffer) }
            guard let spaBuffer = buffer.pointee.buffer, let datas = spaBuffer.pointee.datas, let memory = datas[0].data else { return }
            var frames = Int(datas[0].maxsize) / 4
            if buffer.pointee.requested > 0 { frames = min(frames, Int(buffer.pointee.requested)) }
            shared.read(into: memory.assumingMemoryBound(to: Int16.self), frames: frames)
            if let chunk = datas[0].chunk {
                chunk.pointee.offset = 0
                chunk.pointee.stride = 4
                chunk.pointee.size = UInt32(frames * 4)
            }
        }
        events.pointee.state_changed = { data, _, state, error in
            guard let data else { return }
            let shared = Unmanaged<Shared>.fromOpaque(data).takeUnretainedValue()
            shared.condition.lock()
            let wasConnected = shared.state.rawValue >= PW_STREAM_STATE_PAUSED.rawValue
            shared.state = state
            if state == PW_STREAM_STATE_ERROR {
                shared.failure = "PipeWire stopped the source: \(error.map { String(cString: $0) } ?? "an error")"
            } else if state == PW_STREAM_STATE_UNCONNECTED && wasConnected {
                shared.failure = "the PipeWire daemon went away"
            }
            shared.condition.broadcast()
            shared.condition.unlock()
        }

        guard let loop = pw_thread_loop_new("camo-pipewire", nil) else { throw fail("cannot make PipeWire's thread loop") }
        self.loop = loop
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else { throw fail("cannot make a PipeWire context") }
        self.context = context
        guard pw_thread_loop_start(loop) >= 0 else { throw fail("cannot start PipeWire's thread loop") }
        pw_thread_loop_lock(loop)
        var connection: UnsafeMutablePointer<pw_properties>?
        if let remote {
            connection = pw_properties_new_string("")
            pw_properties_set(connection, "remote.name", remote)
        }
        guard let core = pw_context_connect(context, connection, 0) else {
            let reason = String(cString: strerror(errno))
            pw_thread_loop_unlock(loop)
            throw fail("cannot connect to the PipeWire daemon at \(Self.socketPath(remote: remote) ?? "its socket (XDG_RUNTIME_DIR is not set)") (\(reason))")
        }
        self.core = core
        let properties = pw_properties_new_string("media.type=Audio media.class=Audio/Source node.latency=\(periodFrames)/\(rate)")
        pw_properties_set(properties, "node.name", nodeName)
        pw_properties_set(properties, "node.description", description)
        pw_properties_set(properties, "media.name", description)
        guard let stream = pw_stream_new(core, nodeName, properties) else {
            pw_thread_loop_unlock(loop)
            throw fail("PipeWire refused the stream (\(String(cString: strerror(errno))))")
        }
        shared.stream = stream
        pw_stream_add_listener(stream, hook, events, Unmanaged.passUnretained(shared).toOpaque())
        var podBuffer = [UInt8](repeating: 0, count: 1_024)
        let code = podBuffer.withUnsafeMutableBufferPointer { bytes -> Int32 in
            var params: [UnsafePointer<spa_pod>?] = [camo_pw_s16_stereo_format(bytes.baseAddress, UInt32(bytes.count), UInt32(rate))]
            return pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, camo_pw_source_flags(), &params, 1)
        }
        pw_thread_loop_unlock(loop)
        guard code >= 0 else { throw fail("PipeWire refused the source's format (\(String(cString: strerror(-code))))") }
        // The node exists once the stream is paused (configured) or streaming.
        shared.condition.lock()
        let deadline = Date(timeIntervalSinceNow: 5)
        while shared.failure == nil && shared.state.rawValue < PW_STREAM_STATE_PAUSED.rawValue && shared.condition.wait(until: deadline) {}
        let state = shared.state, failure = shared.failure
        shared.condition.unlock()
        if let failure { throw fail(failure) }
        guard state.rawValue >= PW_STREAM_STATE_PAUSED.rawValue else {
            throw fail("the source was not ready within 5 s (state \(String(cString: pw_stream_state_as_string(state))))")
        }
    }

    deinit {
        close()
        hook.deallocate()
        events.deallocate()
    }

    /// pw_init, once per process.
    private static let initialized: Void = pw_init(nil, nil)

    /// Closes what was opened so far and returns the error to throw.
    private func fail(_ reason: String) -> VirtualDeviceError {
        close()
        return .pipeWire(node: nodeName, reason: reason)
    }

    /// Removes the node and disconnects (idempotent).
    func close() {
        if let loop {
            pw_thread_loop_lock(loop)
            shared.condition.lock()
            let stream = shared.stream
            shared.stream = nil
            if shared.failure == nil { shared.failure = "the source was closed" }
            shared.condition.broadcast()
            shared.condition.unlock()
            if let stream { pw_stream_destroy(stream) }
            if let core { pw_core_disconnect(core) }
            core = nil
            pw_thread_loop_unlock(loop)
            pw_thread_loop_stop(loop)
        }
        if let context { pw_context_destroy(context) }
        context = nil
        if let loop { pw_thread_loop_destroy(loop) }
        loop = nil
    }

    /// Shows the node as `description` (its `node.description` and `media.name`) from now on.
    func describe(_ description: String) {
        guard let loop else { return }
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        shared.condition.lock()
        let current = shared.stream
        shared.condition.unlock()
        guard let stream = current, let properties = pw_properties_new_string("") else { return }
        defer { pw_properties_free(properties) }
        pw_properties_set(properties, "node.description", description)
        pw_properties_set(properties, "media.name", description)
        _ = pw_stream_update_properties(stream, &properties.pointee.dict)
    }

    /// Frames written but not yet taken by PipeWire.
    func delay() -> Int {
        shared.condition.lock()
        defer { shared.condition.unlock() }
        return shared.count / 2
    }

    /// Times PipeWire asked for more than was written (the writer was late).
    var xruns: Int {
        shared.condition.lock()
        defer { shared.condition.unlock() }
        return shared.xruns
    }

    /// Frames dropped because nobody recorded the source.
    var unreadFrames: Int {
        shared.condition.lock()
        defer { shared.condition.unlock() }
        return shared.unread
    }

    /// Writes interleaved stereo frames, blocking until PipeWire has made room (or a period passed with nobody
    /// reading). Throws when the daemon or the node is gone.
    func write(_ samples: [Int16]) throws(VirtualDeviceError) {
        if let failure = shared.write(samples, period: Double(samples.count / 2) / 48_000) {
            throw .pipeWire(node: nodeName, reason: failure)
        }
    }

    /// Where the client library looks for the daemon: `remote` or `PIPEWIRE_REMOTE` (an absolute path, or a name
    /// in `XDG_RUNTIME_DIR`), else `$XDG_RUNTIME_DIR/pipewire-0`.
    static func socketPath(remote: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let name = remote ?? environment["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0"
        if name.hasPrefix("/") { return name }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return runtime + "/" + name
    }

    /// Whether a PipeWire daemon may run for this user: `PIPEWIRE_REMOTE` is set or `$XDG_RUNTIME_DIR/pipewire-0`
    /// exists (connecting says for sure).
    static func daemonSocketExists(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        socketPath(remote: nil, environment: environment).map { FileManager.default.fileExists(atPath: $0) } ?? false
    }
}

/// `@unchecked Sendable`: one thread at a time owns it (opened by the caller, then used by the playback thread only;
/// PipeWire's data thread touches only the shared ring, under its lock).
extension PipeWireSource: VirtualMicrophoneSink, @unchecked Sendable {}
