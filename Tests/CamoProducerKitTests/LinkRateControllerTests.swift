import Testing

@testable import CamoProducerKit

/// SplitMix64, private to this file: the randomized link test repeats exactly.
private struct RateTestRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `range`.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * Double(next() >> 11) / Double(1 << 53)
    }
}

/// A fluid model of the path from the agent to the studio, stepped by 1 ms of simulated time.
///
/// The agent captures a frame every 1/30 s, asks the controller whether to skip it and else queues
/// `target / 30` bits (5× for a keyframe every 60 frames, when asked). Bytes go from the agent's queue into the
/// socket and the bottleneck's FIFO while that holds under the socket buffer (256 KiB); the bottleneck drains at
/// `R(t)`; a frame arrives at the studio 10 ms after its last byte left the bottleneck. The studio, whose clock is
/// offset by a large constant, reports every 100 ms; a report reaches the agent 10 ms later.
private struct LinkSimulation {
    struct Frame {
        var capture: UInt64
        var bytes: Int
        var remaining: Double
        /// When its first byte left the bottleneck (simulated time).
        var started: UInt64?
    }

    struct Arrival {
        var capture: UInt64
        var arrival: UInt64
        var bytes: Int
        /// Time spent queued (at the agent and in the bottleneck) before its first byte left, ns.
        var queued: UInt64
    }

    struct Report {
        var deliverAt: UInt64
        var frames: [ReceivedFrameSample]
        var bytes: Int
        var interval: UInt64
    }

    static let ms: UInt64 = 1_000_000
    static let second: UInt64 = 1_000_000_000
    static let frameInterval: UInt64 = second / 30
    static let propagation: UInt64 = 10 * ms
    static let socketBuffer = 256.0 * 1024

    var controller: LinkRateController
    /// Bottleneck rate, bits/s, at a simulated time.
    let linkRate: (UInt64) -> Double
    let keyframes: Bool
    /// Studio clock = simulated time &+ this.
    let studioOffset: UInt64
    /// Agent clock = simulated time &+ this.
    let agentOffset: UInt64

    var time: UInt64 = 0
    var queue: [Frame] = []
    var queueHead = 0
    var queuedBytes = 0.0
    var framesSent = 0
    var nextFrameAt: UInt64 = 0
    /// Frames whose last byte left the bottleneck, not yet at the studio.
    var inFlight: [Arrival] = []
    /// Bytes that left the bottleneck in each millisecond.
    var drained: [Double] = []
    var arrivals: [Arrival] = []
    var lastReportAt: UInt64 = 0
    var reportedArrivals = 0
    var pendingReports: [Report] = []
    /// (simulated time, target bits/s) every 100 ms.
    var targets: [(time: UInt64, target: Int)] = []
    var phases: [LinkRateController.Phase: Int] = [:]

    init(
        configuration: LinkRateConfiguration = .init(), keyframes: Bool = false, studioOffset: UInt64 = 0xC000_0000_0000_1234,
        agentOffset: UInt64 = 5_000 * 1_000_000_000, linkRate: @escaping (UInt64) -> Double
    ) {
        controller = LinkRateController(configuration: configuration)
        self.keyframes = keyframes
        self.studioOffset = studioOffset
        self.agentOffset = agentOffset
        self.linkRate = linkRate
    }

    /// Bytes at the agent, not yet in the socket.
    var agentQueuedBytes: Int { Int(max(0, queuedBytes - Self.socketBuffer)) }

    mutating func run(until end: UInt64) {
        while time < end { step() }
    }

