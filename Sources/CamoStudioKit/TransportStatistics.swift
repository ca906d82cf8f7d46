/// Three percentiles of a set of milliseconds (nearest rank).
public struct LatencyPercentiles: Sendable, Equatable, Codable {
    /// The median.
    public var p50: Double
    /// The 95th percentile.
    public var p95: Double
    /// The 99th percentile.
    public var p99: Double
    /// How many values.
    public var count: Int

    /// Percentiles of `values` (nil when empty).
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ q: Double) -> Double { sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))] }
        p50 = Self.rounded(rank(0.50))
        p95 = Self.rounded(rank(0.95))
        p99 = Self.rounded(rank(0.99))
        count = sorted.count
    }

    static func rounded(_ value: Double) -> Double { value.isFinite ? (value * 1000).rounded() / 1000 + 0 : 0 }
}

/// How the stream crossed the link: latency from capture to receipt and to a decoded picture, the bitrate over
/// time, skipped frames and keyframes, and, for the synthetic pattern, picture quality. Part of the summary.
public struct TransportSummary: Sendable, Equatable, Codable {
    /// Capture (agent clock) to the last byte's arrival (studio clock + offset), new frames only.
    public var captureToReceiveMs: LatencyPercentiles?
    /// Capture to the decoded picture.
    public var captureToDecodedMs: LatencyPercentiles?
    /// The agent's clock minus the studio's, from the round trip with the smallest time (nil: no round trip yet;
    /// the latencies then assume the same clock, as on one machine).
    public var clockOffsetMs: Double?
    /// That round trip.
    public var clockOffsetRoundTripMs: Double?
    /// Video kilobits per second (message bytes) for each second of slot time.
    public var bitrateKbps: [Double]
    /// Mean video kilobits per second over the recording.
    public var meanBitrateKbps: Double
    /// H.264 slots the agent skipped before its encoder (latency budget).
    public var skipped: Int
    /// H.264 keyframes received.
    public var keyframes: Int
    /// Keyframe requests this studio sent.
    public var keyframeRequests: Int
    /// The agent's last reported target bitrate in kb/s (1.1 stats; nil when not rate controlled).
    public var agentTargetKbps: Double?
    /// Every target the agent reported (about once a second): when it arrived, in seconds of the studio's
    /// monotonic clock, and the kb/s.
    public var agentTargets: [TargetSample]
    /// Mean PSNR (dB) of decoded test-pattern frames against the pattern drawn again from their frame number.
    public var patternPSNRMean: Double?
    /// The worst such PSNR.
    public var patternPSNRMin: Double?
    /// Frames the PSNR covers.
    public var patternPSNRFrames: Int
}

/// The agent's target bitrate at a time (``TransportSummary/agentTargets``).
public struct TargetSample: Sendable, Equatable, Codable {
    /// Seconds of the studio's monotonic clock when the agent's stats arrived.
    public var at: Double
    /// The target, kb/s.
    public var kbps: Double
}

/// Collects what ``TransportSummary`` reports, frame by frame. A plain value.
public struct TransportStatistics: Sendable {
    private struct Sample {
        var captureTime: UInt64
        var receivedAt: UInt64
        var decodedAt: UInt64
    }

    private var samples: [Sample] = []
    private var bytesPerSecond: [Int: Int] = [:]
    private var firstSlot: UInt64?
    private var totalBytes = 0
    private var lastSlot: UInt64?
    private var bestClock: (offset: Int64, roundTrip: UInt64)?
    private var psnrs: [Double] = []
    /// Skipped slots seen.
    public private(set) var skipped = 0
    /// Keyframes seen.
    public private(set) var keyframes = 0
    /// Keyframe requests sent.
    public private(set) var keyframeRequests = 0
    private var agentTarget: UInt32?
    private var targets: [TargetSample] = []

    /// Empty statistics.
    public init() {}

    /// A frame arrived: `bytes` on the wire; `isNew` false for repeats and skips (no latency sample).
    public mutating func frame(
        slotTime: UInt64, captureTime: UInt64, receivedAt: UInt64, decodedAt: UInt64, bytes: Int, isNew: Bool,
        isKeyframe: Bool, isSkipped: Bool
    ) {
        if firstSlot == nil { firstSlot = slotTime }
        lastSlot = slotTime
        let second = Int((slotTime &- (firstSlot ?? slotTime)) / 1_000_000_000)
        bytesPerSecond[second, default: 0] += bytes
        totalBytes += bytes
        if isSkipped { skipped += 1 }
        if isKeyframe { keyframes += 1 }
        if isNew, receivedAt > 0 {
            samples.append(Sample(captureTime: captureTime, receivedAt: receivedAt, decodedAt: decodedAt))
        }
    }

