import CamoMedia
import Dispatch
import Logging
import Synchronization

/// Where the virtual camera's converted frames go: the v4l2loopback device, or a test's recorder.
public protocol VirtualCameraSink: AnyObject, Sendable {
    /// Writes one whole frame of the camera's format.
    func write(_ bytes: [UInt8]) throws(VirtualDeviceError)
    /// Closes the sink.
    func close()
}

/// The agent's picture as a webcam: frames handed to ``show(_:)`` are converted (libyuv) and written to the sink
/// on the camera's own queue, so the session's thread never waits for the device; the filler picture
/// (``VirtualCameraFeed``) keeps the device fed while the agent is away. Thread-safe.
public final class VirtualCamera: Sendable {
    /// What has been written.
    public struct Statistics: Sendable, Equatable {
        /// Where the feed is.
        public var state: VirtualCameraFeed.State
        /// The agent's frames written.
        public var framesWritten: UInt64
        /// Filler frames written.
        public var fillerWritten: UInt64
        /// Frames replaced by a newer one before they were written (the device or the conversion was slow).
        public var framesReplaced: UInt64
        /// Times the agent went away while streaming.
        public var interruptions: Int
        /// Failed writes.
        public var writeErrors: UInt64
        /// The last failure's sentence, if any.
        public var lastError: String?
    }

    /// The format written.
    public let format: VirtualCameraFormat
    private let sink: any VirtualCameraSink
    private let clock: any MonotonicClock
    private let logger: Logger
    private let queue = DispatchQueue(label: "camo.studio.virtual-camera")
    private let state: Mutex<Inner>
    private let ticker = Mutex<Task<Void, Never>?>(nil)
    /// The converted frame, reused from frame to frame (touched only on `queue`).
    private let converted = ConversionBuffer()

    private struct Inner {
        var feed: VirtualCameraFeed
        /// The newest frame not yet written, and whether a write is queued.
        var pending: VideoFrame?
        var writeQueued = false
        var replaced: UInt64 = 0
        var writeErrors: UInt64 = 0
        var lastError: String?
        /// The last frame written (the filler dims it) and the filler's bytes, made once per absence.
        var lastFrame: VideoFrame?
        var filler: [UInt8]?
        var stopped = false
        /// When the last held frame is due (DispatchTime's uptime ns).
        var lastDue: UInt64 = 0
    }

    /// Feeds `sink` with `format`.
    public init(sink: any VirtualCameraSink, format: VirtualCameraFormat, clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger) {
        self.sink = sink
        self.format = format
        self.clock = clock
        self.logger = logger
        state = Mutex(Inner(feed: VirtualCameraFeed(framesPerSecond: format.framesPerSecond)))
    }

    /// Opens the v4l2loopback device at `path` with `format` and feeds it.
    public convenience init(device path: String, format: VirtualCameraFormat, clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger) throws(VirtualDeviceError) {
        self.init(sink: try LoopbackSink(path: path, format: format), format: format, clock: clock, logger: logger)
    }

    /// The device's card label (what applications list), when the sink is a loopback device.
    public var card: String? { (sink as? LoopbackSink)?.card }