    private mutating func step() {
        let now = time
        let agentNow = now &+ agentOffset
        if now >= nextFrameAt {
            nextFrameAt += Self.frameInterval
            if !controller.shouldSkipFrame(queuedBytes: agentQueuedBytes, now: agentNow) {
                var bytes = controller.targetBitrate / 8 / 30
                if keyframes && framesSent % 60 == 0 { bytes *= 5 }
                framesSent += 1
                queue.append(Frame(capture: agentNow, bytes: bytes, remaining: Double(bytes)))
                queuedBytes += Double(bytes)
            }
        }
        // The bottleneck drains for this millisecond.
        var budget = linkRate(now) / 8 / 1000
        var out = 0.0
        while budget > 0, queueHead < queue.count {
            let take = min(budget, queue[queueHead].remaining)
            if queue[queueHead].started == nil { queue[queueHead].started = now }
            queue[queueHead].remaining -= take
            budget -= take
            out += take
            if queue[queueHead].remaining <= 1e-6 {
                let frame = queue[queueHead]
                let queued = (frame.started ?? now) - (frame.capture &- agentOffset)
                inFlight.append(
                    Arrival(capture: frame.capture, arrival: now + Self.ms + Self.propagation, bytes: frame.bytes, queued: queued))
                queueHead += 1
            }
        }
        queuedBytes = max(0, queuedBytes - out)
        drained.append(out)
        if queueHead > 1024 {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        time += Self.ms
        // Arrivals at the studio.
        while let first = inFlight.first, first.arrival <= time {
            arrivals.append(first)
            inFlight.removeFirst()
        }
        // The studio reports every 100 ms (offset from the frame grid).
        if time % (100 * Self.ms) == 37 * Self.ms {
            let frames = arrivals[reportedArrivals...].map {
                ReceivedFrameSample(captureTime: $0.capture, receivedAt: $0.arrival &+ studioOffset, bytes: $0.bytes)
            }
            reportedArrivals = arrivals.count
            // Bytes that reached the studio in (lastReportAt, time]: left the bottleneck 10 ms earlier.
            let from = Int((lastReportAt &- min(lastReportAt, Self.propagation)) / Self.ms)
            let to = Int((time - min(time, Self.propagation)) / Self.ms)
            let bytes = from < to ? drained[max(from, 0)..<min(to, drained.count)].reduce(0, +) : 0
            pendingReports.append(
                Report(deliverAt: time + Self.propagation, frames: frames, bytes: Int(bytes), interval: time - lastReportAt))
            lastReportAt = time
        }
        while let report = pendingReports.first, report.deliverAt <= time {
            pendingReports.removeFirst()
            controller.receiveReport(
                frames: report.frames, bytesReceived: report.bytes, intervalNanos: report.interval, now: time &+ agentOffset)
        }
        if time % (100 * Self.ms) == 0 {
            targets.append((time, controller.targetBitrate))
            phases[controller.phase, default: 0] += 1
        }
    }

    /// Figures over frames that arrived in `[from, to)` (simulated time): frames per second, and the p95 and the
    /// maximum of the capture-to-arrival latency (ms) and the p95 of the time queued (ms).
    func window(from: UInt64, to: UInt64) -> (fps: Double, p95: Double, maximum: Double, queuedP95: Double) {
        let frames = arrivals.filter { $0.arrival >= from && $0.arrival < to }
        let latencies = frames.map { Double($0.arrival - ($0.capture &- agentOffset)) / 1e6 }
        let fps = Double(latencies.count) / (Double(to - from) / 1e9)
        return (fps, percentile(latencies, 0.95), latencies.max() ?? 0, percentile(frames.map { Double($0.queued) / 1e6 }, 0.95))
    }

    /// The fewest frames that arrived in any whole second of `[from, to)`.
    func fewestPerSecond(from: UInt64, to: UInt64) -> Int {
        stride(from: from, to: to - Self.second + 1, by: Int(Self.second)).map { start in
            arrivals.count { $0.arrival >= start && $0.arrival < start + Self.second }
        }.min() ?? 0
    }

    /// The first time at or after `from` when the target is at least `level`, or nil.
    func firstTime(from: UInt64, targetAtLeast level: Double) -> UInt64? {
        targets.first { $0.time >= from && Double($0.target) >= level }?.time
    }
}

private func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let index = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[index]
}

private func seconds(_ s: Double) -> UInt64 { UInt64(s * 1e9) }

private func mbps(_ bits: Int) -> String { format(Double(bits) / 1e6) }

