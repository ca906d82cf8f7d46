/// The bounds and the latency budget of a ``LinkRateController``.
public struct LinkRateConfiguration: Sendable, Hashable {
    /// The lowest target bitrate, bits/s: the controller never asks the encoder for less.
    public var floor: Int = 500_000
    /// The highest target bitrate, bits/s: the controller never asks the encoder for more.
    public var ceiling: Int = 6_000_000
    /// The first target bitrate, bits/s, before any receiver report (clamped to `floor...ceiling`).
    public var start: Int = 2_000_000
    /// The capture-to-arrival latency, ns, above which the next frame is skipped before it is encoded.
    public var latencyBudgetNanos: UInt64 = 200_000_000

    /// A configuration with the given bounds (bits/s) and latency budget (ns).
    public init(
        floor: Int = 500_000, ceiling: Int = 6_000_000, start: Int = 2_000_000, latencyBudgetNanos: UInt64 = 200_000_000
    ) {
        self.floor = floor
        self.ceiling = ceiling
        self.start = start
        self.latencyBudgetNanos = latencyBudgetNanos
    }

    /// Defaults scaled by pixel count from the 720p ones (floor 0.5, ceiling 6 Mb/s at 1280x720), clamped to sane minima.
    ///
    /// The scale is `width × height / (1280 × 720)`, at most 64 (beyond 8K the numbers stop meaning anything); the
    /// floor is at least 100 kb/s, the ceiling at least 1 Mb/s, and the start (2 Mb/s at 720p) lies between them.
    /// A non-positive size counts as the smallest.
    public static func forSize(width: Int, height: Int) -> LinkRateConfiguration {
        let pixels = Double(max(width, 0)) * Double(max(height, 0))
        let scale = min(pixels / (1280.0 * 720.0), 64)
        let floor = max(100_000, Int((500_000 * scale).rounded()))
        let ceiling = max(1_000_000, Int((6_000_000 * scale).rounded()))
        let start = min(max(Int((2_000_000 * scale).rounded()), floor), ceiling)
        return LinkRateConfiguration(floor: floor, ceiling: ceiling, start: start)
    }
}

/// One video frame the studio finished receiving, as its receiver report lists it.
public struct ReceivedFrameSample: Sendable, Hashable {
    /// When the agent captured the frame: agent clock, ns.
    public var captureTime: UInt64
    /// When the studio finished receiving the frame: studio clock, ns (an unknown constant offset from the agent's).
    public var receivedAt: UInt64
    /// The frame's size in bytes.
    public var bytes: Int

    /// A sample of a frame captured at `captureTime` (agent clock), received at `receivedAt` (studio clock).
    public init(captureTime: UInt64, receivedAt: UInt64, bytes: Int) {
        self.captureTime = captureTime
        self.receivedAt = receivedAt
        self.bytes = bytes
    }
}

/// Chooses the encoder's bitrate for one studio from the studio's receiver reports, and skips frames before they are
/// encoded when the latency would exceed the budget. A plain value: no I/O, no clock of its own (every call says
/// what time it is on the agent's clock).
///
/// The algorithm is delay-based, after Google Congestion Control (GCC) and SCReAM/LEDBAT. Over TCP nothing is lost,
/// so loss-based control learns nothing until the socket buffer is full and the latency is already seconds; the
/// one-way delay tells as soon as a queue starts to build, which is what a live picture cares about.
///
/// - **Queue delay** (SCReAM/LEDBAT): each frame's one-way delay is `receivedAt - captureTime` (a wrapping
///   difference, so the two clocks' offset may be anything). The base delay is the minimum of it over the last
///   10 s; the queue delay is the one-way delay minus the base, which cancels the offset and leaves the time the
///   frame spent queued (at the agent, in the socket, in the network) beyond the best recent case. It is smoothed
///   (exponentially, per frame), and a trend, the least-squares slope of the last 20 frames' queue delays against
///   their capture times (GCC's trendline), says whether the queue grows or drains.
/// - **Rate** (GCC's state machine, with SCReAM's target queue delay): below 20 ms of queue delay the target grows
///   30 %/s (from 1.5 Mb/s past 80 % of 6 Mb/s in under 5 s once a link recovers); between 20 and 60 ms it grows
///   8 %/s while the trend is flat (*increase*), and holds while the queue is growing. From 60 ms up, a queue that
///   is not draining is overuse: the target drops to 0.85 × the rate the studio received over the last ~500 ms
///   (*decrease*; what the link just proved it carries, minus room to drain the queue), at most once per 250 ms so
///   that a cut shows in the reports before the next; a queue that drains is left to drain (*hold*). Growth never
///   takes the target beyond 1.5 × the received rate, so an encoder that undershoots (a still picture) does not
///   leave a target the link never carried.
/// - **Silence**: a report with no frames while frames sent are still unreported is not an idle link. The agent's
///   own clock bounds the wait: the oldest unreported frame is at least `now - its send time - the smallest
///   feedback age seen` (the feedback age is `now - the newest reported capture time`, over 10 s) late, so that
///   lower bound stands in for the queue delay when it is larger. An empty report with nothing sent changes nothing.
/// - **Skipping**: before each frame, the latency it would see is estimated as the queue delay (when frames are in
///   flight, else none) plus the bytes queued at the agent at the target rate; above the budget the frame is skipped.
///
/// Samples not newer than the newest capture time seen (late or repeated reports) are ignored.
public struct LinkRateController: Sendable {
    /// The state of the rate control, for logs and stats.
    public enum Phase: String, Sendable {
        /// The queue delay is low: the target grows.
        case increase
        /// The queue delay is between the targets, or high but draining: the target stays.
        case hold
        /// The queue grows past the target delay: the target was cut to below the received rate.
        case decrease
    }

