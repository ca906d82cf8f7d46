import CamoMedia

/// The time of each sample frame of a run of ``AudioChunk``s at 48 kHz: counts frames from the first chunk's
/// time, and starts again when a chunk's time is more than 2 ms from where the count says it should be (a gap or
/// an overlap in capture).
struct SampleClock: Sendable {
    static let sampleRate: UInt64 = 48_000
    static let tolerance: UInt64 = 2_000_000

    private(set) var origin: UInt64?
    /// Sample frames since ``origin``.
    private(set) var count: UInt64 = 0

    /// Takes the chunk's first time; returns false when the count started again (the caller drops partial work).
    mutating func begin(chunkAt time: UInt64) -> Bool {
        if let origin {
            let expected = origin + Self.nanoseconds(frames: count)
            let distance = time >= expected ? time - expected : expected - time
            if distance <= Self.tolerance { return true }
        }
        origin = time
        count = 0
        return false
    }

    /// The time of sample frame `index` counted from ``origin``.
    func time(ofFrame index: UInt64) -> UInt64 {
        (origin ?? 0) + Self.nanoseconds(frames: index)
    }

    /// The duration of `frames` sample frames, ns, without overflow (a plain `frames * 1e9` would overflow after
    /// 4.4 days of audio).
    static func nanoseconds(frames: UInt64) -> UInt64 {
        frames / sampleRate * 1_000_000_000 + frames % sampleRate * 1_000_000_000 / sampleRate
    }

    mutating func advance(by frames: Int) {
        count += UInt64(frames)
    }
}
