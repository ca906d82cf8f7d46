/// One flash frame matched with the audio click nearest to it.
public struct AVSyncPair: Sendable, Equatable {
    /// Capture time of the flash frame (agent monotonic ns).
    public var flashTime: UInt64
    /// Time of the click's first sample (agent monotonic ns).
    public var clickTime: UInt64

    /// A pair from its two times.
    public init(flashTime: UInt64, clickTime: UInt64) {
        self.flashTime = flashTime
        self.clickTime = clickTime
    }

    /// `clickTime − flashTime` in nanoseconds: positive when audio lags video.
    public var offsetNanos: Int64 {
        clickTime >= flashTime ? Int64(clamping: clickTime - flashTime) : -Int64(clamping: flashTime - clickTime)
    }

    /// ``offsetNanos`` in milliseconds.
    public var offsetMs: Double { Double(offsetNanos) / 1e6 }
}

/// Measures audio/video offset from the synthetic source's markers: every full second the test
/// pattern shows a white flash frame and the tone carries a click (value 0.9 over a −12 dBFS tone).
///
/// A click is the first sample of a run of samples whose left-channel magnitude exceeds
/// ``clickThreshold``; its time is the packet's `firstSampleTime + index · 1e9 / sampleRate`.
/// Each flash is paired with the nearest click within ``matchWindowNanos``; the offset is the mean of
/// `clickTime − flashTime` over the pairs. Pure value type: feed it in arrival order.
public struct AVSyncAnalyzer: Sendable {
    /// A sample is part of a click when `|left| >` this (the tone peaks at 0.25, the click is 0.9).
    public static let clickThreshold: Float = 0.8
    /// A flash and a click further apart than this are not a pair (500 ms).
    public static let matchWindowNanos: UInt64 = 500_000_000

    /// Sample frames per second of the audio.
    public let sampleRate: Int
    /// Flash capture times, deduplicated, in the order added.
    public private(set) var flashTimes: [UInt64] = []
    /// Click times detected so far, in the order found.
    public private(set) var clickTimes: [UInt64] = []
    private var inClick = false

    /// An analyzer for audio at `sampleRate` frames per second.
    public init(sampleRate: Int = 48_000) {
        self.sampleRate = sampleRate
    }

    /// Records a flash frame. Repeats of one frame (same capture time as the last flash) count once.
    public mutating func addFlash(captureTime: UInt64) {
        if flashTimes.last != captureTime { flashTimes.append(captureTime) }
    }

    /// Scans one packet of interleaved samples (channel 0 = left). A run of loud samples that
    /// continues across packets is one click.
    public mutating func addAudio(firstSampleTime: UInt64, interleaved samples: [Float], channels: Int = 2) {
        guard channels > 0 else { return }
        var frame = 0
        var index = 0
        while index < samples.count {
            let loud = abs(samples[index]) > Self.clickThreshold
            if loud && !inClick {
                clickTimes.append(firstSampleTime + UInt64(frame) * 1_000_000_000 / UInt64(sampleRate))
            }
            inClick = loud
            frame += 1
            index += channels
        }
    }

    /// Scans one packet of little-endian float32 interleaved samples (the wire's audio payload).
    public mutating func addAudio(firstSampleTime: UInt64, float32LittleEndian bytes: [UInt8], channels: Int = 2) {
        addAudio(firstSampleTime: firstSampleTime, interleaved: Self.floats(fromLittleEndian: bytes), channels: channels)
    }

    /// The flash/click pairs so far.
    public var pairs: [AVSyncPair] {
        Self.match(flashTimes: flashTimes, clickTimes: clickTimes)
    }

    /// Mean `clickTime − flashTime` in milliseconds over the pairs, or nil when there is no pair.
    public var offsetMs: Double? {
        Self.meanOffsetMs(pairs)
    }

    /// Pairs each flash with the nearest click within `window` (ties go to the earlier click).
    public static func match(flashTimes: [UInt64], clickTimes: [UInt64], window: UInt64 = matchWindowNanos) -> [AVSyncPair] {
        let clicks = clickTimes.sorted()
        guard !clicks.isEmpty else { return [] }
        var pairs: [AVSyncPair] = []
        for flash in flashTimes {
            // First click at or after the flash; the nearest is it or the one before.
            var low = 0, high = clicks.count
            while low < high {
                let mid = (low + high) / 2
                if clicks[mid] < flash { low = mid + 1 } else { high = mid }
            }
            var best: UInt64?
            var bestDistance = UInt64.max
            for candidate in [low - 1, low] where candidate >= 0 && candidate < clicks.count {
                let click = clicks[candidate]
                let distance = click >= flash ? click - flash : flash - click
                if distance < bestDistance {
                    best = click
                    bestDistance = distance
                }
            }
            if let best, bestDistance <= window {
                pairs.append(AVSyncPair(flashTime: flash, clickTime: best))
            }
        }
        return pairs
    }

    /// The mean offset of `pairs` in milliseconds, or nil for no pairs.
    public static func meanOffsetMs(_ pairs: [AVSyncPair]) -> Double? {
        guard !pairs.isEmpty else { return nil }
        let total = pairs.reduce(0.0) { $0 + Double($1.offsetNanos) }
        return total / Double(pairs.count) / 1e6
    }

    /// Decodes little-endian float32 samples; a trailing partial sample is ignored.
    public static func floats(fromLittleEndian bytes: [UInt8]) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(bytes.count / 4)
        var at = 0
        while at + 4 <= bytes.count {
            let bits = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
            out.append(Float(bitPattern: bits))
            at += 4
        }
        return out
    }
}