    // MARK: Tuning (ns unless said).

    /// Below this queue delay the target grows fast.
    static let lowDelay: Double = 20_000_000
    /// From this queue delay up, a queue that is not draining is overuse.
    static let highDelay: Double = 60_000_000
    /// Fast growth per second (queue delay below ``lowDelay``).
    static let fastGrowthPerSecond = 0.30
    /// Slow growth per second (queue delay between ``lowDelay`` and ``highDelay``, trend flat).
    static let slowGrowthPerSecond = 0.08
    /// The cut: the new target is this times the received rate.
    static let decreaseFactor = 0.85
    /// Growth never takes the target beyond this times the received rate.
    static let receivedRateHeadroom = 1.5
    /// The window of the base delay (and of the smallest feedback age).
    static let baseWindow: Int64 = 10_000_000_000
    /// The window of the received rate.
    static let receiveWindow: Int64 = 500_000_000
    /// The shortest time between two cuts.
    static let decreaseInterval: Int64 = 250_000_000
    /// The weight of a new sample in the smoothed queue delay.
    static let smoothing = 0.3
    /// Frames in the trendline.
    static let trendSamples = 20
    /// A trend (queue delay growth per unit time) above this is a growing queue.
    static let risingTrend = 0.05
    /// A trend below this is a draining queue.
    static let drainingTrend = -0.02
    /// A frame sent up to this long after its capture time is matched to that capture time.
    static let sendSlack: UInt64 = 15_000_000
    /// Queue delays are clamped to this (a garbage timestamp must not overflow anything).
    static let maximumDelay: Double = 60_000_000_000
    /// Unreported sends remembered (30 fps for 17 s).
    static let maximumOutstanding = 512

    private struct TimedDelay: Sendable {
        var time: UInt64
        var delay: Int64
    }

    private struct TrendPoint: Sendable {
        var seconds: Double
        var delay: Double
    }

    private struct ReceiveInterval: Sendable {
        var bytes: Int
        var nanos: UInt64
    }

    /// The configuration as given; the controller works within its sanitized bounds.
    public let configuration: LinkRateConfiguration
    /// Frames skipped so far by ``shouldSkipFrame(queuedBytes:now:)``.
    public private(set) var skippedFrames: Int = 0
    /// The state of the rate control, for logs and stats.
    public private(set) var phase: Phase = .increase

    private let floorRate: Double
    private let ceilingRate: Double
    private let budget: Double
    private var rate: Double
    private var smoothedDelay: Double?
    /// The first one-way delay seen; all others are kept relative to it, so the clock offset never overflows anything.
    private var delayReference: Int64?
    private var newestCapture: UInt64?
    private var trendOrigin: UInt64?
    /// Monotonic deque (increasing delays) of one-way delays over ``baseWindow``: its first is the base delay.
    private var baseDelays: [TimedDelay] = []
    /// Monotonic deque of feedback ages (agent `now` minus the newest reported capture time) over ``baseWindow``.
    private var feedbackAges: [TimedDelay] = []
    private var trend: [TrendPoint] = []
    private var received: [ReceiveInterval] = []
    /// Send times (agent clock) of frames not yet seen in a report, oldest first.
    private var outstanding: [UInt64] = []
    private var lastReportAt: UInt64?
    private var lastDecreaseAt: UInt64?