    /// Starts the ticker that writes filler while no frames come (at once: the device gets its first picture now).
    public func start() {
        let interval = UInt64(1_000_000_000 / max(1, format.framesPerSecond)) / 2
        let task = Task.detached { [weak self, clock] in
            var next = clock.now.nanoseconds
            while !Task.isCancelled {
                self?.tick()
                next += interval
                do { try await clock.sleep(until: next) } catch { return }
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Writes filler when it is due (the ticker calls this; tests on a manual clock call it directly).
    public func tick() {
        let now = clock.now.nanoseconds
        let due = state.withLock { inner -> Bool in
            guard !inner.stopped else { return false }
            return inner.feed.tick(now: now) == .filler
        }
        if due { queue.async { self.writeFiller() } }
    }

    /// A frame from the agent (BGRA, any size: scaled to the format's), written after `holdNanos` (the virtual
    /// microphone's sound takes longer than the picture: holding the picture back keeps the two in step). Frames
    /// keep their order however the hold changes from one to the next.
    public func show(_ frame: VideoFrame, holdNanos: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = state.withLock { inner -> UInt64 in
            inner.lastDue = max(inner.lastDue, now + holdNanos)
            return inner.lastDue
        }
        guard due > now else { return show(frame) }
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due)) { self.show(frame) }
    }

    /// A frame from the agent (BGRA, any size: scaled to the format's).
    public func show(_ frame: VideoFrame) {
        let now = clock.now.nanoseconds
        let schedule = state.withLock { inner -> Bool in
            guard !inner.stopped else { return false }
            _ = inner.feed.frameArrived(now: now)
            inner.filler = nil
            if inner.pending != nil { inner.replaced += 1 }
            inner.pending = frame
            guard !inner.writeQueued else { return false }
            inner.writeQueued = true
            return true
        }
        if schedule { queue.async { self.writePending() } }
    }

    /// The session was lost: filler from now until frames come again.
    public func sessionLost() {
        let now = clock.now.nanoseconds
        state.withLock { $0.feed.sessionLost(now: now) }
        tick()
    }

    /// What has been written so far.
    public var statistics: Statistics {
        state.withLock {
            Statistics(
                state: $0.feed.state, framesWritten: $0.feed.framesWritten - $0.replaced, fillerWritten: $0.feed.fillerWritten,
                framesReplaced: $0.replaced, interruptions: $0.feed.interruptions, writeErrors: $0.writeErrors, lastError: $0.lastError)
        }
    }

    /// Waits until every queued write is done (tests).
    public func flush() { queue.sync {} }

    /// Stops the ticker, finishes queued writes and closes the sink.
    public func stop() {
        ticker.withLock { $0?.cancel() }
        state.withLock { $0.stopped = true }
        queue.sync {}
        sink.close()
    }

    // MARK: On the queue

    private func writePending() {
        guard let frame = state.withLock({ inner -> VideoFrame? in
            let frame = inner.pending
            inner.pending = nil
            inner.writeQueued = false
            return frame
        }) else { return }
        guard FrameConversion.convert(frame, to: format, into: &converted.bytes) else {
            record(error: "a \(frame.pixelFormat) frame cannot be converted (the studio decodes to BGRA)")
            return
        }
        state.withLock { $0.lastFrame = frame }
        write(converted.bytes)
    }

    private func writeFiller() {
        let cached = state.withLock { inner -> (bytes: [UInt8]?, last: VideoFrame?) in (inner.filler, inner.lastFrame) }
        var bytes = cached.bytes ?? []
        if cached.bytes == nil {
            let picture = NoSignalFrame.make(
                from: cached.last, size: format.size, captureTime: clock.now.nanoseconds, sourceSequence: 0,
                label: NoSignalFrame.reconnectingLabel)
            _ = FrameConversion.convert(picture, to: format, into: &bytes)
            state.withLock { $0.filler = bytes }
        }
        write(bytes)
    }

    private func write(_ bytes: [UInt8]) {
        do {
            try sink.write(bytes)
        } catch {
            record(error: error.description)
        }
    }

    private func record(error: String) {
        let first = state.withLock { inner -> Bool in
            inner.writeErrors += 1
            let first = inner.lastError != error
            inner.lastError = error
            return first
        }
        if first { logger.error("The virtual camera cannot write", metadata: ["error": "\(error)"]) }
    }
}

/// One frame's worth of converted bytes, kept between frames so the per-frame path does not allocate.
/// `@unchecked Sendable`: only the camera's serial queue touches it.
private final class ConversionBuffer: @unchecked Sendable {
    var bytes: [UInt8] = []
}

/// ``LoopbackCamera`` as a sink (its one owner is the camera's queue).
final class LoopbackSink: VirtualCameraSink, @unchecked Sendable {
    private let camera: LoopbackCamera
    let card: String

    init(path: String, format: VirtualCameraFormat) throws(VirtualDeviceError) {
        camera = try LoopbackCamera(path: path, format: format)
        card = camera.card
    }

    func write(_ bytes: [UInt8]) throws(VirtualDeviceError) { try camera.write(bytes) }
    func close() { camera.close() }
}
