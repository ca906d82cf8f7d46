import CamoEvents
import CamoMedia
import CamoRecording
import Testing

/// Feeds a planner 30 fps units (a keyframe every `gop` frames) and 20 ms audio chunks, with events at given
/// times, and collects what it asks for, clip by clip.
struct PlannerRun {
    struct Clip {
        var start: ClipStart
        var units: [RecordedUnit] = []
        var audio: [AudioChunk] = []
        var end: ClipEnd?
        var duration: Double {
            guard let first = units.first, let last = units.last else { return 0 }
            return Double(last.time + ClipPlanner.frameNanos - first.time) / 1e9
        }
        var preRoll: Double? { start.eventStart.map { Double($0 - start.firstUnitTime) / 1e9 } }
    }

    var planner: ClipPlanner
    var clips: [Clip] = []
    var stills: [Event] = []
    var frame = 0
    let gop: Int
    var nextAudio: UInt64 = 0

    init(_ options: RecordingOptions, gop: Int = 60) {
        planner = ClipPlanner(options: options)
        self.gop = gop
    }

    static func ns(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }
    var now: UInt64 { UInt64(frame) * 1_000_000_000 / 30 }

    mutating func apply(_ actions: [ClipAction]) {
        for action in actions {
            switch action {
            case .begin(let start):
                #expect(clips.last.map { $0.end != nil } ?? true, "a clip began while another was open")
                clips.append(Clip(start: start))
            case .video(let unit):
                #expect(clips.last?.end == nil, "a unit for no open clip")
                if let last = clips.last?.units.last { #expect(unit.time > last.time) } else { #expect(unit.isKeyframe, "a clip starts at a keyframe") }
                clips[clips.count - 1].units.append(unit)
            case .audio(let chunk):
                clips[clips.count - 1].audio.append(chunk)
            case .finish(let end):
                #expect(clips.last?.end == nil)
                #expect(end.number == clips.last?.start.number)
                clips[clips.count - 1].end = end
            case .still(let event):
                stills.append(event)
            }
        }
    }

    /// Runs frames (and audio) up to `seconds`.
    mutating func run(to seconds: Double) {
        while Double(frame) / 30 < seconds {
            let unit = RecordedUnit(data: [UInt8](repeating: UInt8(frame % 256), count: frame % gop == 0 ? 400 : 40), isKeyframe: frame % gop == 0, time: now)
            apply(planner.video(unit))
            while nextAudio <= now {
                apply(planner.audio(AudioChunk(samples: [Float](repeating: 0, count: 960 * 2), firstSampleTime: nextAudio)))
                nextAudio += 20_000_000
            }
            frame += 1
        }
    }

    mutating func notice(_ kind: EventNotice.Kind, id: UInt64, start: Double, end: Double? = nil, trigger: EventTrigger = .motion) {
        let event = Event(id: id, trigger: trigger, zoneID: 1, start: Self.ns(start), end: end.map(Self.ns), endReason: end == nil ? nil : .timeout)
        apply(planner.notice(EventNotice(sequence: id, kind: kind, event: event)))
    }
}

@Suite("Clip planner: pre-roll, event clips, maximum, blind time, fixed clips, segments, stills")
struct ClipPlannerTests {
    static func options(_ mode: RecordingMode, preRoll: Int = 3, maxClip: Int = 30, blind: Int = 10) -> RecordingOptions {
        var options = RecordingOptions()
        options.mode = mode
        options.preRollSeconds = preRoll
        options.maxClipSeconds = maxClip
        options.blindSeconds = blind
        return options
    }

