import CamoMedia
import Foundation
import Logging
import Synchronization

/// What happened to the camera, for the agent (which tells the controller and the log).
public enum CameraEvent: Sendable {
    /// Streaming started (or restarted after a size change or a replug) in `mode`.
    case streaming(CameraIdentity, CameraModeChoice, CaptureLayout)
    /// The camera went away; no-signal frames follow until it returns.
    case lost(CameraIdentity, CameraError)
    /// The camera is back (streaming follows).
    case returned(CameraIdentity)
}

/// Counters of a running ``CameraSource``.
public struct CameraStatistics: Sendable, Equatable {
    /// Frames captured, converted and delivered.
    public var framesDelivered: UInt64 = 0
    /// Frames the driver flagged as broken, or that could not be converted (a corrupt MJPEG frame).
    public var badFrames: UInt64 = 0
    /// Times the camera was lost.
    public var losses: UInt64 = 0
    /// Times an output buffer had to be allocated after warm-up (it was still held downstream).
    public var bufferReallocations: UInt64 = 0
}

/// Captures a V4L2 camera into BGRA frames: chooses a mode for the studios' size, streams with mmap buffers,
/// converts each frame (libyuv / turbojpeg, libv4lconvert as the fallback) into a fixed pool of buffers, and
/// survives unplugging: it reports the loss, delivers a "no signal" frame (the pacer repeats it at 30 fps),
/// finds the same camera again by bus position and card (or USB serial) and resumes.
public final class CameraSource: Sendable {
    /// How to capture.
    public struct Configuration: Sendable {
        /// The device node to open.
        public var path: String
        /// The rate to ask the camera for (the pacer always sends 30 fps).
        public var framesPerSecond: Double = Double(MediaContract.fps)
        /// A format to insist on, or nil to choose.
        public var format: FourCC?
        /// Driver buffers in the mmap ring.
        public var bufferCount = 4
        /// Seconds without a frame before the camera counts as lost (at least 3 frame intervals).
        public var frameTimeout: Double = 2
        /// How often to look for a lost camera, seconds.
        public var rescanInterval: Double = 0.25
        /// When set, the first captured frame's raw bytes (planes back to back) go to this file, and its layout
        /// to the same path plus `.json`.
        public var dumpRawPath: String?

        /// A configuration for the camera at `path`.
        public init(path: String) {
            self.path = path
        }
    }

    fileprivate struct Shared {
        var statistics = CameraStatistics()
        var identity: CameraIdentity?
        var choice: CameraModeChoice?
        var stop = false
        var rescanNow = false
    }

    /// The configuration.
    public let configuration: Configuration
    private let logger: Logger
    private let shared = Mutex(Shared())

    /// Creates a source; nothing is opened until ``run(size:deliver:events:)``.
    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Counters so far.
    public var statistics: CameraStatistics { shared.withLock { $0.statistics } }

    /// The camera in use (the last one seen, while lost).
    public var identity: CameraIdentity? { shared.withLock { $0.identity } }

    /// The current mode and why it was chosen.
    public var choice: CameraModeChoice? { shared.withLock { $0.choice } }

    /// Look for a lost camera now instead of at the next scan (udev tells the agent a camera was added).
    public func rescanNow() {
        shared.withLock { $0.rescanNow = true }
    }

    /// Opens the camera and checks it can be captured, without streaming. Call before ``run(size:deliver:events:)``
    /// to turn a wrong path or an unusable camera into an error at startup.
    public func probe(size: VideoSize) throws(CameraError) -> CameraModeChoice {
        let device = try V4L2Device(path: configuration.path)
        defer { device.closeDevice() }
        let choice = try chooseMode(device, size: size).choice
        // Set the format once and read it back, so a mode the driver refuses fails here, not later.
        _ = try device.setFormat(choice.mode.fourcc, width: choice.mode.size.width, height: choice.mode.size.height)
        let layout = try device.getFormat()
        if PixelConverter.canConvert(layout.format) {
            do {
                _ = try PixelConverter(layout: layout)
            } catch {
                throw .noConvertibleFormat(path: device.path, offered: ["\(layout.format) (\(error))"])
            }
        }
        return choice
    }