    /// A controller at the configuration's start rate, before any report.
    public init(configuration: LinkRateConfiguration = .init()) {
        self.configuration = configuration
        let floor = Double(max(configuration.floor, 1))
        let ceiling = max(Double(configuration.ceiling), floor)
        floorRate = floor
        ceilingRate = ceiling
        budget = Double(configuration.latencyBudgetNanos)
        rate = min(max(Double(configuration.start), floor), ceiling)
    }

    /// The bitrate the encoder should use now, bits/s, within the configuration's floor and ceiling.
    public var targetBitrate: Int { Int(rate.rounded()) }

    /// The latest queue-delay estimate in ns (nil before any report with a frame), for logs and stats.
    public var queueDelayNanos: UInt64? { smoothedDelay.map { UInt64($0.rounded()) } }

    /// The signed distance from `b` to `a` on a wrapping 64-bit clock.
    private static func distance(_ a: UInt64, from b: UInt64) -> Int64 { Int64(bitPattern: a &- b) }

    /// `(1 + perSecond)^seconds` for small exponents (a few terms of exp; the standard library has no `pow`).
    private static func growth(_ perSecond: Double, over seconds: Double) -> Double {
        // ln(1 + r) by its series is poor for r = 0.3; these two are the only ones used.
        let logarithm: Double = perSecond == fastGrowthPerSecond ? 0.262_364_264_467_491 : 0.076_961_041_136_128
        let x = logarithm * seconds
        return 1 + x + x * x / 2 + x * x * x / 6 + x * x * x * x / 24
    }

    /// A receiver report arrived at agent time `now` (agent clock, ns).
    ///
    /// `frames` are the frames the studio finished receiving in the interval, `bytesReceived` all bytes it received
    /// in it and `intervalNanos` its length (studio clock). Frames not newer than the newest seen are ignored.
    public mutating func receiveReport(frames: [ReceivedFrameSample], bytesReceived: Int, intervalNanos: UInt64, now: UInt64) {
        let elapsed: Double
        if let last = lastReportAt {
            elapsed = Double(min(max(Self.distance(now, from: last), 0), 250_000_000)) / 1e9
        } else {
            elapsed = 0.1
        }
        lastReportAt = now

        // New samples, oldest first.
        let anchor = newestCapture ?? frames.first?.captureTime ?? 0
        let fresh = frames
            .filter { frame in newestCapture.map { Self.distance(frame.captureTime, from: $0) > 0 } ?? true }
            .sorted { Self.distance($0.captureTime, from: anchor) < Self.distance($1.captureTime, from: anchor) }
        var accepted = 0
        for frame in fresh {
            if let newest = newestCapture, Self.distance(frame.captureTime, from: newest) <= 0 { continue }
            accept(frame)
            accepted += 1
        }
        if accepted > 0, let newest = newestCapture {
            pushMinimum(&feedbackAges, TimedDelay(time: now, delay: Self.distance(now, from: newest)), now: now)
        }

        // Silence while frames are in flight is delay too.
        let silence = silenceDelay(now: now)
        if accepted == 0 && (silence ?? 0) <= 0 && bytesReceived <= 0 {
            return  // Nothing learned (an idle link, or a report of nothing).
        }
        if bytesReceived > 0 || accepted > 0 || !outstanding.isEmpty {
            received.append(ReceiveInterval(bytes: max(bytesReceived, 0), nanos: intervalNanos))
            var total: UInt64 = 0
            var keep = 0
            for interval in received.reversed() {
                keep += 1
                total &+= interval.nanos
                if total >= UInt64(Self.receiveWindow) { break }
            }
            if keep < received.count { received.removeFirst(received.count - keep) }
        }
        guard let smoothed = smoothedDelay else { return }
        var delay = smoothed
        var slope = trendSlope()
        if let silence, silence > delay {
            delay = silence
            slope = max(slope, 1)  // Nothing arrives: the queue only grows.
        }
        adjust(delay: delay, slope: slope, elapsed: elapsed, now: now)
    }

    /// Takes in one new sample.
    private mutating func accept(_ frame: ReceivedFrameSample) {
        newestCapture = frame.captureTime
        while let first = outstanding.first, Self.distance(first, from: frame.captureTime) <= Int64(Self.sendSlack) {
            outstanding.removeFirst()
        }
        let oneWay = Int64(bitPattern: frame.receivedAt &- frame.captureTime)
        let reference = delayReference ?? oneWay
        delayReference = reference
        let relative = oneWay &- reference
        pushMinimum(&baseDelays, TimedDelay(time: frame.captureTime, delay: relative), now: frame.captureTime)
        let base = baseDelays.first?.delay ?? relative
        let queue = min(max(Double(relative &- base), 0), Self.maximumDelay)

        smoothedDelay = smoothedDelay.map { $0 + Self.smoothing * (queue - $0) } ?? queue
        let origin = trendOrigin ?? frame.captureTime
        trendOrigin = origin
        trend.append(TrendPoint(seconds: Double(Self.distance(frame.captureTime, from: origin)) / 1e9, delay: queue / 1e9))
        if trend.count > Self.trendSamples { trend.removeFirst(trend.count - Self.trendSamples) }
    }

