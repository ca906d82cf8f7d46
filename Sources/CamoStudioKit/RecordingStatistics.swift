import CamoMedia

/// Counts what a recording received: frames, sequence gaps, repeats, audio packet sizes, round trips.
/// Pure value type; the ``Recorder`` feeds it and turns it into a ``RecordingSummary``.
public struct RecordingStatistics: Sendable, Equatable {
    /// Video frames received.
    public private(set) var frames = 0
    /// Frames the agent dropped for this session: the sum of gaps between consecutive sequence numbers.
    public private(set) var dropped = 0
    /// Frames flagged as repeats of the previous one.
    public private(set) var repeated = 0
    /// Slot time of the first frame.
    public private(set) var firstSlotTime: UInt64?
    /// Slot time of the latest frame.
    public private(set) var lastSlotTime: UInt64?
    private var lastSequence: UInt32?
    /// Frames flagged "no signal" (the agent's camera was lost; filler frames).
    public private(set) var noSignal = 0
    /// New camera frames: frames that are neither repeats nor no-signal filler.
    public private(set) var sourceFrames = 0
    /// New camera frames whose source sequence equals the previous new frame's: one camera frame sent twice
    /// without the repeat flag (a well-behaved agent never does this).
    public private(set) var sourceDuplicates = 0
    /// Source sequence numbers skipped between consecutive new camera frames (camera frames that never
    /// reached the studio: decimated by the pacer or dropped by the driver). A backwards step (the camera
    /// restarted its count, e.g. after a replug) counts nothing.
    public private(set) var sourceGaps = 0
    private var lastSourceSequence: UInt32?

    /// Audio packets received.
    public private(set) var audioPackets = 0
    /// Sample frames received over all packets.
    public private(set) var sampleFrames = 0
    /// Sample frames of the smallest packet, nil before the first.
    public private(set) var smallestPacket: Int?
    /// Sample frames of the largest packet, nil before the first.
    public private(set) var largestPacket: Int?

    /// Round-trip times measured by keepalive pings, in nanoseconds.
    public private(set) var roundTrips: [UInt64] = []

    /// Empty statistics.
    public init() {}

    /// Records a frame. A sequence jump of `d > 1` counts `d − 1` dropped frames; a sequence that does
    /// not advance (which a well-behaved agent never sends) counts no drop.
    public mutating func recordFrame(
        sequence: UInt32, slotTime: UInt64, isRepeat: Bool, noSignal: Bool = false, sourceSequence: UInt32? = nil
    ) {
        if noSignal { self.noSignal += 1 }
        if !isRepeat && !noSignal, let sourceSequence {
            sourceFrames += 1
            if let last = lastSourceSequence {
                if sourceSequence == last {
                    sourceDuplicates += 1
                } else {
                    sourceGaps += Self.missed(after: last, to: sourceSequence)
                }
            }
            lastSourceSequence = sourceSequence
        }
        if let lastSequence { dropped += Self.missed(after: lastSequence, to: sequence) }
        lastSequence = sequence
        frames += 1
        if isRepeat { repeated += 1 }
        if firstSlotTime == nil { firstSlotTime = slotTime }
        lastSlotTime = slotTime
    }

    /// The frame that ends the recording (its slot time is at or past `spanEnd`, so it is not recorded) arrived with
    /// `sequence` at `slotTime`: the slots the agent dropped between the last recorded frame and `spanEnd` count as
    /// dropped, so that over a congested link, where the agent drops frames in runs, every slot of the span is
    /// either received or counted. Slots at or after `spanEnd` are outside the recording and do not count.
    public mutating func recordSpanEnd(sequence: UInt32, slotTime: UInt64, spanEnd: UInt64, fps: Int = MediaContract.fps) {
        guard let lastSequence, slotTime >= spanEnd else { return }
        let gap = Self.missed(after: lastSequence, to: sequence)
        // Slot k of the gap is at slotTime − (sequence − k) / fps; those at or after spanEnd are outside the span.
        // Slot times are whole nanoseconds (steps of 33_333_333 or 33_333_334 at 30 fps): 2 ns of slack.
        let outside = Int((slotTime - spanEnd + 2) * UInt64(fps) / 1_000_000_000)
        dropped += gap - min(gap, outside)
    }

    /// The sequence numbers skipped between `last` and `next` when `next` is ahead (counting wraps at 2³²); 0 when
    /// it is the next one, the same, or behind.
    private static func missed(after last: UInt32, to next: UInt32) -> Int {
        let step = next &- last
        return step > 1 && step < UInt32.max / 2 ? Int(step - 1) : 0
    }

    /// Records an audio packet of `sampleFrames` frames.
    public mutating func recordAudio(sampleFrames count: Int) {
        audioPackets += 1
        sampleFrames += count
        smallestPacket = min(smallestPacket ?? count, count)
        largestPacket = max(largestPacket ?? count, count)
    }

    /// Records a measured round trip.
    public mutating func recordRoundTrip(nanoseconds: UInt64) {
        roundTrips.append(nanoseconds)
    }

    /// Slot time covered since the first frame, in nanoseconds (0 before two frames).
    public var slotSpanNanos: UInt64 {
        guard let firstSlotTime, let lastSlotTime, lastSlotTime > firstSlotTime else { return 0 }
        return lastSlotTime - firstSlotTime
    }

    /// Frames per second of slot time. With at least two frames at distinct slot times, the
    /// `frames − 1` intervals over the span from the first to the last slot time (equivalently,
    /// frames over the covered span, each frame covering one interval); otherwise frames over
    /// `fallbackSeconds` (the wall-clock length of the recording), or 0.
    public func fps(fallbackSeconds: Double) -> Double {
        let span = slotSpanNanos
        if frames >= 2 && span > 0 {
            return Double(frames - 1) / (Double(span) / 1e9)
        }
        return fallbackSeconds > 0 ? Double(frames) / fallbackSeconds : 0
    }

    /// Mean measured round trip in milliseconds, nil when none was measured.
    public var meanRoundTripMs: Double? {
        guard !roundTrips.isEmpty else { return nil }
        return roundTrips.reduce(0.0) { $0 + Double($1) } / Double(roundTrips.count) / 1e6
    }
}