    /// Captures until the task is cancelled, on a thread of its own (V4L2 calls block).
    ///
    /// - Parameters:
    ///   - size: asked before each frame: the size the studios want. A change re-chooses the mode.
    ///   - deliver: each BGRA frame; `sourceSequence` is the driver's buffer sequence, `captureTime` its
    ///     CLOCK_MONOTONIC timestamp.
    ///   - events: streaming, lost, returned.
    ///   - wanted: asked per frame; while it returns false (no studio connected) frames are dequeued and given
    ///     back without converting, so an idle agent costs little CPU and still notices an unplugged camera.
    ///   - jpegPlanes: asked per frame with its size; when true and the camera delivers packed 4:2:2 (YUYV and
    ///     the like), the frame also carries JPEG's planes made straight from the camera's bytes
    ///     (``VideoFrame/jpegPlanes``), so a JPEG encoder need not convert the BGRA back.
    /// - Throws: the error that stopped the first open (a wrong path, not a capture device, no usable format).
    ///   After the first successful start, errors never end the run: the source waits for the camera.
    public func run(
        size: @escaping @Sendable () -> VideoSize, deliver: @escaping @Sendable (VideoFrame) -> Void,
        events: @escaping @Sendable (CameraEvent) -> Void, wanted: @escaping @Sendable () -> Bool = { true },
        jpegPlanes: @escaping @Sendable (VideoSize) -> Bool = { _ in false }
    ) async throws(CameraError) {
        shared.withLock { $0.stop = false }
        let outcome: Result<Void, CameraError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, CameraError>, Never>) in
                let thread = Thread { [self] in
                    Thread.current.name = "camo-camera"
                    let loop = CaptureLoop(
                        source: self, size: size, deliver: deliver, events: events, wanted: wanted, jpegPlanes: jpegPlanes)
                    continuation.resume(returning: loop.run())
                }
                thread.start()
            }
        } onCancel: {
            shared.withLock { $0.stop = true }
        }
        try outcome.get()
    }

    // MARK: Loop support

    fileprivate var shouldStop: Bool { shared.withLock { $0.stop } }

    fileprivate func takeRescanRequest() -> Bool {
        shared.withLock { state in
            defer { state.rescanNow = false }
            return state.rescanNow
        }
    }

    fileprivate func update(_ body: (inout Shared) -> Void) {
        shared.withLock { body(&$0) }
    }

    fileprivate func log() -> Logger { logger }

    /// Enumerates the device's modes and picks one for `size`.
    fileprivate func chooseMode(_ device: V4L2Device, size: VideoSize) throws(CameraError) -> (choice: CameraModeChoice, modes: [CameraMode]) {
        let formats = try device.formats()
        let rate = device.currentInterval()?.framesPerSecond
        let request = CameraModeRequest(size: size, framesPerSecond: configuration.framesPerSecond, format: configuration.format)
        let modes = CameraModeChooser.candidates(formats: formats, request: request, currentRate: rate) { fourcc, fitted in
            (try? device.frameIntervals(fourcc, fitted.width, fitted.height)) ?? []
        }
        let choice = try CameraModeChooser.choose(modes, request: request, path: device.path, canConvert: Self.canConvert)
        return (choice, modes)
    }

    /// Formats this source can turn into BGRA: libyuv and turbojpeg ones, plus libv4lconvert's.
    public static func canConvert(_ fourcc: FourCC) -> Bool {
        PixelConverter.canConvert(fourcc) || FallbackConverter.canConvert(fourcc)
    }
}

/// The capture thread's state. Not Sendable: it lives and dies on that thread.
private final class CaptureLoop {
    let source: CameraSource
    let size: @Sendable () -> VideoSize
    let deliver: @Sendable (VideoFrame) -> Void
    let events: @Sendable (CameraEvent) -> Void
    let wanted: @Sendable () -> Bool
    let jpegPlanesWanted: @Sendable (VideoSize) -> Bool
    let logger: Logger
    var configuration: CameraSource.Configuration { source.configuration }

    var device: V4L2Device?
    var identity: CameraIdentity?
    var requestedSize = VideoSize.hd720
    var mode: CameraMode?
    var layout: CaptureLayout?
    var converter: FrameConverting?
    var pool: [[UInt8]] = []
    /// JPEG planes, one buffer per BGRA buffer of `pool` (the two travel in the same frame).
    var planePool: [[UInt8]] = []
    var poolIndex = 0
    var warmFrames = 0
    var lastFrame: VideoFrame?
    var dumped = false
    var planeScratch = V4L2PlaneScratch()
    var lastBadFrameLog: UInt64 = 0

    init(
        source: CameraSource, size: @escaping @Sendable () -> VideoSize, deliver: @escaping @Sendable (VideoFrame) -> Void,
        events: @escaping @Sendable (CameraEvent) -> Void, wanted: @escaping @Sendable () -> Bool,
        jpegPlanes: @escaping @Sendable (VideoSize) -> Bool
    ) {
        self.wanted = wanted
        self.jpegPlanesWanted = jpegPlanes
        self.source = source
        self.size = size
        self.deliver = deliver
        self.events = events
        self.logger = source.log()
    }