    /// Adds `value` to a sliding-window-minimum deque and drops what left the window.
    private func pushMinimum(_ deque: inout [TimedDelay], _ value: TimedDelay, now: UInt64) {
        while let last = deque.last, last.delay >= value.delay { deque.removeLast() }
        deque.append(value)
        var drop = 0
        while drop < deque.count - 1, Self.distance(now, from: deque[drop].time) > Self.baseWindow { drop += 1 }
        if drop > 0 { deque.removeFirst(drop) }
    }

    /// The least-squares slope of the recent queue delays against capture time (dimensionless), 0 with too few.
    private func trendSlope() -> Double {
        guard trend.count >= 3 else { return 0 }
        let count = Double(trend.count)
        let meanX = trend.reduce(0) { $0 + $1.seconds } / count
        let meanY = trend.reduce(0) { $0 + $1.delay } / count
        var numerator = 0.0
        var denominator = 0.0
        for point in trend {
            numerator += (point.seconds - meanX) * (point.delay - meanY)
            denominator += (point.seconds - meanX) * (point.seconds - meanX)
        }
        guard denominator > 1e-9 else { return 0 }
        let slope = numerator / denominator
        return slope.isFinite ? slope : 0
    }

    /// A lower bound of the delay of the oldest frame sent and not yet reported, ns, or nil when none is out or
    /// no feedback age is known yet.
    private func silenceDelay(now: UInt64) -> Double? {
        guard let oldest = outstanding.first, let feedback = feedbackAges.first?.delay else { return nil }
        let late = Self.distance(now, from: oldest) &- feedback
        return min(Double(max(late, 0)), Self.maximumDelay)
    }

    /// The received rate over the last ~500 ms, bits/s, or nil before any.
    private var receivedRate: Double? {
        let nanos = received.reduce(0.0) { $0 + Double($1.nanos) }
        guard nanos >= 1_000_000 else { return nil }
        let bits = received.reduce(0.0) { $0 + Double($1.bytes) * 8 }
        let rate = bits / (nanos / 1e9)
        return rate.isFinite ? rate : nil
    }

    /// The state machine: one step for a report, with queue delay `delay` (ns) and trend `slope`.
    private mutating func adjust(delay: Double, slope: Double, elapsed: Double, now: UInt64) {
        if delay >= Self.highDelay && slope > Self.drainingTrend {
            phase = .decrease
            if let last = lastDecreaseAt, Self.distance(now, from: last) < Self.decreaseInterval { return }
            lastDecreaseAt = now
            let cut = (receivedRate ?? rate) * Self.decreaseFactor
            rate = min(max(min(rate, cut), floorRate), ceilingRate)
        } else if delay >= Self.highDelay || (delay >= Self.lowDelay && slope > Self.risingTrend) {
            phase = .hold
        } else {
            phase = .increase
            let perSecond = delay < Self.lowDelay ? Self.fastGrowthPerSecond : Self.slowGrowthPerSecond
            var grown = rate * Self.growth(perSecond, over: elapsed)
            if let received = receivedRate { grown = min(grown, max(rate, received * Self.receivedRateHeadroom)) }
            rate = min(max(grown, floorRate), ceilingRate)
        }
    }

    /// Whether to skip the frame about to be encoded; `queuedBytes` = bytes queued for this studio not yet written
    /// to the socket. Counts skips.
    ///
    /// The frame is skipped when the queue delay (while frames are in flight) plus `queuedBytes` at the target rate
    /// exceeds the latency budget. A frame not skipped is taken as sent at `now` (agent clock, ns).
    public mutating func shouldSkipFrame(queuedBytes: Int, now: UInt64) -> Bool {
        var network = 0.0
        if !outstanding.isEmpty {
            network = max(smoothedDelay ?? 0, silenceDelay(now: now) ?? 0)
        }
        let local = Double(max(queuedBytes, 0)) * 8 / rate * 1e9
        if network + local > budget {
            skippedFrames += 1
            return true
        }
        outstanding.append(now)
        if outstanding.count > Self.maximumOutstanding { outstanding.removeFirst(outstanding.count - Self.maximumOutstanding) }
        return false
    }
}
