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
/// what time it is on the agent's clock, ns).
///
/// The algorithm is delay-based: Google Congestion Control's (GCC) state machine and decrease rule, fed with a
/// SCReAM/LEDBAT-style queue delay. Over TCP nothing is lost, so a loss-based controller learns nothing until the
/// socket buffer is full and the latency is already seconds; the one-way delay shows a queue as soon as it starts
/// to build, which is what a live picture cares about. And the agent and the studio share no clock, which the
/// base delay of LEDBAT cancels without any synchronization.
///
/// - **Queue delay** (SCReAM/LEDBAT): a frame's one-way delay is `receivedAt - captureTime` (a wrapping difference,
///   so the clocks' offset may be anything, either way). The base delay is its minimum over the last 10 s; the
///   queue delay is the one-way delay minus the base: the time the frame spent queued (at the agent, in the
///   socket, in the network) beyond the best recent case. It is smoothed (exponentially, weight 0.3 per frame);
///   GCC's trendline, the least-squares slope of the last 20 frames' queue delays against their capture times,
///   says whether the queue grows (a slope of 0.1: the agent sends 10 % more than the link carries) or drains.
/// - **Rate** (GCC's increase / hold / decrease): below 20 ms of queue delay the target grows 40 %/s, and after
///   a second of that faster, up to 80 %/s (GCC probes for the same reason: a link that came back should be used
///   within seconds; from 1.5 Mb/s past 80 % of 6 Mb/s takes about 3 s in the simulation; 30 %/s rising to 60 %/s
///   took 4.9 s end to end behind a real tbf link, too close to the 5 s the issue allows). Between 20 and 60 ms it grows 8 %/s
///   while the trend is flat, holds while it creeps up, and is overuse when it rises steeply (above 0.05). From
///   60 ms up, a queue that is not draining is overuse. Overuse cuts the target to 0.85 × the rate the studio
///   received over the last ~500 ms (what the link just proved it carries, less room to drain the queue), at most
///   every 250 ms; the cut takes the received rate, not the target, so cuts in a row do not compound while the
///   link is saturated. A queue that drains (its delay fell since the last report) is left to drain: hold. Growth
///   never takes the target beyond 1.5 × the received rate (an encoder that undershoots, on a still picture, must
///   not leave a target the link never carried). The target stays within the configuration's floor and ceiling.
/// - **Silence**: a report without frames while frames sent are still unreported is not an idle link. The agent's
///   clock bounds the wait: the oldest unreported frame is at least `now - its send time - the smallest feedback
///   age` late (the feedback age is `now - the newest reported capture time`; its minimum over 10 s is the base
///   one-way delay plus the report's way back), and that bound stands for the queue delay when it is larger. A
///   report without frames while nothing is in flight changes nothing.
/// - **Skipping**: before each frame, the latency it would see is estimated as the network's share (while frames
///   are in flight: the largest of the queue delay, the silence bound, and the time the frames sent before the
///   last report and missing from it take at the received rate; none without a report for 1 s, so that a studio
///   that stopped reporting cannot stop the video) plus the
///   bytes queued at the agent at the target rate. Above the budget the frame is skipped, and a skip counts as
///   overuse at the next report (unless the queue is draining): it catches a queue that never drained since the
///   session started, which the base delay, measured through that queue, cannot see.
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
    static let fastGrowthPerSecond = 0.40
    /// After 1 s of fast growth, the growth per second rises by this each second...
    static let acceleration = 0.20
    /// ...up to this.
    static let maximumGrowthPerSecond = 0.80
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
    /// Between the two delays, a trend above this holds the target (the queue creeps up); below it, slow growth.
    static let steadyTrend = 0.01
    /// A trend below this is a draining queue.
    static let drainingTrend = -0.02
    /// A frame sent up to this long after its capture time is matched to that capture time.
    static let sendSlack: UInt64 = 15_000_000
    /// Reports older than this no longer count for skipping.
    static let reportTimeout: Int64 = 1_000_000_000
    /// Bounds are clamped to this, bits/s (1 Pb/s: any `Int` converts to and from it).
    static let maximumRate: Double = 1e15
    /// Queue delays are clamped to this (a garbage timestamp must not overflow anything).
    static let maximumDelay: Double = 60_000_000_000
    /// Report intervals kept for the received rate (its 500 ms window is normally 5 of them).
    static let maximumIntervals = 64
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

    private struct SentFrame: Sendable {
        var time: UInt64
        /// Estimated: the target times the frame interval (the encoder's budget for it), until ``frameSent(bytes:)``
        /// says what it really was.
        var bits: Double
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
    private var outstanding: [SentFrame] = []
    private var lastReportAt: UInt64?
    private var lastDecreaseAt: UInt64?
    /// Since when the queue delay has stayed under ``lowDelay`` (the target growing fast), or nil.
    private var fastSince: UInt64?
    /// Frames skipped since the last report.
    private var skippedSinceReport = 0
    /// When ``shouldSkipFrame(queuedBytes:now:)`` was last asked.
    private var lastFrameAt: UInt64?
    /// The frame last taken as sent still has its estimated size (``frameSent(bytes:)`` not yet called).
    private var awaitingSize = false
    /// The smoothed queue delay at the last report the state machine ran for.
    private var previousDelay: Double?

    /// A controller at the configuration's start rate, before any report.
    public init(configuration: LinkRateConfiguration = .init()) {
        self.configuration = configuration
        let floor = min(Double(max(configuration.floor, 1)), Self.maximumRate)
        let ceiling = min(max(Double(configuration.ceiling), floor), Self.maximumRate)
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

    /// `(1 + perSecond)^seconds`, by series (the standard library has no `pow`); exact enough for rates up to 100 %/s
    /// over a fraction of a second.
    static func growth(_ perSecond: Double, over seconds: Double) -> Double {
        // ln(1 + r) = 2 artanh(r / (2 + r)); y is at most 1/3 here.
        let y = perSecond / (2 + perSecond)
        let y2 = y * y
        let logarithm = 2 * y * (1 + y2 / 3 + y2 * y2 / 5 + y2 * y2 * y2 / 7 + y2 * y2 * y2 * y2 / 9)
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

        // What the studio received; an interval with nothing sent and nothing received says nothing of the link.
        // A report that covers no time says nothing of a rate (and must not grow the window: the studio chooses it).
        if intervalNanos > 0, bytesReceived > 0 || accepted > 0 || !outstanding.isEmpty {
            received.append(ReceiveInterval(bytes: max(bytesReceived, 0), nanos: intervalNanos))
            if received.count > Self.maximumIntervals { received.removeFirst(received.count - Self.maximumIntervals) }
            var total = 0.0
            var keep = 0
            for interval in received.reversed() {
                keep += 1
                total += Double(interval.nanos)
                if total >= Double(Self.receiveWindow) { break }
            }
            if keep < received.count { received.removeFirst(received.count - keep) }
        }

        let skipped = skippedSinceReport
        skippedSinceReport = 0
        guard let smoothed = smoothedDelay else { return }
        var delay = smoothed
        var slope = trendSlope()
        var congested = false
        // Silence while frames are in flight is delay too.
        if let silence = silenceDelay(now: now), silence > delay, silence >= Self.lowDelay {
            delay = silence
            slope = max(slope, 1)  // Nothing arrives: the queue only grows.
            congested = true
        }
        // Frames skipped for latency: the target is more than the link carries, whatever the delay says (its base
        // is too high when the queue never drained since the session started).
        if skipped > 0 {
            delay = max(delay, Self.highDelay)
            slope = max(slope, Self.risingTrend)
            congested = true
        }
        // Otherwise a report without frames changes nothing.
        if accepted == 0 && !congested { return }
        // The trendline spans ~0.7 s; a queue delay that fell since the last report is draining, whatever the
        // trendline, the silence or the skips say (skips then come from the queue that is draining).
        if let previous = previousDelay, smoothed < previous { slope = min(slope, Self.drainingTrend * 2) }
        previousDelay = smoothed
        adjust(delay: delay, slope: slope, elapsed: elapsed, now: now)
    }

    /// Takes in one new sample.
    private mutating func accept(_ frame: ReceivedFrameSample) {
        newestCapture = frame.captureTime
        var sent = 0
        while sent < outstanding.count, Self.distance(outstanding[sent].time, from: frame.captureTime) <= Int64(Self.sendSlack) {
            sent += 1
        }
        if sent > 0 { outstanding.removeFirst(sent) }
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
        // Bounded whatever the studio's timestamps say (a frame each 1 ns of capture time would pass the window).
        if deque.count > Self.maximumOutstanding { deque.removeFirst(deque.count - Self.maximumOutstanding) }
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
        guard let oldest = outstanding.first?.time, let feedback = feedbackAges.first?.delay else { return nil }
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
        let overuse = delay >= Self.highDelay ? slope > Self.drainingTrend : delay >= Self.lowDelay && slope > Self.risingTrend
        if delay >= Self.lowDelay { fastSince = nil }
        if overuse {
            phase = .decrease
            if let last = lastDecreaseAt, Self.distance(now, from: last) < Self.decreaseInterval { return }
            lastDecreaseAt = now
            let cut = (receivedRate ?? rate) * Self.decreaseFactor
            rate = min(max(min(rate, cut), floorRate), ceilingRate)
        } else if delay >= Self.highDelay || (delay >= Self.lowDelay && slope > Self.steadyTrend) {
            phase = .hold
        } else {
            phase = .increase
            let perSecond: Double
            if delay < Self.lowDelay {
                // Fast growth speeds up while the queue stays empty (GCC probes for the same reason).
                let since = fastSince ?? now
                fastSince = since
                let streak = Double(max(Self.distance(now, from: since), 0)) / 1e9
                let extra = min(max(streak - 1, 0) * Self.acceleration, Self.maximumGrowthPerSecond - Self.fastGrowthPerSecond)
                perSecond = Self.fastGrowthPerSecond + extra
            } else {
                fastSince = nil
                perSecond = Self.slowGrowthPerSecond
            }
            var grown = rate * Self.growth(perSecond, over: elapsed)
            if let received = receivedRate { grown = min(grown, max(rate, received * Self.receivedRateHeadroom)) }
            rate = min(max(grown, floorRate), ceilingRate)
        }
    }

    /// The frame the last ``shouldSkipFrame(queuedBytes:now:)`` let through went out with `bytes` bytes: its real
    /// size once encoded (an encoder undershoots its target on a simple picture, often by 4x), or a placeholder's few
    /// bytes when another session on the rendition had it skipped. Without it the frames in flight are reckoned at
    /// the target's size and, draining at the rate the studio really receives, look like a queue that is not there.
    public mutating func frameSent(bytes: Int) {
        guard awaitingSize, !outstanding.isEmpty else { return }
        awaitingSize = false
        outstanding[outstanding.count - 1].bits = Double(max(bytes, 0) * 8)
    }

    /// Whether to skip the frame about to be encoded; `queuedBytes` = bytes queued for this studio not yet written
    /// to the socket. Counts skips.
    ///
    /// The frame is skipped when the network's share of the latency (while frames are in flight and reports come)
    /// plus `queuedBytes` at the target rate exceeds the latency budget. A frame not skipped is taken as sent at
    /// `now` (agent clock, ns), about its capture time.
    public mutating func shouldSkipFrame(queuedBytes: Int, now: UInt64) -> Bool {
        // The frame interval, for the estimated size of the frame (the encoder's budget for it).
        var interval: Double = 1.0 / 30
        if let previous = lastFrameAt {
            let nanos: Int64 = min(max(Self.distance(now, from: previous), 1_000_000), 100_000_000)
            interval = Double(nanos) / 1e9
        }
        lastFrameAt = now
        var network = 0.0
        // Frames in flight wait behind the queue; without recent reports the agent's own queue is all it knows
        // (a studio that stopped reporting must not stop the video).
        if !outstanding.isEmpty, let last = lastReportAt, Self.distance(now, from: last) <= Self.reportTimeout {
            network = max(smoothedDelay ?? 0, silenceDelay(now: now) ?? 0)
            // The frames sent before the last report and not in it drain at the received rate (less ~20 ms for
            // those on their way when it left): this holds even while the base delay is not yet known (a session
            // that starts above the link's rate, whose queue never drained).
            if let received = receivedRate, received > 0 {
                var bits = 0.0
                for frame in outstanding where Self.distance(last, from: frame.time) > 0 { bits += frame.bits }
                let drain: Double = bits / received * 1e9 - Self.lowDelay
                network = max(network, drain)
            }
        }
        let local = Double(max(queuedBytes, 0)) * 8 / rate * 1e9
        if network + local > budget {
            skippedFrames += 1
            skippedSinceReport += 1
            return true
        }
        let bits: Double = rate * interval
        outstanding.append(SentFrame(time: now, bits: bits))
        awaitingSize = true
        if outstanding.count > Self.maximumOutstanding { outstanding.removeFirst(outstanding.count - Self.maximumOutstanding) }
        return false
    }
}