    func run() -> Result<Void, CameraError> {
        // The first start must work: a wrong path or an unusable camera is the user's to fix.
        do {
            try start(path: configuration.path)
        } catch {
            closeDevice()
            return .failure(error)
        }
        while !source.shouldStop {
            if device == nil {
                waitForCamera()
                continue
            }
            do {
                try captureOne()
            } catch {
                lose(error)
            }
        }
        closeDevice()
        return .success(())
    }

    // MARK: Start, restart, lose

    func start(path: String) throws(CameraError) {
        let device = try V4L2Device(path: path)
        self.device = device
        let info = VideoDeviceInfo(path: path, card: device.identity.card, busInfo: device.identity.busInfo, driver: device.identity.driver)
        let identity = CameraIdentity(info)
        self.identity = identity
        source.update { $0.identity = identity }
        requestedSize = size()
        try configure(device, for: requestedSize)
    }

    func configure(_ device: V4L2Device, for size: VideoSize) throws(CameraError) {
        let (choice, _) = try source.chooseMode(device, size: size)
        let wanted = choice.mode
        var layout = try device.setFormat(wanted.fourcc, width: wanted.size.width, height: wanted.size.height)
        var applied = wanted
        applied.size = VideoSize(width: layout.width, height: layout.height)
        if layout.format != wanted.fourcc {
            throw .formatNotOffered(path: device.path, format: wanted.fourcc.description, offered: [layout.format.description])
        }
        if let interval = wanted.interval {
            if let chosen = try device.setInterval(interval) {
                applied.interval = chosen
                applied.framesPerSecond = chosen.framesPerSecond
            }
        } else if let current = device.currentInterval() {
            applied.interval = current
            applied.framesPerSecond = current.framesPerSecond
        }
        layout = try device.getFormat()
        converter = try makeConverter(layout: layout, device: device)
        self.layout = layout
        mode = applied
        var finalChoice = choice
        finalChoice.mode = applied
        if abs(applied.framesPerSecond - wanted.framesPerSecond) > 0.01 || applied.size != wanted.size {
            finalChoice.reason += "; the driver set \(applied) instead of \(wanted)"
            finalChoice.meetsRequest = finalChoice.meetsRequest
                && applied.framesPerSecond + 0.01 >= configuration.framesPerSecond
        }
        source.update { $0.choice = finalChoice }
        let ring = try device.startStreaming(bufferCount: configuration.bufferCount)
        let metadata: Logger.Metadata = [
            "device": "\(device.path)", "card": "\(device.identity.card)", "mode": "\(applied)",
            "colorimetry": "\(layout.colorimetry)", "buffers": "\(ring)", "reason": "\(finalChoice.reason)",
        ]
        if finalChoice.meetsRequest {
            logger.info("Camera mode chosen", metadata: metadata)
        } else {
            logger.warning("Camera mode chosen below the request", metadata: metadata)
        }
        // Safe: start() set it before configure().
        events(.streaming(identity!, finalChoice, layout))
    }

    func makeConverter(layout: CaptureLayout, device: V4L2Device) throws(CameraError) -> FrameConverting {
        if PixelConverter.canConvert(layout.format) {
            do {
                return try PixelConverter(layout: layout)
            } catch {
                throw .noConvertibleFormat(path: device.path, offered: ["\(layout.format) (\(error))"])
            }
        }
        if let fallback = FallbackConverter(device: device, layout: layout) {
            logger.notice("Converting with libv4lconvert (slower)", metadata: ["format": "\(layout.format)"])
            return fallback
        }
        throw .noConvertibleFormat(path: device.path, offered: [layout.format.description])
    }

    func closeDevice() {
        device?.closeDevice()
        device = nil
        converter = nil
    }

    /// Closes at once (so a replugged camera gets its old node name), reports, and sends the no-signal frame.
    func lose(_ error: CameraError) {
        closeDevice()
        source.update { $0.statistics.losses += 1 }
        logger.warning("Camera lost; sending a no-signal picture until it returns", metadata: [
            "error": "\(error)", "camera": "\(identity.map(\.description) ?? configuration.path)",
        ])
        if let identity { events(.lost(identity, error)) }
        let filler = NoSignalFrame.make(
            from: lastFrame, size: lastFrame?.size ?? requestedSize, captureTime: V4L2Device.monotonicNow(),
            sourceSequence: lastFrame?.sourceSequence ?? 0)
        deliver(filler)
    }