private func format(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = abs(hundredths) % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

@Suite("LinkRateController")
struct LinkRateControllerTests {
    static let ms: UInt64 = 1_000_000

    @Test("steady 20 Mb/s: the target climbs to 90 % of the ceiling within 5 s and stays; the queue stays short")
    func steadyLink() {
        var sim = LinkSimulation { _ in 20_000_000 }
        sim.run(until: seconds(20))
        let reached = sim.firstTime(from: 0, targetAtLeast: 0.9 * 6_000_000)
        let after = sim.targets.filter { $0.time >= (reached ?? 0) }.map(\.target)
        let delays = sim.window(from: seconds(1), to: seconds(20))
        print(
            "steady 20 Mb/s: 90 % of the ceiling at \(format(Double(reached ?? 0) / 1e9)) s, lowest after \(mbps(after.min() ?? 0)) Mb/s,",
            "queue delay p95 \(format(delays.queuedP95)) ms, latency p95 \(format(delays.p95)) ms, \(format(delays.fps)) fps,",
            "skipped \(sim.controller.skippedFrames)")
        #expect(reached != nil && reached! <= seconds(5))
        #expect(after.allSatisfy { Double($0) >= 0.9 * 6_000_000 })
        #expect(delays.queuedP95 < 50)
        #expect(sim.controller.skippedFrames == 0)
    }

    @Test("20 → 3 → 20 Mb/s (and → 1.5 →): frames keep arriving with bounded latency, the target recovers within 5 s",
          arguments: [(false, 3_000_000.0), (true, 3_000_000), (false, 1_500_000), (true, 1_500_000)])
    func dropAndRecovery(keyframes: Bool, lowRate: Double) {
        var sim = LinkSimulation(keyframes: keyframes) { t in t >= seconds(10) && t < seconds(20) ? lowRate : 20_000_000 }
        sim.run(until: seconds(30))
        let low = sim.window(from: seconds(12), to: seconds(20))
        let recovered = sim.firstTime(from: seconds(20), targetAtLeast: 0.8 * 6_000_000)
        let lowTargets = sim.targets.filter { $0.time >= seconds(12) && $0.time < seconds(20) }.map(\.target)
        let fewest = sim.fewestPerSecond(from: seconds(12), to: seconds(20))
        print(
            "20→\(format(lowRate / 1e6))→20 Mb/s\(keyframes ? " with keyframes" : ""): in the low phase after 2 s \(format(low.fps)) fps (fewest in a second \(fewest)),",
            "latency p95 \(format(low.p95)) ms (max \(format(low.maximum))), target \(mbps(lowTargets.min() ?? 0))–\(mbps(lowTargets.max() ?? 0)) Mb/s;",
            "above 80 % of the ceiling \(format(Double((recovered ?? seconds(99)) - seconds(20)) / 1e9)) s after the return;",
            "skipped \(sim.controller.skippedFrames); phases (per 100 ms)",
            [LinkRateController.Phase.increase, .hold, .decrease].map { "\($0.rawValue) \(sim.phases[$0, default: 0])" }.joined(separator: ", "))
        #expect(low.fps >= 25 && fewest >= 25)
        #expect(low.p95 <= 300)
        #expect(recovered != nil && recovered! <= seconds(25))
    }

    @Test("a 1.2 Mb/s bottleneck: the target settles near but below it, the latency stays bounded", arguments: [false, true])
    func narrowLink(keyframes: Bool) {
        var sim = LinkSimulation(keyframes: keyframes) { _ in 1_200_000 }
        sim.run(until: seconds(30))
        let settled = sim.targets.filter { $0.time >= seconds(10) }.map { Double($0.target) }
        let mean = settled.reduce(0, +) / Double(settled.count)
        let figures = sim.window(from: seconds(2), to: seconds(30))
        let early = sim.window(from: 0, to: seconds(2))
        print(
            "1.2 Mb/s\(keyframes ? " with keyframes" : ""): target after 10 s mean \(format(mean / 1e6)) Mb/s",
            "(\(format((settled.min() ?? 0) / 1e6))–\(format((settled.max() ?? 0) / 1e6))); after 2 s \(format(figures.fps)) fps,",
            "latency p95 \(format(figures.p95)) ms (max \(format(figures.maximum))); first 2 s p95 \(format(early.p95)) ms;",
            "skipped \(sim.controller.skippedFrames)")
        #expect(mean <= 1_200_000 && mean >= 0.6 * 1_200_000)
        #expect(figures.p95 <= 300)
        #expect(figures.fps >= 25)
    }

    @Test("the floor and the ceiling hold, on a link far below and far above them")
    func floorAndCeiling() {
        let configuration = LinkRateConfiguration(floor: 1_000_000, ceiling: 3_000_000, start: 2_000_000)
        var slow = LinkSimulation(configuration: configuration) { _ in 300_000 }
        slow.run(until: seconds(20))
        #expect(slow.targets.allSatisfy { $0.target >= 1_000_000 && $0.target <= 3_000_000 })
        #expect(slow.targets.last?.target == 1_000_000, "a link below the floor keeps the target at the floor")
        var fast = LinkSimulation(configuration: configuration) { _ in 100_000_000 }
        fast.run(until: seconds(20))
        #expect(fast.targets.allSatisfy { $0.target >= 1_000_000 && $0.target <= 3_000_000 })
        #expect(fast.targets.last?.target == 3_000_000)

        // Reports of absurd delays and of none.
        var controller = LinkRateController(configuration: configuration)
        for i in 0..<UInt64(100) {
            let sample = ReceivedFrameSample(captureTime: i * 33 * Self.ms, receivedAt: i * i * 1_000 * Self.ms, bytes: 1)
            controller.receiveReport(frames: [sample], bytesReceived: 1, intervalNanos: 100 * Self.ms, now: i * 100 * Self.ms)
            #expect(controller.targetBitrate >= 1_000_000 && controller.targetBitrate <= 3_000_000)
        }
        #expect(controller.targetBitrate == 1_000_000)
        #expect(controller.phase == .decrease)
    }

    @Test("a configuration with crossed or absurd bounds is made sane; sizes scale the defaults")
    func configurations() {
        let crossed = LinkRateController(configuration: .init(floor: 2_000_000, ceiling: 1_000_000, start: 9_000_000))
        #expect(crossed.targetBitrate == 2_000_000)
        let absurd = LinkRateController(configuration: .init(floor: -5, ceiling: .max, start: .min))
        #expect(absurd.targetBitrate == 1)
        let huge = LinkRateController(configuration: .init(floor: .max, ceiling: .max, start: .max))
        #expect(huge.targetBitrate == 1_000_000_000_000_000)
        let hd = LinkRateConfiguration.forSize(width: 1280, height: 720)
        #expect(hd == LinkRateConfiguration())
        let fullHD = LinkRateConfiguration.forSize(width: 1920, height: 1080)
        #expect(fullHD.floor == 1_125_000 && fullHD.ceiling == 13_500_000 && fullHD.start == 4_500_000)
        let tiny = LinkRateConfiguration.forSize(width: 160, height: 120)
        #expect(tiny.floor == 100_000 && tiny.ceiling == 1_000_000 && tiny.start >= tiny.floor && tiny.start <= tiny.ceiling)
        let none = LinkRateConfiguration.forSize(width: -1, height: 0)
        #expect(none.floor == 100_000 && none.ceiling == 1_000_000)
        let enormous = LinkRateConfiguration.forSize(width: Int.max, height: Int.max)
        #expect(enormous.ceiling == 64 * 6_000_000)
    }

    static let offsets: [UInt64] = [0, 0x7FFF_FFFF_FFFF_0000, 0x8000_0000_0000_0001, UInt64.max - 12_000_000_000, 3_000_000_000]

    @Test("a huge clock offset, either way, changes nothing", arguments: offsets)
    func clockOffset(offset: UInt64) {
        let link: (UInt64) -> Double = { t in t >= seconds(6) && t < seconds(12) ? 3_000_000 : 20_000_000 }
        var reference = LinkSimulation(keyframes: true, studioOffset: 0x1234_5678_9ABC, linkRate: link)
        var shifted = LinkSimulation(keyframes: true, studioOffset: offset, linkRate: link)
        reference.run(until: seconds(18))
        shifted.run(until: seconds(18))
        #expect(shifted.targets.map(\.target) == reference.targets.map(\.target))
        #expect(shifted.controller.skippedFrames == reference.controller.skippedFrames)
        #expect(shifted.controller.queueDelayNanos == reference.controller.queueDelayNanos)
        // The agent's clock too, even across 2^64.
        var agentShifted = LinkSimulation(keyframes: true, studioOffset: 0x1234_5678_9ABC, agentOffset: UInt64.max - 7 * 1_000_000_000, linkRate: link)
        agentShifted.run(until: seconds(18))
        #expect(agentShifted.targets.map(\.target) == reference.targets.map(\.target))
    }

    /// `count` reports, 100 ms apart, of 3 frames each (30 fps from capture time 0), one-way delay 20 ms growing by
    /// `growth` ns per frame, studio clock offset by `offset`.
    static func reports(count: Int, growth: UInt64, offset: UInt64) -> [(frames: [ReceivedFrameSample], now: UInt64)] {
        (0..<UInt64(count)).map { r in
            let frames = (0..<UInt64(3)).map { f in
                let i = r * 3 + f
                return ReceivedFrameSample(
                    captureTime: i * 33 * ms, receivedAt: (i * 33 * ms + 20 * ms + i * growth) &+ offset, bytes: 10_000)
            }
            return (frames, r * 100 * ms + 130 * ms)
        }
    }

    @Test("late and repeated samples are ignored")
    func outOfOrderSamples() {
        let reports = Self.reports(count: 40, growth: 3 * Self.ms, offset: 0xF000_0000_0000_0000)
        var clean = LinkRateController()
        var messy = LinkRateController()
        for (index, report) in reports.enumerated() {
            clean.receiveReport(frames: report.frames, bytesReceived: 30_000, intervalNanos: 100 * Self.ms, now: report.now)
            var frames = report.frames
            if index > 0 {
                // Repeats of the previous report's samples, one older sample with a wild delay, and a repeat.
                frames = reports[index - 1].frames + frames.reversed()
                frames.insert(ReceivedFrameSample(captureTime: 1, receivedAt: 0, bytes: 5), at: 2)
                frames.append(report.frames[0])
            }
            messy.receiveReport(frames: frames, bytesReceived: 30_000, intervalNanos: 100 * Self.ms, now: report.now)
            #expect(messy.targetBitrate == clean.targetBitrate)
            #expect(messy.queueDelayNanos == clean.queueDelayNanos)
            #expect(messy.phase == clean.phase)
        }
        #expect(clean.phase == .decrease, "the queue grows 90 ms/s: overuse")
    }

    @Test("an empty report changes nothing while nothing is in flight; a long silence while frames are is congestion")
    func emptyReports() {
        var controller = LinkRateController()
        #expect(controller.queueDelayNanos == nil)
        controller.receiveReport(frames: [], bytesReceived: 0, intervalNanos: 100 * Self.ms, now: 50 * Self.ms)
        #expect(controller.targetBitrate == 2_000_000 && controller.phase == .increase && controller.queueDelayNanos == nil)
        for report in Self.reports(count: 10, growth: 0, offset: 77) {
            controller.receiveReport(frames: report.frames, bytesReceived: 30_000, intervalNanos: 100 * Self.ms, now: report.now)
        }
        let before = (controller.targetBitrate, controller.phase, controller.queueDelayNanos)
        #expect(before.1 == .increase && before.2 == 0)
        for i in 0..<UInt64(50) {
            controller.receiveReport(frames: [], bytesReceived: 0, intervalNanos: 100 * Self.ms, now: 1_130 * Self.ms + i * 100 * Self.ms)
        }
        #expect(controller.targetBitrate == before.0 && controller.phase == before.1 && controller.queueDelayNanos == before.2)

        // Frames go out and nothing comes back: after a while, the target drops.
        var now = 6_200 * Self.ms
        for _ in 0..<10 {
            for frame in 0..<UInt64(3) { _ = controller.shouldSkipFrame(queuedBytes: 0, now: now + frame * 33 * Self.ms) }
            now += 100 * Self.ms
            controller.receiveReport(frames: [], bytesReceived: 0, intervalNanos: 100 * Self.ms, now: now)
        }
        #expect(controller.phase == .decrease)
        #expect(controller.targetBitrate < before.0)
        let skipped = controller.shouldSkipFrame(queuedBytes: 0, now: now)
        #expect(skipped, "a second of silence is past the latency budget")
    }

    @Test("a frame is skipped when the queued bytes exceed the latency budget, and counted; not with an empty queue")
    func skipping() {
        var controller = LinkRateController()
        let first = controller.shouldSkipFrame(queuedBytes: 0, now: 0)
        #expect(!first && controller.skippedFrames == 0)
        // 2 Mb/s and 200 ms: 50,000 bytes.
        let under = controller.shouldSkipFrame(queuedBytes: 49_000, now: 33 * Self.ms)
        let over = controller.shouldSkipFrame(queuedBytes: 51_000, now: 66 * Self.ms)
        let far = controller.shouldSkipFrame(queuedBytes: 10_000_000, now: 100 * Self.ms)
        #expect(!under && over && far)
        #expect(controller.skippedFrames == 2)
        // Low delay reported: an empty queue sends.
        for report in Self.reports(count: 5, growth: 0, offset: 0) {
            controller.receiveReport(frames: report.frames, bytesReceived: 30_000, intervalNanos: 100 * Self.ms, now: report.now)
        }
        #expect(controller.queueDelayNanos == 0)
        let afterReports = controller.shouldSkipFrame(queuedBytes: 0, now: 600 * Self.ms)
        #expect(!afterReports)
        #expect(controller.skippedFrames == 2)

        // Frames go out and no report comes back: skipped while reports are due, sent again once the studio is
        // plainly not reporting (the agent's own queue then decides alone).
        var now = 633 * Self.ms
        var skips: [Bool] = []
        while now < 3_000 * Self.ms {
            skips.append(controller.shouldSkipFrame(queuedBytes: 0, now: now))
            now += 33 * Self.ms
        }
        #expect(skips.contains(true), "half a second of silence is past the budget")
        #expect(skips.suffix(30).allSatisfy { !$0 }, "a studio that stopped reporting does not stop the video")
        let full = controller.shouldSkipFrame(queuedBytes: 1_000_000, now: now)
        #expect(full)
    }

    @Test("a randomized link between 1 and 20 Mb/s: bounds hold and the latency settles within 2 s of each step",
          arguments: Array(UInt64(1)...6))
    func randomizedLink(seed: UInt64) {
        var random = RateTestRandom(state: seed)
        var steps: [(start: UInt64, rate: Double)] = []
        var t: UInt64 = 0
        while t < seconds(60) {
            steps.append((t, random.uniform(1_000_000...20_000_000)))
            t += seconds(random.uniform(2...5))
        }
        let schedule = steps
        var sim = LinkSimulation(keyframes: seed % 2 == 0) { now in schedule.last { $0.start <= now }!.rate }
        sim.run(until: seconds(60))
        #expect(sim.targets.allSatisfy { $0.target >= 500_000 && $0.target <= 6_000_000 })
        var worst = (p95: 0.0, rate: 0.0, fps: 30.0)
        for (index, step) in schedule.enumerated() {
            let end = index + 1 < schedule.count ? schedule[index + 1].start : seconds(60)
            guard end > step.start + seconds(2) + seconds(0.5) else { continue }
            let figures = sim.window(from: step.start + seconds(2), to: end)
            #expect(figures.p95 <= 400, "step \(index) at \(format(step.rate / 1e6)) Mb/s")
            if figures.p95 > worst.p95 { worst.p95 = figures.p95; worst.rate = step.rate }
            worst.fps = min(worst.fps, figures.fps)
        }
        let delay = sim.controller.queueDelayNanos.map { Double($0) } ?? 0
        #expect(delay.isFinite && delay >= 0)
        print(
            "random seed \(seed)\(seed % 2 == 0 ? " with keyframes" : ""): \(schedule.count) steps, worst p95 after 2 s \(format(worst.p95)) ms",
            "(at \(format(worst.rate / 1e6)) Mb/s), lowest fps \(format(worst.fps)), skipped \(sim.controller.skippedFrames)")
    }
}