    /// A clock sample (``StudioEvent/clockSample(offsetNanos:roundTripNanos:)``); the smallest round trip wins.
    public mutating func clockSample(offsetNanos: Int64, roundTripNanos: UInt64) {
        if bestClock == nil || roundTripNanos < bestClock!.roundTrip { bestClock = (offsetNanos, roundTripNanos) }
    }

    /// A keyframe request went out.
    public mutating func keyframeRequested() { keyframeRequests += 1 }

    /// A new session began (a reconnection): its agent may be another boot with another clock, so the offset is
    /// learnt again from its own round trips.
    public mutating func beginSession() { bestClock = nil }

    /// The agent's stats said its target bitrate; `at` is the studio clock's nanoseconds.
    public mutating func agentTarget(bitsPerSecond: UInt32, at: UInt64) {
        agentTarget = bitsPerSecond
        targets.append(TargetSample(
            at: LatencyPercentiles.rounded(Double(at) / 1e9), kbps: LatencyPercentiles.rounded(Double(bitsPerSecond) / 1000)))
    }

    /// A decoded test-pattern frame's PSNR.
    public mutating func patternPSNR(_ decibels: Double) { psnrs.append(decibels) }

    /// The summary so far.
    public var summary: TransportSummary {
        let offset = bestClock?.offset ?? 0
        func milliseconds(_ studio: UInt64, _ capture: UInt64) -> Double {
            Double(Int64(bitPattern: studio &+ UInt64(bitPattern: offset) &- capture)) / 1e6
        }
        let receive = samples.map { milliseconds($0.receivedAt, $0.captureTime) }
        let decoded = samples.filter { $0.decodedAt > 0 }.map { milliseconds($0.decodedAt, $0.captureTime) }
        let seconds = (bytesPerSecond.keys.max() ?? -1) + 1
        let perSecond = (0..<seconds).map { LatencyPercentiles.rounded(Double(bytesPerSecond[$0] ?? 0) * 8 / 1000) }
        let span = Double((lastSlot ?? 0) &- (firstSlot ?? 0)) / 1e9 + 1.0 / 30
        let finitePSNR = psnrs.map { $0.isFinite ? $0 : 99 }
        return TransportSummary(
            captureToReceiveMs: LatencyPercentiles(receive), captureToDecodedMs: LatencyPercentiles(decoded),
            clockOffsetMs: bestClock.map { LatencyPercentiles.rounded(Double($0.offset) / 1e6) },
            clockOffsetRoundTripMs: bestClock.map { LatencyPercentiles.rounded(Double($0.roundTrip) / 1e6) },
            bitrateKbps: perSecond,
            meanBitrateKbps: firstSlot == nil ? 0 : LatencyPercentiles.rounded(Double(totalBytes) * 8 / 1000 / span),
            skipped: skipped, keyframes: keyframes, keyframeRequests: keyframeRequests,
            agentTargetKbps: agentTarget.map { LatencyPercentiles.rounded(Double($0) / 1000) }, agentTargets: targets,
            patternPSNRMean: finitePSNR.isEmpty ? nil : LatencyPercentiles.rounded(finitePSNR.reduce(0, +) / Double(finitePSNR.count)),
            patternPSNRMin: finitePSNR.min().map(LatencyPercentiles.rounded), patternPSNRFrames: finitePSNR.count)
    }
}

/// The figures of a recording in progress, for `record --stats` (about once a second).
public struct RecordingProgress: Sendable {
    /// Seconds since the recording started (its clock).
    public var seconds: Double
    /// The counts so far.
    public var statistics: RecordingStatistics
    /// Latency, bitrate and skips so far.
    public var transport: TransportSummary
    /// The agent's latest counters.
    public var agent: AgentStats

    /// One human line: time, frames, the last second's bitrate, the agent's target, latency p95, skips, keyframes.
    public var line: String {
        func number(_ value: Double?, _ digits: Int = 0) -> String {
            guard let value else { return "-" }
            return String(format: "%.\(digits)f", value)
        }
        let lastKbps = transport.bitrateKbps.dropLast().last ?? transport.bitrateKbps.last
        return "t=\(number(seconds, 1))s frames=\(statistics.frames) dropped=\(statistics.dropped) "
            + "kbps=\(number(lastKbps)) target=\(number(transport.agentTargetKbps)) "
            + "capture→receive p50/p95=\(number(transport.captureToReceiveMs?.p50, 1))/\(number(transport.captureToReceiveMs?.p95, 1)) ms "
            + "skipped=\(transport.skipped) keyframes=\(transport.keyframes) requests=\(transport.keyframeRequests) "
            + "rtt=\(agent.rttNanos > 0 ? number(Double(agent.rttNanos) / 1e6, 1) : "-") ms"
    }
}