    /// Looks for the lost camera every `rescanInterval` (or at once when asked) until it returns or we stop.
    func waitForCamera() {
        let deadline = V4L2Device.monotonicNow() + UInt64(configuration.rescanInterval * 1e9)
        while !source.shouldStop && !source.takeRescanRequest() && V4L2Device.monotonicNow() < deadline {
            usleep(20_000)
        }
        guard !source.shouldStop, let identity else { return }
        let candidates = DeviceProbe.videoCaptureDeviceInfo().map { CameraIdentity($0) }
        guard let match = candidates.first(where: { $0.isSameCamera(as: identity) }) else { return }
        do {
            try start(path: match.path)
            logger.notice("Camera back", metadata: ["camera": "\(match.description)"])
            events(.returned(match))
        } catch {
            logger.debug("The camera is back but not ready yet", metadata: ["error": "\(error)"])
            closeDevice()
        }
    }

    // MARK: Frames

    func captureOne() throws(CameraError) {
        // Safe: run() only calls this with a device.
        let device = self.device!
        let wanted = size()
        // Re-chosen only while a studio watches: when the last one leaves, the camera keeps its mode, so the next
        // studio asking the same size starts without a camera restart.
        if wanted != requestedSize && self.wanted() {
            requestedSize = wanted
            let next = try source.chooseMode(device, size: wanted).choice.mode
            if let mode, next.fourcc != mode.fourcc || next.size != mode.size || next.interval != mode.interval {
                logger.info("The studios want another size; switching camera mode", metadata: ["size": "\(wanted)"])
                device.stopStreaming()
                try configure(device, for: wanted)
            }
        }
        let interval = mode.map { $0.framesPerSecond > 0 ? 1 / $0.framesPerSecond : 0 } ?? 0
        let timeout = max(configuration.frameTimeout, 3 * interval)
        let started = V4L2Device.monotonicNow()
        while true {
            if source.shouldStop { return }
            if try device.waitForFrame(timeoutMilliseconds: 200) { break }
            if Double(V4L2Device.monotonicNow() - started) / 1e9 > timeout {
                throw .timedOut(path: device.path, seconds: (timeout * 10).rounded() / 10)
            }
        }
        guard let buffer = try device.dequeue(scratch: &planeScratch.planes) else { return }
        defer {
            // A failed re-queue shows up as an error at the next poll.
            try? device.queue(index: buffer.index, scratch: &planeScratch.planes)
        }
        if buffer.isError {
            countBadFrame("the driver flagged the buffer as broken")
            return
        }
        guard let layout, let converter else { return }
        if !dumped, let path = configuration.dumpRawPath {
            dumped = true
            device.withPlanes(buffer) { planes in RawFrameDump.write(planes: planes, layout: layout, sequence: buffer.sequence, to: path, logger: logger) }
        }
        guard self.wanted() else { return }
        if pool.isEmpty { pool = Array(repeating: [], count: 6) }
        poolIndex = (poolIndex + 1) % pool.count
        var output = pool[poolIndex]
        pool[poolIndex] = []
        let before = output.withUnsafeBufferPointer { $0.baseAddress }
        let result: Result<Void, PixelConversionError> = device.withPlanes(buffer) { planes in
            do throws(PixelConversionError) {
                try converter.convert(planes: planes, into: &output)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = result {
            pool[poolIndex] = output
            countBadFrame("\(error)")
            return
        }
        if warmFrames >= pool.count, before != output.withUnsafeBufferPointer({ $0.baseAddress }) {
            source.update { $0.statistics.bufferReallocations += 1 }
        }
        warmFrames += 1
        var frame = VideoFrame(
            width: layout.width, height: layout.height, bytesPerRow: layout.width * 4, pixelFormat: .bgra, data: output,
            captureTime: buffer.timestamp, sourceSequence: UInt64(buffer.sequence))
        pool[poolIndex] = output
        output = []
        if converter.makesJPEGPlanes && jpegPlanesWanted(frame.size) {
            if planePool.count != pool.count { planePool = Array(repeating: [], count: pool.count) }
            var storage = planePool[poolIndex]
            planePool[poolIndex] = []
            // A frame error here was already thrown by the BGRA conversion above; without planes the encoder converts.
            frame.jpegPlanes = device.withPlanes(buffer) { planes in try? converter.jpegPlanes(planes: planes, into: &storage) }
            planePool[poolIndex] = storage
        } else if !planePool.isEmpty {
            planePool = []  // no JPEG session any more: let the buffers go
        }
        lastFrame = frame
        deliver(frame)
        source.update { $0.statistics.framesDelivered += 1 }
    }

    func countBadFrame(_ why: String) {
        source.update { $0.statistics.badFrames += 1 }
        let now = V4L2Device.monotonicNow()
        if now - lastBadFrameLog > 5_000_000_000 {
            lastBadFrameLog = now
            logger.warning("Dropped a bad camera frame", metadata: ["why": "\(why)"])
        }
    }
}
