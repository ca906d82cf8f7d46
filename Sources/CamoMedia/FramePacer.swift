/// A frame the pacer chose for one output slot.
public struct PacedFrame: Sendable {
    /// The frame to send (for a repeat, the same frame as last time).
    public var frame: VideoFrame
    /// The slot index `k`.
    public var slot: UInt64
    /// The slot's time, `startTime + k * 1e9 / fps` nanoseconds.
    public var slotTime: UInt64
    /// True when no new frame arrived for this slot and the last one is sent again.
    public var isRepeat: Bool
    /// Which offered frame this is: 0 for the first frame ever offered, 1 for the next, ...
    public var inputIndex: UInt64

    /// Creates a paced frame from its parts.
    public init(frame: VideoFrame, slot: UInt64, slotTime: UInt64, isRepeat: Bool, inputIndex: UInt64) {
        self.frame = frame
        self.slot = slot
        self.slotTime = slotTime
        self.isRepeat = isRepeat
        self.inputIndex = inputIndex
    }
}

/// Turns frames arriving at any rate into a steady 30 fps stream on the pacer's own clock.
///
/// Slot `k` is at `startTime + k * 1_000_000_000 / fps` nanoseconds (integer division, so the
/// steps are 33_333_333 or 33_333_334 ns at 30 fps and never drift). Slot `k` sends the newest
/// frame that arrived in `(slotTime(k-1), slotTime(k)]` (slot 0: any time up to `slotTime(0)`).
///
/// - Faster input: older frames of a slot are dropped and counted in ``decimated``; each input
///   frame goes out at most once.
/// - Slower input: a slot with no new frame repeats the last one (``PacedFrame/isRepeat``),
///   counted in ``repeats``, so a 5 fps camera cannot pass for 30 fps.
/// - Nothing is sent before the first frame ever arrived.
///
/// A frame offered late, for a slot that was already emitted, belongs to the next slot.
/// Offer frames in arrival order; the pacer holds at most ``maxPendingSlots`` future slots.
public struct FramePacer: Sendable {
    private struct Pending: Sendable {
        var frame: VideoFrame
        var slot: UInt64
        var inputIndex: UInt64
    }

    /// Most slots that may hold a not-yet-emitted frame; beyond it the oldest is decimated.
    public static let maxPendingSlots = 8

    /// Time of slot 0, nanoseconds. Moves once, by less than a slot, when ``alignsToFirstFrame`` is set.
    public private(set) var startTime: UInt64
    /// When true, the first frame ever offered shifts the slot grid so that it arrives half a slot before its
    /// slot. A camera at the output rate then keeps arriving mid-slot, so scheduling jitter of up to half a slot
    /// cannot push two frames into one slot (one decimated) and leave the next empty (a repeat). Nothing has been
    /// sent before the first frame, so the slot times that go out still advance in even steps.
    ///
    /// The source may restart later (a camera switching mode for another size, or unplugged and back): its frames
    /// then come with a new phase, which may sit right at the slot boundaries, where the same jitter splits a
    /// steady camera into a repeat and a decimated frame every few slots. The grid cannot move any more (slot
    /// times already went out), so the first frame of a new stream sets ``phaseOffset`` instead: every later frame
    /// is assigned that much later, which puts it half a slot before its slot again. A new stream is the first
    /// frame offered after ``sourceRestarted()``, or a frame whose ``VideoFrame/sourceSequence`` went backwards
    /// (V4L2 counts from 0 at each stream start; for sources that do not say when they restart).
    public var alignsToFirstFrame = false
    /// Added to every assignment time since the source last restarted (`0..<` one slot; always 0 without
    /// ``alignsToFirstFrame``). It adds that much latency, less than one slot.
    public private(set) var phaseOffset: UInt64 = 0
    /// Times the source restarted and ``phaseOffset`` was chosen anew.
    public private(set) var realignments: UInt64 = 0
    /// Output rate, slots per second.
    public let fps: Int

    /// Slots that sent the previous frame again because nothing new arrived.
    public private(set) var repeats: UInt64 = 0
    /// Offered frames that were never sent because a newer frame replaced them.
    public private(set) var decimated: UInt64 = 0
    /// Slots that produced a frame, repeats included.
    public private(set) var emitted: UInt64 = 0
    /// Frames offered so far.
    public private(set) var offered: UInt64 = 0
    /// The last slot passed to ``emit(slot:)``, if any.
    public private(set) var lastEmittedSlot: UInt64?

    private var pending: [Pending] = []  // ascending slot, at most one frame per slot
    private var last: Pending?
    private var lastSourceSequence: UInt64?
    private var restartPending = false

