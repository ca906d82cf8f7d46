import CamoMedia
import Foundation

/// The `sound` trigger: the microphone's level in dBFS, measured over 100 ms windows, against a threshold that
/// must hold for a minimum time. A plain value: feed it the captured chunks in order.
///
/// A window's level is the RMS of all its samples, both channels, in dB relative to full scale (a full-scale
/// square wave is 0 dBFS, a full-scale sine -3 dBFS; silence is -120). A window is loud at or above
/// ``Configuration/thresholdDBFS`` (-30 by default); it triggers when it and the windows before it were loud for
/// at least ``Configuration/minimumDuration`` (200 ms, two windows), so a click does not. Every triggering window
/// is reported; feed them to an ``EventTimeControl`` for events. A gap in the chunks' times restarts the window.
public struct SoundLevelDetector: Sendable {
    /// The threshold and how long it must hold.
    public struct Configuration: Sendable, Hashable, Codable {
        /// Loud from this level up, dBFS.
        public var thresholdDBFS: Float
        /// How long the level must stay loud to trigger, ns (rounded up to whole 100 ms windows, at least one).
        public var minimumDuration: UInt64

        /// A configuration; the defaults are -30 dBFS for 200 ms.
        public init(thresholdDBFS: Float = -30, minimumDuration: UInt64 = 200_000_000) {
            self.thresholdDBFS = thresholdDBFS
            self.minimumDuration = minimumDuration
        }
    }

    /// One measured window.
    public struct Window: Sendable, Hashable {
        /// When the window began, ns.
        public var start: UInt64
        /// Its level, dBFS (-120...about 0).
        public var level: Float
        /// Whether it was at or above the threshold.
        public var isLoud: Bool
        /// Whether the level held long enough: the sound trigger fires.
        public var triggers: Bool
    }

    /// Window length: 100 ms at 48 kHz.
    public static let windowFrames = 4_800
    /// The level reported for silence.
    public static let floorDBFS: Float = -120

    /// The threshold and time in use.
    public let configuration: Configuration
    /// The last window's level, dBFS; nil before the first.
    public private(set) var level: Float?

    private var clock = SampleClock()
    private var sumOfSquares: Double = 0
    private var framesInWindow = 0
    private var windowStart: UInt64 = 0
    private var loudWindows = 0

    /// A detector with nothing heard yet.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Windows needed in a row to trigger.
    var requiredWindows: Int {
        max(1, Int((configuration.minimumDuration + 99_999_999) / 100_000_000))
    }

    /// Takes the next chunk; returns the windows it completed, in order.
    public mutating func process(_ chunk: AudioChunk) -> [Window] {
        if !clock.begin(chunkAt: chunk.firstSampleTime) {
            sumOfSquares = 0
            framesInWindow = 0
            loudWindows = 0
        }
        var windows: [Window] = []
        let frames = min(chunk.sampleFrames, chunk.samples.count / 2)
        chunk.samples.withUnsafeBufferPointer { samples in
            var frame = 0
            while frame < frames {
                if framesInWindow == 0 { windowStart = clock.time(ofFrame: clock.count + UInt64(frame)) }
                let take = min(Self.windowFrames - framesInWindow, frames - frame)
                var sum: Double = 0
                for i in (2 * frame)..<(2 * (frame + take)) { sum += Double(samples[i]) * Double(samples[i]) }
                sumOfSquares += sum
                framesInWindow += take
                frame += take
                if framesInWindow == Self.windowFrames {
                    windows.append(closeWindow())
                }
            }
        }
        clock.advance(by: frames)
        return windows
    }

    private mutating func closeWindow() -> Window {
        let meanSquare = sumOfSquares / Double(2 * Self.windowFrames)
        let decibels = meanSquare > 0 ? max(Float(10 * log10(meanSquare)), Self.floorDBFS) : Self.floorDBFS
        sumOfSquares = 0
        framesInWindow = 0
        level = decibels
        let loud = decibels >= configuration.thresholdDBFS
        loudWindows = loud ? loudWindows + 1 : 0
        return Window(start: windowStart, level: decibels, isLoud: loud, triggers: loudWindows >= requiredWindows)
    }
}
