/// Places captured audio on one continuous timeline, so packet timestamps never jump and every stretch of time
/// is covered by exactly one run of samples.
///
/// Each read from the device comes with a measured time for its first sample (from the PCM's status timestamp
/// and delay). Small differences between that and where the timeline expects the chunk (timestamp jitter, the
/// device's clock drifting against the monotonic clock) are absorbed: the timeline moves by a sixteenth of the
/// difference per chunk. A difference beyond ``tolerance``, or any difference after a discontinuity (an
/// overrun, a suspend, a reopened device), is taken as measured: a gap is filled with that many silent sample
/// frames, an overlap after a discontinuity drops the chunk's leading frames (an early chunk without one is a
/// device that does not pace itself; it keeps the timeline's time). While the device is gone, ``silence(until:)`` keeps
/// the timeline moving with silence at the nominal rate.
///
/// A plain value: no clock, no I/O; the microphone source feeds it measurements.
public struct AudioTimeline: Sendable, Equatable {
    /// Where one chunk goes.
    public struct Placement: Sendable, Equatable {
        /// Silent sample frames to send before the chunk (a measured gap), 0 for none.
        public var silenceFrames: Int
        /// Time of the first silent frame.
        public var silenceTime: UInt64
        /// Leading frames of the chunk to drop (they overlap what was already sent), 0 for none.
        public var droppedFrames: Int
        /// Time of the first frame kept.
        public var time: UInt64
    }

    /// Sample frames per second (48000 for the studio).
    public let sampleRate: Int
    /// Without a reported discontinuity, differences up to this many nanoseconds count as jitter or drift
    /// (absorbed), beyond as a gap or overlap. 100 ms: ALSA guarantees that samples without an xrun are
    /// continuous, and a sound server (PulseAudio, PipeWire) hands audio over in fragments of 20–50 ms whose
    /// timestamps jump by that much; filling those would cut silence into the sound.
    public var tolerance: UInt64 = 100_000_000
    /// Gaps longer than this (a machine suspended for minutes) are not filled: the timeline starts again there.
    public var longestFill: UInt64 = 10_000_000_000

    private var anchorTime: UInt64 = 0
    private var anchorFrame: UInt64 = 0
    private var started = false
    private var overlapPending = false

    /// Sample frames placed so far (captured, filled, silent while lost).
    public private(set) var frames: UInt64 = 0
    /// Silent frames inserted for measured gaps.
    public private(set) var filledFrames: UInt64 = 0
    /// Captured frames dropped because they overlapped.
    public private(set) var droppedFrames: UInt64 = 0
    /// Chunks that arrived earlier than the timeline allows without a discontinuity (kept, not dropped).
    public private(set) var earlyChunks = 0
    /// Times the timeline started again after a gap longer than ``longestFill``.
    public private(set) var restarts = 0

    /// Creates an empty timeline; the first chunk or silence sets its start.
    public init(sampleRate: Int = MediaContract.sampleRate) {
        precondition(sampleRate > 0)
        self.sampleRate = sampleRate
    }

    /// Time of the next frame to be placed (nil before the first).
    public var nextTime: UInt64? { started ? time(ofFrame: frames) : nil }

    /// Places a chunk of `count` frames whose first frame was measured at `measuredTime`. `discontinuity` says
    /// frames were lost or the device restarted since the previous chunk, so the measured time is taken exactly.
    public mutating func place(frames count: Int, measuredTime: UInt64, discontinuity reported: Bool = false) -> Placement {
        precondition(count >= 0)
        // An overlap longer than the previous chunk is still being used up: this chunk is measured exactly too.
        let discontinuity = reported || overlapPending
        overlapPending = false
        guard started, let expected = nextTime else {
            start(at: measuredTime)
            frames += UInt64(count)
            return Placement(silenceFrames: 0, silenceTime: measuredTime, droppedFrames: 0, time: measuredTime)
        }
        let difference = Int64(bitPattern: measuredTime &- expected)
        let magnitude = difference.magnitude
        if magnitude > longestFill {
            restarts += 1
            start(at: measuredTime)
            frames += UInt64(count)
            return Placement(silenceFrames: 0, silenceTime: measuredTime, droppedFrames: 0, time: measuredTime)
        }
        if !discontinuity && magnitude <= tolerance {
            // Jitter or drift: move the anchor a sixteenth of the way.
            let step = difference / 16
            anchorTime = step >= 0 ? anchorTime + UInt64(step) : anchorTime - min(anchorTime, step.magnitude)
            let time = time(ofFrame: frames)
            frames += UInt64(count)
            return Placement(silenceFrames: 0, silenceTime: time, droppedFrames: 0, time: time)
        }
        if !discontinuity && difference < 0 {
            // Earlier than the timeline allows without any loss reported: a device that does not pace itself
            // (ALSA's null device, a file). Keep the timeline; the caller waits for the clock.
            earlyChunks += 1
            let time = time(ofFrame: frames)
            frames += UInt64(count)
            return Placement(silenceFrames: 0, silenceTime: time, droppedFrames: 0, time: time)
        }
        let span = framesIn(nanoseconds: magnitude)
        if difference > 0 {
            filledFrames += UInt64(span)
            frames += UInt64(span)
            let time = time(ofFrame: frames)
            frames += UInt64(count)
            return Placement(silenceFrames: span, silenceTime: expected, droppedFrames: 0, time: time)
        }
        let dropped = min(count, span)
        overlapPending = span > count
        droppedFrames += UInt64(dropped)
        frames += UInt64(count - dropped)
        return Placement(silenceFrames: 0, silenceTime: expected, droppedFrames: dropped, time: expected)
    }

    /// Silence that carries the timeline up to `now` while no device delivers: the frame count and the time
    /// of the first, or nil when the timeline is already there. Before anything was placed it starts at `now`;
    /// after more than ``longestFill`` without anything (the machine slept) it starts again at `now`.
    public mutating func silence(until now: UInt64) -> (frames: Int, time: UInt64)? {
        guard started, let expected = nextTime else {
            start(at: now)
            return nil
        }
        guard now > expected else { return nil }
        if now - expected > longestFill {
            // The machine slept: start again at `now` rather than send minutes of silence at once.
            restarts += 1
            start(at: now)
            return nil
        }
        let count = framesIn(nanoseconds: now - expected)
        guard count > 0 else { return nil }
        frames += UInt64(count)
        return (count, expected)
    }

    /// Time of frame `index` on the timeline.
    public func time(ofFrame index: UInt64) -> UInt64 {
        let offset = index >= anchorFrame ? index - anchorFrame : 0
        let rate = UInt64(sampleRate)
        // Whole seconds first, so days of audio do not overflow.
        return anchorTime + (offset / rate) * 1_000_000_000 + (offset % rate) * 1_000_000_000 / rate
    }

    private mutating func start(at time: UInt64) {
        started = true
        anchorTime = time
        anchorFrame = frames
    }

    private func framesIn(nanoseconds: UInt64) -> Int {
        Int((nanoseconds * UInt64(sampleRate) + 500_000_000) / 1_000_000_000)
    }
}