    @Test("event-based: starts at the last keyframe before start - pre-roll, ends with the event; length = pre-roll + activity within one GOP")
    func eventBased() {
        var run = PlannerRun(Self.options(.eventBased))
        run.run(to: 10)
        run.notice(.started, id: 1, start: 10)
        run.run(to: 15)
        run.notice(.updated, id: 1, start: 10)
        run.run(to: 20.2)
        // The end notice comes 0.2 s after the event's end (the monitor's tick).
        run.notice(.ended, id: 1, start: 10, end: 20)
        run.run(to: 40)
        #expect(run.clips.count == 1)
        let clip = run.clips[0]
        #expect(clip.start.trigger == .motion && clip.start.zoneID == 1 && clip.start.mode == .eventBased)
        #expect(clip.end?.reason == .eventEnded && clip.end?.eventIDs == [1])
        // Keyframes every 2 s: the last at or before 10 - 3 = 7 s is at 6 s.
        #expect(clip.start.firstUnitTime == PlannerRun.ns(6))
        let preRoll = clip.preRoll ?? 0
        #expect(preRoll >= 3 && preRoll < 3 + 2)
        let expected = preRoll + 10
        #expect(clip.duration >= expected && clip.duration < expected + 2, "clip \(clip.duration) s, pre-roll + activity \(expected) s")
        // Audio from the clip's first unit on, continuous.
        #expect(clip.audio.first.map { $0.firstSampleTime + 20_000_000 > clip.start.firstUnitTime } == true)
        #expect(clip.audio.first.map { $0.firstSampleTime <= clip.start.firstUnitTime } == true)
        #expect(zip(clip.audio, clip.audio.dropFirst()).allSatisfy { $1.firstSampleTime == $0.firstSampleTime + 20_000_000 })
    }

    @Test("an event longer than the longest clip: the clip stops at it and never passes it")
    func maximumLength() {
        var run = PlannerRun(Self.options(.eventBased, maxClip: 15))
        run.run(to: 10)
        run.notice(.started, id: 1, start: 10)
        run.run(to: 70)
        run.notice(.ended, id: 1, start: 10, end: 70)
        run.run(to: 75)
        #expect(run.clips.count == 1)
        let clip = run.clips[0]
        #expect(clip.end?.reason == .maxLength)
        #expect(clip.duration <= 15 && clip.duration > 15 - 0.04, "\(clip.duration) s")
    }

    @Test("the blind time after a clip suppresses a new one; an event after it starts one")
    func blindTime() {
        var run = PlannerRun(Self.options(.eventBased, blind: 10))
        run.run(to: 10)
        run.notice(.started, id: 1, start: 10)
        run.run(to: 20)
        run.notice(.ended, id: 1, start: 10, end: 20)
        run.run(to: 25)
        run.notice(.started, id: 2, start: 25)  // 5 s after the clip: blind
        run.run(to: 30)
        run.notice(.ended, id: 2, start: 25, end: 30)
        run.run(to: 32)
        run.notice(.started, id: 3, start: 32)  // 12 s after: a clip
        run.run(to: 40)
        run.notice(.ended, id: 3, start: 32, end: 40)
        run.run(to: 41)
        #expect(run.clips.count == 2)
        #expect(run.planner.suppressed == 1)
        #expect(run.clips.map { $0.end?.eventIDs ?? [] } == [[1], [3]])
    }

    @Test("events that start during a clip keep it open until the last ends")
    func overlappingEvents() {
        var run = PlannerRun(Self.options(.eventBased, preRoll: 0))
        run.run(to: 10.5)
        run.notice(.started, id: 1, start: 10.5)
        run.run(to: 14)
        run.notice(.started, id: 2, start: 14, trigger: .sound)
        run.run(to: 18)
        run.notice(.ended, id: 1, start: 10.5, end: 18)
        run.run(to: 24)
        run.notice(.ended, id: 2, start: 14, end: 24)
        run.run(to: 25)
        #expect(run.clips.count == 1)
        #expect(run.clips[0].end?.eventIDs == [1, 2])
        // No pre-roll: the keyframe at or before the start (10 s).
        #expect(run.clips[0].start.firstUnitTime == PlannerRun.ns(10))
        #expect(abs(run.clips[0].duration - 14) < 0.05, "\(run.clips[0].duration)")
    }

    @Test("event-triggered: a fixed length after the event's start, whatever the event does")
    func eventTriggered() {
        var options = Self.options(.eventTriggered, preRoll: 2, blind: 0)
        options.triggeredClipSeconds = 8
        var run = PlannerRun(options)
        run.run(to: 11)
        run.notice(.started, id: 1, start: 11)
        run.run(to: 12)
        run.notice(.ended, id: 1, start: 11, end: 12)
        run.run(to: 30)
        #expect(run.clips.count == 1)
        let clip = run.clips[0]
        #expect(clip.end?.reason == .fixedLength)
        #expect(clip.start.firstUnitTime == PlannerRun.ns(8))
        #expect(abs(clip.duration - 11) < 0.05, "\(clip.duration)")  // 3 s pre-roll + 8 s
    }