    /// Creates a pacer whose slot 0 is at `startTime`; `fps` must be 1...1000.
    public init(startTime: UInt64, fps: Int = MediaContract.fps) {
        precondition((1...1000).contains(fps), "FramePacer fps must be 1...1000, got \(fps)")
        self.startTime = startTime
        self.fps = fps
    }

    /// Time of slot `k`: `startTime + k * 1_000_000_000 / fps` (integer, rounded down).
    public func slotTime(_ k: UInt64) -> UInt64 {
        startTime + k * 1_000_000_000 / UInt64(fps)
    }

    /// The slot a frame arriving at `time` belongs to: the smallest `k` with `slotTime(k) >= time`.
    public func slot(containing time: UInt64) -> UInt64 {
        guard time > startTime else { return 0 }
        let elapsed = time - startTime
        return (elapsed * UInt64(fps) + 999_999_999) / 1_000_000_000
    }

    /// The time by which a frame is assigned to a slot: its capture time plus half a slot, when the capture time is
    /// plausible (within a second of `arrival`), else its arrival.
    ///
    /// Capture times from a driver are regular, while arrival after dequeue, conversion and scheduling jitters.
    /// With ``alignsToFirstFrame`` the assigned times sit mid-slot, so a frame may arrive up to a whole slot (33 ms)
    /// after its capture and still land in its own slot, instead of leaving a repeat behind and decimating its
    /// successor. The cost is half a slot (17 ms) of latency.
    public static func assignmentTime(captureTime: UInt64, arrival: UInt64, fps: Int = MediaContract.fps) -> UInt64 {
        let second: UInt64 = 1_000_000_000
        guard captureTime > 0, captureTime < arrival + second, arrival < captureTime + second else { return arrival }
        return captureTime + second / UInt64(fps) / 2
    }

    /// Takes a frame that arrived at `arrival`; it replaces (and decimates) an earlier frame of
    /// the same slot.
    public mutating func offer(_ frame: VideoFrame, at arrival: UInt64) {
        if alignsToFirstFrame {
            if offered == 0 {
                let next = lastEmittedSlot.map { $0 + 1 } ?? 0
                let slot = max(self.slot(containing: arrival), next)
                let half = 500_000_000 / UInt64(fps)
                let offset = slot * 1_000_000_000 / UInt64(fps)
                if arrival + half >= offset { startTime = arrival + half - offset }
            } else if restartPending || lastSourceSequence.map({ frame.sourceSequence < $0 }) == true {
                phaseOffset = offsetToMidSlot(arrival)
                realignments += 1
            }
            restartPending = false
            lastSourceSequence = frame.sourceSequence
        }
        let index = offered
        offered += 1
        var slot = self.slot(containing: arrival + phaseOffset)
        if let lastEmittedSlot { slot = max(slot, lastEmittedSlot + 1) }
        if let newest = pending.last, newest.slot >= slot {
            pending[pending.count - 1] = Pending(frame: frame, slot: newest.slot, inputIndex: index)
            decimated += 1
            return
        }
        pending.append(Pending(frame: frame, slot: slot, inputIndex: index))
        if pending.count > Self.maxPendingSlots {
            pending.removeFirst()
            decimated += 1
        }
    }

    /// The source started a new stream (a camera restarted in another mode, or came back after it was lost): the
    /// next frame offered sets ``phaseOffset`` for it (with ``alignsToFirstFrame``). Frames offered in between,
    /// such as a "no signal" picture, should come before this call.
    public mutating func sourceRestarted() {
        restartPending = true
    }

    /// The delay in `0..<period` that moves `time` to half a slot before the next slot time.
    func offsetToMidSlot(_ time: UInt64) -> UInt64 {
        let period = 1_000_000_000 / UInt64(fps)
        let half = period / 2
        // How far `time` is from the end of its slot (slot times differ from multiples of `period` by under a
        // nanosecond per slot, which does not matter here; before slot 0 the distance is taken modulo a slot).
        let ahead = (slotTime(slot(containing: time)) - time) % period
        return ahead >= half ? ahead - half : ahead + period - half
    }

    /// The frame for slot `k`: the newest frame that arrived for it, else a repeat of the last
    /// frame sent, else nil (no frame has arrived yet).
    public mutating func emit(slot k: UInt64) -> PacedFrame? {
        lastEmittedSlot = k
        let due = pending.prefix { $0.slot <= k }.count
        if due > 0 {
            let chosen = pending[due - 1]
            decimated += UInt64(due - 1)
            pending.removeFirst(due)
            last = chosen
            emitted += 1
            return PacedFrame(
                frame: chosen.frame, slot: k, slotTime: slotTime(k), isRepeat: false, inputIndex: chosen.inputIndex)
        }
        guard let last else { return nil }
        repeats += 1
        emitted += 1
        return PacedFrame(frame: last.frame, slot: k, slotTime: slotTime(k), isRepeat: true, inputIndex: last.inputIndex)
    }
}
