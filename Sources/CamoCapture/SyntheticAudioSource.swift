import CamoMedia
import Synchronization

/// A microphone stand-in: the ``ToneGenerator`` sound in 480-frame (10 ms) chunks on a given clock.
///
/// Chunk `i` holds sample frames `[480i, 480i + 480)`, sample `s` being at
/// `startTime + s * 1_000_000_000 / 48_000`; it is delivered once the clock reaches the end of
/// the chunk (`startTime + (i + 1) * 10 ms`), as a real capture device hands over a period only
/// after it was recorded. A late wake-up delivers the overdue chunks back to back: audio is
/// never skipped.
public final class SyntheticAudioSource: Sendable {
    /// Sample frames per chunk (10 ms at 48 kHz).
    public static let chunkFrames = 480

    private let delivered = Atomic<UInt64>(0)

    /// Creates a source; it does nothing until ``run(clock:startTime:deliver:)``.
    public init() {}

    /// Chunks handed to `deliver` so far.
    public var chunksDelivered: UInt64 { delivered.load(ordering: .relaxed) }

    /// Time of sample frame `s`.
    public static func sampleTime(_ s: UInt64, startTime: UInt64) -> UInt64 {
        startTime + s * 1_000_000_000 / UInt64(MediaContract.sampleRate)
    }

    /// Generates and delivers chunks until the task is cancelled.
    public func run(clock: some MonotonicClock, startTime: UInt64, deliver: @Sendable (AudioChunk) -> Void) async {
        var tone = ToneGenerator()
        var chunk: UInt64 = 0
        let frames = UInt64(Self.chunkFrames)
        while !Task.isCancelled {
            let first = chunk * frames
            do {
                try await clock.sleep(until: Self.sampleTime(first + frames, startTime: startTime))
            } catch {
                return
            }
            let samples = tone.render(frames: Self.chunkFrames)
            deliver(AudioChunk(samples: samples, firstSampleTime: Self.sampleTime(first, startTime: startTime)))
            delivered.add(1, ordering: .relaxed)
            chunk += 1
        }
    }
}
