/// The live figures of a feed over the last second: frames per second, bitrate, and capture-to-receipt latency
/// (the agent's capture clock mapped to the studio's with the best clock sample). A plain value on explicit times.
public struct FeedFigures: Sendable, Equatable {
    /// What the last whole window measured.
    public struct Snapshot: Sendable, Equatable, Codable {
        /// New frames per second (repeats not counted).
        public var framesPerSecond: Double
        /// Kilobits per second on the wire (video).
        public var kbitPerSecond: Double
        /// Median capture-to-receipt latency, ms; nil before a clock sample.
        public var latencyMs: Double?

        /// A snapshot of the given figures.
        public init(framesPerSecond: Double, kbitPerSecond: Double, latencyMs: Double?) {
            self.framesPerSecond = framesPerSecond
            self.kbitPerSecond = kbitPerSecond
            self.latencyMs = latencyMs
        }
    }

    /// The window's length.
    public let windowNanos: UInt64
    /// The last whole window's figures (nil before one has passed).
    public private(set) var last: Snapshot?
    private var windowStart: UInt64?
    private var frames = 0
    private var bytes = 0
    private var latencies: [Double] = []
    private var bestClock: (offset: Int64, roundTrip: UInt64)?

    /// Figures over windows of `windowNanos` (one second).
    public init(windowNanos: UInt64 = 1_000_000_000) {
        self.windowNanos = windowNanos
    }

    public static func == (lhs: FeedFigures, rhs: FeedFigures) -> Bool {
        lhs.last == rhs.last && lhs.frames == rhs.frames && lhs.bytes == rhs.bytes && lhs.windowStart == rhs.windowStart
    }

    /// A frame of `bytes` captured at `captureTime` (agent clock) arrived at `receivedAt` (studio clock, = now).
    public mutating func frame(bytes: Int, captureTime: UInt64, receivedAt: UInt64, isNew: Bool) {
        roll(now: receivedAt)
        self.bytes += bytes
        guard isNew else { return }
        frames += 1
        if let bestClock {
            let latency = Double(Int64(bitPattern: receivedAt &+ UInt64(bitPattern: bestClock.offset) &- captureTime)) / 1e6
            latencies.append(latency)
        }
    }

    /// A clock sample (the agent's clock minus the studio's); the smallest round trip wins.
    public mutating func clockSample(offsetNanos: Int64, roundTripNanos: UInt64) {
        if bestClock == nil || roundTripNanos < bestClock!.roundTrip { bestClock = (offsetNanos, roundTripNanos) }
    }

    /// A new session: another agent boot may have another clock.
    public mutating func beginSession() { bestClock = nil }

    /// Closes windows that have passed by `now` (call it now and then, so a feed with no frames shows 0 fps).
    public mutating func roll(now: UInt64) {
        guard let start = windowStart else {
            windowStart = now
            return
        }
        guard now >= start + windowNanos else { return }
        let seconds = Double(windowNanos) / 1e9
        if now >= start + 2 * windowNanos {
            // A whole window passed without anything.
            last = Snapshot(framesPerSecond: 0, kbitPerSecond: 0, latencyMs: nil)
            windowStart = now
        } else {
            let sorted = latencies.sorted()
            last = Snapshot(
                framesPerSecond: Double(frames) / seconds, kbitPerSecond: Double(bytes) * 8 / 1000 / seconds,
                latencyMs: sorted.isEmpty ? nil : sorted[sorted.count / 2])
            windowStart = start + windowNanos
        }
        frames = 0
        bytes = 0
        latencies = []
    }
}
