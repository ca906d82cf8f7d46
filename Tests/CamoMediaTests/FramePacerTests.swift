@testable import CamoMedia
import CamoTestSupport
import Testing

@Suite("FramePacer: 30 fps out, whatever comes in")
struct FramePacerTests {
    static let start: UInt64 = 5_000_000_000
    static let slots: UInt64 = 300

    struct Outcome {
        var frames: [PacedFrame]
        var pacer: FramePacer
        var offered: Int
    }

    /// Offers the frames whose arrival is at most the last slot's time, emitting each slot at its time.
    static func simulate(arrivals: [UInt64]) -> Outcome {
        var pacer = FramePacer(startTime: start)
        let lastSlotTime = pacer.slotTime(slots - 1)
        let inputs = arrivals.filter { $0 <= lastSlotTime }
        var next = 0
        var frames: [PacedFrame] = []
        for k in 0..<slots {
            let slotTime = pacer.slotTime(k)
            while next < inputs.count, inputs[next] <= slotTime {
                let frame = VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: inputs[next])
                pacer.offer(frame, at: inputs[next])
                next += 1
            }
            if let paced = pacer.emit(slot: k) { frames.append(paced) }
        }
        return Outcome(frames: frames, pacer: pacer, offered: inputs.count)
    }

    /// Arrivals at `fps` starting `offset` ns after the pacer's start (negative = before).
    static func steady(fps: UInt64, offset: Int64, seconds: UInt64 = 11) -> [UInt64] {
        (0..<(fps * seconds)).map { i in UInt64(Int64(start) + offset) + i * 1_000_000_000 / fps }
    }

    /// Checks the invariants every input rate must keep.
    static func checkInvariants(_ outcome: Outcome) {
        let frames = outcome.frames
        #expect(frames.count == Int(slots))
        #expect(frames.map(\.slot) == Array(0..<slots))
        for pair in zip(frames, frames.dropFirst()) {
            let step = pair.1.slotTime - pair.0.slotTime
            #expect(step == 33_333_333 || step == 33_333_334)
        }
        #expect(frames.first?.slotTime == start)
        // Each input frame goes out at most once, except as a counted repeat of the previous slot's frame.
        var sent = Set<UInt64>()
        var previous: UInt64?
        for paced in frames {
            if paced.isRepeat {
                #expect(paced.inputIndex == previous)
            } else {
                #expect(sent.insert(paced.inputIndex).inserted, "input \(paced.inputIndex) sent twice")
                #expect(paced.frame.captureTime <= paced.slotTime)
            }
            previous = paced.inputIndex
        }
        let repeats = frames.filter(\.isRepeat).count
        #expect(UInt64(repeats) == outcome.pacer.repeats)
        #expect(outcome.pacer.emitted == slots)
        // Every offered frame was either sent once or decimated (nothing is left pending at the last slot).
        #expect(UInt64(sent.count) + outcome.pacer.decimated == UInt64(outcome.offered))
    }

    /// A 30 fps camera whose frames arrive right at the slot boundaries, with ±8 ms of scheduling jitter.
    static func jitteredAtBoundaries(align: Bool) -> (repeats: UInt64, decimated: UInt64, slotSteps: Set<UInt64>) {
        var pacer = FramePacer(startTime: start)
        pacer.alignsToFirstFrame = align
        var rng = SeededGenerator(seed: 0x5EED_0030)
        let arrivals = (0..<UInt64(330)).map { i -> UInt64 in
            start + 100_000_000 + i * 1_000_000_000 / 30 + UInt64.random(in: 0...16_000_000, using: &rng) - 8_000_000
        }
        var next = 0
        var times: [UInt64] = []
        for k in 0..<UInt64(320) {
            let slotTime = pacer.slotTime(k)
            while next < arrivals.count, arrivals[next] <= slotTime {
                pacer.offer(VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: 0), at: arrivals[next])
                next += 1
            }
            if let paced = pacer.emit(slot: k) { times.append(paced.slotTime) }
        }
        let steps = Set(zip(times, times.dropFirst()).map { $1 - $0 })
        return (pacer.repeats, pacer.decimated, steps)
    }

    @Test("assigned by capture time, a 30 fps camera whose frames arrive up to 30 ms late, jittering, is neither repeated nor decimated")
    func captureTimeAbsorbsArrivalJitter() {
        let start = Self.start
        var pacer = FramePacer(startTime: start)
        pacer.alignsToFirstFrame = true
        var rng = SeededGenerator(seed: 0x5EED_0030)
        let captures = (0..<UInt64(330)).map { start + 100_000_000 + $0 * 1_000_000_000 / 30 }
        let arrivals = captures.map { $0 + UInt64.random(in: 0...30_000_000, using: &rng) }
        var next = 0
        for k in 0..<UInt64(320) {
            let slotTime = pacer.slotTime(k)
            while next < arrivals.count, arrivals[next] <= slotTime {
                let at = FramePacer.assignmentTime(captureTime: captures[next], arrival: arrivals[next])
                pacer.offer(VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: captures[next]), at: at)
                next += 1
            }
            _ = pacer.emit(slot: k)
        }
        #expect(pacer.repeats == 0)
        #expect(pacer.decimated == 0)
        // Implausible capture times (zero, or far from the arrival) fall back to the arrival.
        #expect(FramePacer.assignmentTime(captureTime: 0, arrival: 5_000_000_000) == 5_000_000_000)
        #expect(FramePacer.assignmentTime(captureTime: 1, arrival: 5_000_000_000) == 5_000_000_000)
        #expect(FramePacer.assignmentTime(captureTime: 4_990_000_000, arrival: 5_000_000_000) == 4_990_000_000 + 16_666_666)
    }

    @Test("aligned to the first frame, a 30 fps camera with jitter at the slot boundaries is neither repeated nor decimated")
    func alignmentAbsorbsJitter() {
        let aligned = Self.jitteredAtBoundaries(align: true)
        #expect(aligned.repeats == 0)
        #expect(aligned.decimated == 0)
        #expect(aligned.slotSteps.isSubset(of: [33_333_333, 33_333_334]), "slot times still advance in even steps")
        let fixed = Self.jitteredAtBoundaries(align: false)
        #expect(fixed.repeats > 20, "without alignment the jitter splits frames between slots (\(fixed.repeats) repeats)")
    }

    /// A 30 fps camera with ±8 ms of capture jitter (arriving 15 ms after capture) that restarts after 150 frames
    /// with its sequence back at 0 and its frames now right at the slot boundaries, as after a mode switch.
    enum Restart { case sequenceStartsOver, toldBySource, unnoticed }

    static func restartingCamera(_ restart: Restart) -> (pacer: FramePacer, frames: [PacedFrame]) {
        var pacer = FramePacer(startTime: start)
        pacer.alignsToFirstFrame = true
        var rng = SeededGenerator(seed: 7)
        let period: UInt64 = 1_000_000_000 / 30
        // (capture, sequence): the first stream from start + 100 ms, the second from the grid's own boundaries
        // once the first frame fixed it (50 ms after the first stream's last frame, on a boundary plus 1 ms).
        var captures: [(time: UInt64, sequence: UInt64)] = (0..<UInt64(150)).map { (start + 100_000_000 + $0 * period, $0) }
        let firstStreamEnd = captures.last!.time
        var frames: [PacedFrame] = []
        var jitters: [UInt64] = []
        var next = 0
        var secondStart: UInt64?
        for k in 0..<UInt64(300) {  // the second stream's last frame is due around slot 305
            let slotTime = pacer.slotTime(k)
            if secondStart == nil, pacer.offered > 0 {
                // The grid is fixed now: put the second stream's captures half a slot early, so their assignment
                // times (capture + half a slot) land on the slot boundaries.
                let boundary = pacer.slotTime(pacer.slot(containing: firstStreamEnd + 50_000_000))
                secondStart = boundary - period / 2
                captures += (0..<UInt64(150)).map { (secondStart! + $0 * period, restart == .sequenceStartsOver ? $0 : 150 + $0) }
            }
            while next < captures.count {
                while jitters.count <= next { jitters.append(UInt64.random(in: 0...16_000_000, using: &rng)) }
                let capture = captures[next].time + jitters[next] - 8_000_000
                let arrival = capture + 15_000_000
                guard arrival <= slotTime else { break }
                if next == 150 && restart == .toldBySource { pacer.sourceRestarted() }
                let frame = VideoFrame(
                    width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: capture,
                    sourceSequence: captures[next].sequence)
                pacer.offer(frame, at: FramePacer.assignmentTime(captureTime: capture, arrival: arrival))
                next += 1
            }
            if let paced = pacer.emit(slot: k) { frames.append(paced) }
        }
        return (pacer, frames)
    }

    @Test("a camera that restarts with a new phase is re-aligned (its sequence back at 0, or told by the source): no repeat-and-decimate pairs after the restart",
          arguments: [Restart.sequenceStartsOver, .toldBySource])
    func aRestartedStreamIsRealigned(_ restart: Restart) {
        let (pacer, frames) = Self.restartingCamera(restart)
        #expect(pacer.realignments == 1)
        #expect(pacer.phaseOffset > 0 && pacer.phaseOffset < 33_333_334, "offset \(pacer.phaseOffset)")
        // The gap between the streams (about 50 ms) repeats a slot or two; after that nothing.
        let afterRestart = frames.filter { $0.frame.captureTime > Self.start + 5_200_000_000 }
        let newFrames = afterRestart.filter { !$0.isRepeat }.map(\.frame.sourceSequence)
        #expect(newFrames.count > 100)
        #expect(zip(newFrames, newFrames.dropFirst()).allSatisfy { $1 == $0 + 1 }, "every frame of the new stream goes out once, in order")
        #expect(pacer.repeats <= 3, "repeats \(pacer.repeats) at \(frames.filter(\.isRepeat).map(\.slot)), offset \(pacer.phaseOffset)")
        #expect(pacer.decimated <= 1, "decimated \(pacer.decimated)")
        for pair in zip(frames, frames.dropFirst()) {
            let step = pair.1.slotTime - pair.0.slotTime
            #expect(step == 33_333_333 || step == 33_333_334, "slot times keep even steps")
        }
        for paced in frames where !paced.isRepeat {
            #expect(paced.slotTime - paced.frame.captureTime < 70_000_000, "under two slots of latency")
        }

        // The same restart unnoticed (the sequence goes on, nobody says so) is not re-aligned, and the jitter shows.
        let (unaligned, _) = Self.restartingCamera(.unnoticed)
        #expect(unaligned.realignments == 0 && unaligned.phaseOffset == 0)
        #expect(unaligned.repeats > 20 && unaligned.decimated > 20,
                "without re-alignment the jitter splits frames between slots (\(unaligned.repeats) repeats)")
    }

    @Test(arguments: [UInt64(0), 1, 8_000_000, 16_666_666, 16_666_667, 25_000_000, 33_333_332, 33_333_333])
    func theOffsetPutsATimeHalfASlotBeforeASlotTime(_ into: UInt64) {
        let startTime: UInt64 = 1_000_000_000
        let pacer = FramePacer(startTime: startTime)
        for base in [startTime + 10 * 33_333_333 + 1, startTime + 100 * 33_333_333 + 17] {
            let time = base + into
            let offset = pacer.offsetToMidSlot(time)
            #expect(offset < 33_333_334)
            let slot = pacer.slot(containing: time + offset)
            let ahead = pacer.slotTime(slot) - (time + offset)
            #expect((16_666_665...16_666_668).contains(ahead), "\(time) + \(offset) is \(ahead) ns before its slot")
        }
    }

    @Test func slotTimesAreIntegerThirtiethsOfASecond() {
        let pacer = FramePacer(startTime: 7)
        #expect(pacer.slotTime(0) == 7)
        #expect(pacer.slotTime(1) == 7 + 33_333_333)
        #expect(pacer.slotTime(2) == 7 + 66_666_666)
        #expect(pacer.slotTime(3) == 7 + 100_000_000)
        #expect(pacer.slotTime(30) == 7 + 1_000_000_000)
        #expect(pacer.slot(containing: 7) == 0)
        #expect(pacer.slot(containing: 8) == 1)
        #expect(pacer.slot(containing: 7 + 33_333_333) == 1)
        #expect(pacer.slot(containing: 7 + 33_333_334) == 2)
    }

    @Test func nothingGoesOutBeforeTheFirstFrame() {
        var pacer = FramePacer(startTime: 0)
        #expect(pacer.emit(slot: 0) == nil)
        #expect(pacer.emit(slot: 1) == nil)
        #expect(pacer.repeats == 0 && pacer.emitted == 0)
    }

    @Test(arguments: [Int64(0), -1, -16_666_666, -33_333_332, -10_000_000])
    func steadyThirtyGoesOutExactlyOnceEach(phase: Int64) {
        let outcome = Self.simulate(arrivals: Self.steady(fps: 30, offset: phase))
        Self.checkInvariants(outcome)
        #expect(outcome.offered == 300)
        #expect(outcome.frames.map(\.inputIndex) == Array(0..<300))
        #expect(outcome.pacer.repeats == 0)
        #expect(outcome.pacer.decimated == 0)
    }

    @Test func fifteenFramesPerSecondRepeatsEveryOtherSlot() {
        let outcome = Self.simulate(arrivals: Self.steady(fps: 15, offset: 0))
        Self.checkInvariants(outcome)
        #expect(outcome.offered == 150)
        #expect(outcome.pacer.repeats == 150)
        #expect(outcome.pacer.decimated == 0)
    }

    @Test func sixtyFramesPerSecondDecimatesEveryOtherFrame() {
        let outcome = Self.simulate(arrivals: Self.steady(fps: 60, offset: -16_666_667))
        Self.checkInvariants(outcome)
        #expect(outcome.offered == 600)
        #expect(outcome.pacer.decimated == 300)
        #expect(outcome.pacer.repeats == 0)
    }

    @Test func twentyFiveFramesPerSecondRepeatsOneSlotInSix() {
        let outcome = Self.simulate(arrivals: Self.steady(fps: 25, offset: 0))
        Self.checkInvariants(outcome)
        #expect(outcome.offered == 250)
        #expect(outcome.pacer.repeats == 50)
        #expect(outcome.pacer.decimated == 0)
    }

    @Test(arguments: [UInt64(1), 2, 3, 42])
    func jitteredThirtyKeepsTheInvariants(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var arrivals: [UInt64] = []
        for i in UInt64(0)..<330 {
            let nominal = Int64(Self.start) - 10_000_000 + Int64(i * 1_000_000_000 / 30)
            let jittered = UInt64(nominal + Int64.random(in: -8_000_000...8_000_000, using: &generator))
            arrivals.append(max(jittered, (arrivals.last ?? 0) + 1))
        }
        let outcome = Self.simulate(arrivals: arrivals)
        Self.checkInvariants(outcome)
        // 300 frames for 300 slots: jitter moves frames between slots, so each decimation is matched by a repeat.
        #expect(outcome.offered == 300)
        #expect(outcome.pacer.repeats == outcome.pacer.decimated)
    }

    @Test func aLateFrameGoesToTheNextSlotNotTheEmittedOne() {
        var pacer = FramePacer(startTime: 0)
        let frame = VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: 0)
        pacer.offer(frame, at: 0)
        #expect(pacer.emit(slot: 0)?.inputIndex == 0)
        pacer.offer(frame, at: 0)  // arrived "for" slot 0, which is gone
        let next = pacer.emit(slot: 1)
        #expect(next?.inputIndex == 1)
        #expect(next?.isRepeat == false)
    }

    @Test func skippedSlotsDecimateTheirFramesAndSendTheNewest() {
        var pacer = FramePacer(startTime: 0)
        let frame = VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: 0)
        for k in UInt64(0)..<5 { pacer.offer(frame, at: pacer.slotTime(k)) }
        let paced = pacer.emit(slot: 4)
        #expect(paced?.inputIndex == 4)
        #expect(pacer.decimated == 4)
        #expect(pacer.emit(slot: 5)?.isRepeat == true)
    }
}