    @Test("continuous: back-to-back segments, each from a keyframe, no unit lost or repeated, events noted")
    func continuous() {
        var options = Self.options(.continuous)
        options.segmentSeconds = 10
        var run = PlannerRun(options)
        run.run(to: 5)
        run.notice(.started, id: 4, start: 5)
        run.run(to: 35)
        run.apply(run.planner.stop())
        #expect(run.clips.count == 4)
        #expect(run.clips.map { $0.end?.reason } == [.segment, .segment, .segment, .stopped])
        #expect(run.clips[0].end?.eventIDs == [4])
        let all = run.clips.flatMap(\.units).map(\.time)
        #expect(all.count == 35 * 30)
        #expect(zip(all, all.dropFirst()).allSatisfy { $1 > $0 })
        #expect(run.clips.dropLast().allSatisfy { abs($0.duration - 10) < 0.05 })
    }

    @Test("images: a still per event, none during the blind time; video modes only take units")
    func images() {
        var run = PlannerRun(Self.options(.images, blind: 5))
        run.run(to: 2)
        run.notice(.started, id: 1, start: 2)
        run.notice(.started, id: 2, start: 4)
        run.notice(.started, id: 3, start: 8)
        #expect(run.stills.map(\.id) == [1, 3])
        #expect(run.clips.isEmpty)
        #expect(run.planner.ringDuration == 0)
    }

    @Test("an event before any keyframe: the clip waits for the first one; an event that ends first makes none")
    func waitsForKeyframe() {
        var run = PlannerRun(Self.options(.eventBased), gop: 90)
        run.frame = 1
        run.notice(.started, id: 1, start: 0.05)
        run.notice(.ended, id: 1, start: 0.05, end: 0.06)
        run.run(to: 2)
        #expect(run.clips.isEmpty)
        run.notice(.started, id: 2, start: 2.1)
        run.run(to: 4)
        #expect(run.clips.count == 1)
        #expect(run.clips.first?.start.firstUnitTime == PlannerRun.ns(3))
    }

    @Test("a mode change ends the open clip; a mode with no video empties the ring")
    func modeChange() {
        var run = PlannerRun(Self.options(.eventBased))
        run.run(to: 10)
        run.notice(.started, id: 1, start: 10)
        run.run(to: 12)
        #expect(run.planner.ringDuration > 0)
        run.apply(run.planner.setOptions(Self.options(.liveView)))
        #expect(run.clips.first?.end?.reason == .modeChanged)
        #expect(run.planner.ringDuration == 0)
        run.run(to: 14)
        #expect(run.clips.count == 1)
        #expect(!run.planner.isRecording)
    }

    @Test("the pre-roll ring keeps only from the keyframe before now - pre-roll")
    func ringBound() {
        var run = PlannerRun(Self.options(.eventBased, preRoll: 3))
        run.run(to: 60)
        // Keyframes every 2 s: at 59.97 s the ring starts at 56 s (the last keyframe at or before 56.97 s).
        #expect(run.planner.ringDuration <= PlannerRun.ns(5))
        #expect(run.planner.ringDuration >= PlannerRun.ns(3))
    }

    @Test("a clip open while the feed pauses (privacy switch) ends at the longest clip on the tick")
    func tickEnds() {
        var run = PlannerRun(Self.options(.eventBased, maxClip: 10))
        run.run(to: 4)
        run.notice(.started, id: 1, start: 4)
        run.run(to: 5)
        run.apply(run.planner.tick(now: PlannerRun.ns(9)))
        #expect(run.clips.first?.end == nil)
        run.apply(run.planner.tick(now: PlannerRun.ns(13)))
        #expect(run.clips.first?.end?.reason == .maxLength)
    }

    @Test("options are checked")
    func optionProblems() {
        #expect(RecordingOptions().problem() == nil)
        var options = RecordingOptions()
        options.maxClipSeconds = 20
        #expect(options.problem()?.contains("10, 15, 30, 60, 120, 180") == true)
        options = RecordingOptions()
        options.preRollSeconds = 11
        #expect(options.problem() != nil)
        let unavailable = RecordingMode.availability(hasH264: false, eventsRunning: true, anyTriggerEnabled: true)
        #expect(Set(unavailable.keys) == [.continuous, .eventBased, .eventTriggered])
        let noEvents = RecordingMode.availability(hasH264: true, eventsRunning: false, anyTriggerEnabled: false)
        #expect(Set(noEvents.keys) == [.eventBased, .eventTriggered, .images])
    }
}
