import CamoEvents
import Foundation
import Testing

@Suite("Event timing: start, augmentation, maximum, blind period")
struct EventTimeControlTests {
    static let second: UInt64 = 1_000_000_000
    static let ms: UInt64 = 1_000_000
    /// A start time well away from 0, as CLOCK_MONOTONIC is.
    static let t0: UInt64 = 5_000 * second

    static func activity(_ control: inout EventTimeControl, _ at: UInt64) -> [EventTimeControl.Transition] {
        control.activity(now: at)
    }

    static func tick(_ control: inout EventTimeControl, _ at: UInt64) -> [EventTimeControl.Transition] {
        control.tick(now: at)
    }

    /// Activity every `every` from `from` up to but not including `to`; all transitions, in order.
    static func feed(_ control: inout EventTimeControl, from: UInt64, to: UInt64, every: UInt64 = 100 * ms) -> [EventTimeControl.Transition] {
        var all: [EventTimeControl.Transition] = []
        var t = from
        while t < to {
            all += control.activity(now: t)
            t += every
        }
        return all
    }

    @Test("validation: the six maximum durations, initial 1...max, augmentation up to max")
    func validation() throws {
        for choice: UInt32 in [10, 15, 30, 60, 120, 180] {
            try MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: choice).validate()
        }
        try MotionTimeControl().validate()
        #expect(throws: MotionTimeControlError.maxDurationNotAChoice(20)) {
            try MotionTimeControl(maxDuration: 20).validate()
        }
        #expect(MotionTimeControlError.maxDurationNotAChoice(20).description.contains("10, 15, 30, 60, 120, 180"))
        #expect(throws: MotionTimeControlError.initialDurationOutOfRange(0, maxDuration: 60)) {
            try MotionTimeControl(initialDuration: 0).validate()
        }
        #expect(throws: MotionTimeControlError.initialDurationOutOfRange(11, maxDuration: 10)) {
            try MotionTimeControl(initialDuration: 11, maxDuration: 10).validate()
        }
        #expect(throws: MotionTimeControlError.augmentationDurationTooLong(31, maxDuration: 30)) {
            try MotionTimeControl(augmentationDuration: 31, maxDuration: 30).validate()
        }
    }

    @Test("one activity: an event of the initial duration that ends by timeout, at its end time")
    func single() {
        var control = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: 60, blindDuration: 0))
        #expect(control.nextDeadline == nil)
        #expect(Self.activity(&control, Self.t0) == [.started(at: Self.t0, end: Self.t0 + 10 * Self.second)])
        #expect(control.nextDeadline == Self.t0 + 10 * Self.second)
        #expect(Self.tick(&control, Self.t0 + 9_999 * Self.ms).isEmpty)
        #expect(control.isActive)
        // Noticed late: the end is still the end time.
        #expect(Self.tick(&control, Self.t0 + 12 * Self.second) == [.ended(at: Self.t0 + 10 * Self.second, reason: .timeout)])
        #expect(control.phase == .idle)
        #expect(Self.tick(&control, Self.t0 + 13 * Self.second).isEmpty)
    }

    @Test("continuous activity extends the event in steps of the augmentation, and it ends the augmentation after the last")
    func augmentation() {
        var control = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: 60, blindDuration: 0))
        let transitions = Self.feed(&control, from: Self.t0, to: Self.t0 + 25 * Self.second)
        // Extended whenever the end came within 5 s: at 5.1, 10.1, 15.1 and 20.1 s, by 5 s each.
        let expected: [EventTimeControl.Transition] = [
            .started(at: Self.t0, end: Self.t0 + 10 * Self.second),
            .updated(at: Self.t0 + 5_100 * Self.ms, end: Self.t0 + 15 * Self.second),
            .updated(at: Self.t0 + 10_100 * Self.ms, end: Self.t0 + 20 * Self.second),
            .updated(at: Self.t0 + 15_100 * Self.ms, end: Self.t0 + 25 * Self.second),
            .updated(at: Self.t0 + 20_100 * Self.ms, end: Self.t0 + 30 * Self.second),
        ]
        #expect(transitions == expected)
        #expect(Self.tick(&control, Self.t0 + 29 * Self.second).isEmpty)
        #expect(Self.tick(&control, Self.t0 + 30 * Self.second) == [.ended(at: Self.t0 + 30 * Self.second, reason: .timeout)])
    }

    @Test("activity beyond the maximum ends the event at start + max with reason maxDuration; blind, then a new event")
    func maximumAndBlind() {
        var control = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 10, maxDuration: 30, blindDuration: 5))
        var transitions = Self.feed(&control, from: Self.t0, to: Self.t0 + 30 * Self.second)
        // The augmentation is as long as the initial duration, so the first extension comes at once; the second
        // reaches the maximum, and later activity cannot extend it further.
        #expect(
            transitions == [
                .started(at: Self.t0, end: Self.t0 + 10 * Self.second),
                .updated(at: Self.t0 + 100 * Self.ms, end: Self.t0 + 20 * Self.second),
                .updated(at: Self.t0 + 10_100 * Self.ms, end: Self.t0 + 30 * Self.second),
            ])
        #expect(!transitions.contains { if case .ended = $0 { true } else { false } })
        // Activity goes on: the event ends at 30 s, blind until 35 s.
        transitions = Self.feed(&control, from: Self.t0 + 30 * Self.second, to: Self.t0 + 35 * Self.second)
        #expect(transitions == [.ended(at: Self.t0 + 30 * Self.second, reason: .maxDuration)])
        #expect(control.phase == .blind(until: Self.t0 + 35 * Self.second))
        #expect(control.nextDeadline == Self.t0 + 35 * Self.second)
        #expect(Self.activity(&control, Self.t0 + 35 * Self.second) == [.started(at: Self.t0 + 35 * Self.second, end: Self.t0 + 45 * Self.second)])
    }

    @Test("an event whose initial duration reached the maximum, with no more activity, ends by timeout")
    func initialEqualsMaximum() {
        var control = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: 10, blindDuration: 0))
        _ = Self.activity(&control, Self.t0)
        #expect(Self.tick(&control, Self.t0 + 10 * Self.second) == [.ended(at: Self.t0 + 10 * Self.second, reason: .timeout)])
    }

    @Test("activity after the end with no tick between: the end, then (no blind) a new event, or (blind) nothing")
    func lateActivity() {
        var open = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: 60, blindDuration: 0))
        _ = Self.activity(&open, Self.t0)
        #expect(
            Self.activity(&open, Self.t0 + 11 * Self.second) == [
                .ended(at: Self.t0 + 10 * Self.second, reason: .timeout), .started(at: Self.t0 + 11 * Self.second, end: Self.t0 + 21 * Self.second),
            ])

        var blind = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: 60, blindDuration: 5))
        _ = Self.activity(&blind, Self.t0)
        #expect(Self.activity(&blind, Self.t0 + 11 * Self.second) == [.ended(at: Self.t0 + 10 * Self.second, reason: .timeout)])
        // Blind runs from the end (10 s), not from when it was noticed.
        #expect(Self.activity(&blind, Self.t0 + 14_900 * Self.ms).isEmpty)
        #expect(Self.activity(&blind, Self.t0 + 15 * Self.second) == [.started(at: Self.t0 + 15 * Self.second, end: Self.t0 + 25 * Self.second)])
    }

    @Test("no augmentation: activity never extends; a time going backwards counts as the latest seen")
    func noAugmentationAndBackwards() {
        var control = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 0, maxDuration: 60, blindDuration: 0))
        #expect(Self.feed(&control, from: Self.t0, to: Self.t0 + 10 * Self.second) == [.started(at: Self.t0, end: Self.t0 + 10 * Self.second)])
        #expect(Self.activity(&control, Self.t0 - Self.second).isEmpty)
        #expect(Self.tick(&control, Self.t0 + 10 * Self.second) == [.ended(at: Self.t0 + 10 * Self.second, reason: .timeout)])
        // Earlier than the latest seen: starts at the latest.
        #expect(Self.activity(&control, Self.t0) == [.started(at: Self.t0 + 10 * Self.second, end: Self.t0 + 20 * Self.second)])
    }

    @Test("an Event records the transitions and round-trips through JSON with the model's trigger names")
    func eventValue() throws {
        var control = EventTimeControl(control: MotionTimeControl(initialDuration: 10, augmentationDuration: 5, maxDuration: 15, blindDuration: 0))
        var event: Event?
        for transition in Self.feed(&control, from: Self.t0, to: Self.t0 + 15 * Self.second) + Self.tick(&control, Self.t0 + 20 * Self.second) {
            if case .started(let at, _) = transition { event = Event(id: 7, trigger: .motion, zoneID: 2, start: at) }
            event?.apply(transition)
        }
        let done = try #require(event)
        #expect(done.start == Self.t0)
        #expect(done.updates == [Self.t0 + 5_100 * Self.ms])
        #expect(done.end == Self.t0 + 15 * Self.second)
        #expect(done.endReason == .maxDuration)
        #expect(!done.isOngoing)

        let data = try JSONEncoder().encode(done)
        #expect(try JSONDecoder().decode(Event.self, from: data) == done)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"trigger\":\"motion\""))
        #expect(text.contains("\"zoneID\":2"))
        #expect(text.contains("\"endReason\":\"maxDuration\""))
        let sound = try JSONEncoder().encode(Event(id: 8, trigger: .coAlarm, start: 1))
        let soundText = String(decoding: sound, as: UTF8.self)
        #expect(soundText.contains("\"trigger\":\"coAlarm\""))
        #expect(!soundText.contains("zoneID"))
        #expect(!soundText.contains("\"end\""))
    }

    @Test("supported triggers: motion, sound, smoke and CO alarms, and the doorbell only with a button")
    func triggers() {
        #expect(EventTrigger.supportedEventTriggers(doorbellButtonConfigured: false) == [.motion, .sound, .smokeAlarm, .coAlarm])
        #expect(EventTrigger.supportedEventTriggers(doorbellButtonConfigured: true) == [.motion, .sound, .smokeAlarm, .coAlarm, .doorbellPress])
        for trigger in [EventTrigger.personTalking, .dogBark, .glassBreak] {
            #expect(trigger.unsupportedReason(doorbellButtonConfigured: true) == "needs a sound classification model; none from Debian or PyPI runs here")
        }
        #expect(EventTrigger.doorbellPress.unsupportedReason(doorbellButtonConfigured: false) != nil)
        #expect(EventTrigger.allCases.map(\.rawValue) == ["motion", "sound", "personTalking", "dogBark", "glassBreak", "smokeAlarm", "coAlarm", "doorbellPress"])
        #expect(EventTrigger.smokeAlarm.isSound && !EventTrigger.motion.isSound)
    }
}
