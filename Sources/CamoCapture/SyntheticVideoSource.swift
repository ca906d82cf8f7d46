import CamoMedia
import Synchronization

/// A camera stand-in: renders the ``TestPattern`` at 30 fps on a given clock.
///
/// Frame `n` is due at `startTime + n * 1_000_000_000 / 30`; it carries frame number `n` and
/// that scheduled time as its capture time. When the source wakes up a whole frame late (the
/// next frame is already due), it skips to the newest due frame, as a real camera drops frames;
/// skipped frames are counted in ``framesSkipped``.
public final class SyntheticVideoSource: Sendable {
    private let delivered = Atomic<UInt64>(0)
    private let skipped = Atomic<UInt64>(0)
    /// Whether frames carry ``TestPattern/addDetail(frameNumber:size:into:)``'s busy rows.
    public let busy: Bool

    /// Creates a source; it does nothing until ``run(clock:startTime:size:deliver:)``. `busy` adds rows of noise
    /// that change every frame (`--camera test:busy`), for tests of a link's rate.
    public init(busy: Bool = false) {
        self.busy = busy
    }

    /// Frames handed to `deliver` so far.
    public var framesDelivered: UInt64 { delivered.load(ordering: .relaxed) }

    /// Frame numbers skipped because the source woke up too late for them.
    public var framesSkipped: UInt64 { skipped.load(ordering: .relaxed) }

    /// The time frame `n` is due.
    public static func frameTime(_ n: UInt64, startTime: UInt64) -> UInt64 {
        startTime + n * 1_000_000_000 / UInt64(MediaContract.fps)
    }

    /// Renders and delivers frames until the task is cancelled.
    ///
    /// - Parameters:
    ///   - clock: the clock to sleep on (``SystemMonotonicClock`` in the agent, a manual clock in tests).
    ///   - startTime: when frame 0 is due.
    ///   - size: asked before each frame; the render buffer is reallocated only when it changes.
    ///     Sides are clamped to 1...4096.
    ///   - deliver: called with each BGRA frame, on the task running this method.
    public func run(
        clock: some MonotonicClock, startTime: UInt64, size: @Sendable () -> VideoSize,
        deliver: @Sendable (VideoFrame) -> Void
    ) async {
        let limit = 1...MediaContract.maxDimension
        var buffer: [UInt8] = []
        var n: UInt64 = 0
        while !Task.isCancelled {
            let due = Self.frameTime(n, startTime: startTime)
            do {
                try await clock.sleep(until: due)
            } catch {
                return
            }
            let now = clock.now.nanoseconds
            if now >= Self.frameTime(n + 1, startTime: startTime) {
                let newest = (now - startTime) * UInt64(MediaContract.fps) / 1_000_000_000
                skipped.add(newest - n, ordering: .relaxed)
                n = newest
            }
            let requested = size()
            let current = VideoSize(
                width: min(max(requested.width, limit.lowerBound), limit.upperBound),
                height: min(max(requested.height, limit.lowerBound), limit.upperBound))
            TestPattern.render(frameNumber: n, size: current, into: &buffer)
            if busy { TestPattern.addDetail(frameNumber: n, size: current, into: &buffer) }
            let frame = VideoFrame(
                width: current.width, height: current.height, bytesPerRow: current.width * 4,
                pixelFormat: .bgra, data: buffer, captureTime: Self.frameTime(n, startTime: startTime),
                sourceSequence: n)
            deliver(frame)
            delivered.add(1, ordering: .relaxed)
            n += 1
        }
    }
}
