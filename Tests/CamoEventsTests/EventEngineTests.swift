import CamoMedia
import Testing

@testable import CamoEvents

/// The engine: detectors and time control together, with explicit times.
@Suite("Event engine: detectors to started, updated and ended events")
struct EventEngineTests {
    static let second: UInt64 = 1_000_000_000
    static let frame: UInt64 = 33_333_333

    /// The left zone's id (the first a list gives).
    static let leftZone: UInt16 = 0

    /// Left and right halves of the picture as zones 0 and 1.
    static func halves() throws -> ZoneList {
        var zones = ZoneList()
        let left = try zones.create(name: "left", vertices: ActivityZone.rectangle(left: 0, top: 0, right: 1000, bottom: 2048), color: "#F439A0")
        _ = try zones.create(name: "right", vertices: ActivityZone.rectangle(left: 1048, top: 0, right: 2048, bottom: 2048), color: "#39A0F4")
        #expect(left.id == leftZone)
        return zones
    }

    /// Frames over `seconds` from `start`: a still test pattern with a black block moving in the left third.
    static func run(_ engine: inout EventEngine, seconds: Double, start: UInt64, moving: Bool, brighten: Int = 0) -> [EventNotice] {
        var notices: [EventNotice] = []
        let count = Int(seconds * 30)
        for i in 0..<count {
            var pixels = TestFrames.Scene.testPattern.pixels
            if moving { TestFrames.block(&pixels, x: 10 + 3 * (i % 33), y: 40, width: 24, height: 24, bgr: (0, 0, 0)) }
            if brighten != 0, i >= count / 2 { TestFrames.brighten(&pixels, by: brighten) }
            let time = start + UInt64(i) * frame
            notices += engine.video(TestFrames.frame(pixels, time: time), now: time)
        }
        return notices
    }

    @Test("a block moving in the left zone: a motion event for that zone only, extended while it moves, ended by timeout")
    func motionInOneZone() throws {
        var engine = EventEngine(settings: EventSettings(zones: try Self.halves()))
        let start = 100 * Self.second
        var notices = Self.run(&engine, seconds: 8, start: start, moving: true)
        let started = notices.filter { $0.kind == .started }
        #expect(started.count == 1)
        #expect(started.first?.event.trigger == .motion)
        #expect(started.first?.event.zoneID == Self.leftZone)
        #expect(notices.allSatisfy { $0.event.zoneID == Self.leftZone })
        #expect(notices.contains { $0.kind == .updated })
        // Still frames (the block gone: the background settles where it was): the event ends, by timeout, before
        // its maximum, and nothing else starts.
        notices = Self.run(&engine, seconds: 60, start: start + 8 * Self.second, moving: false)
        #expect(notices.last?.kind == .ended)
        #expect(notices.filter { $0.kind != .updated }.count == 1)
        #expect(notices.last?.event.endReason == .timeout)
        #expect(notices.last?.event.id == started.first?.event.id)
        #expect(engine.ongoing.isEmpty)
        #expect(engine.framesAnalyzed == UInt64(68 * 30))
    }

    @Test("a global brightness step fires nothing")
    func brightnessStep() {
        var engine = EventEngine()
        let notices = Self.run(&engine, seconds: 4, start: Self.second, moving: false, brighten: 40)
        #expect(notices.isEmpty)
    }

    @Test("turning motion off ends its running event (disabled) and stops judging frames")
    func disableEndsEvent() {
        var engine = EventEngine()
        let first = Self.run(&engine, seconds: 2, start: Self.second, moving: true)
        #expect(first.first?.kind == .started)
        var settings = engine.settings
        settings.enabledTriggers.remove(.motion)
        let ended = engine.apply(settings, now: 4 * Self.second)
        #expect(ended.map(\.kind) == [.ended])
        #expect(ended.first?.event.endReason == .disabled)
        let analyzed = engine.framesAnalyzed
        #expect(Self.run(&engine, seconds: 2, start: 4 * Self.second, moving: true).isEmpty)
        #expect(engine.framesAnalyzed == analyzed)
    }

    @Test("removing the zone of a running event ends it; the other zone's detector goes on")
    func zoneRemoved() throws {
        var engine = EventEngine(settings: EventSettings(zones: try Self.halves()))
        _ = Self.run(&engine, seconds: 2, start: Self.second, moving: true)
        #expect(engine.ongoing.map(\.zoneID) == [Self.leftZone])
        var settings = engine.settings
        try settings.zones.remove(id: Self.leftZone)
        let ended = engine.apply(settings, now: 3 * Self.second)
        #expect(ended.map(\.kind) == [.ended])
        #expect(ended.first?.event.zoneID == Self.leftZone)
        #expect(engine.ongoing.isEmpty)
    }

    @Test("the doorbell: nothing without a button; with one, a press starts an event, another extends it, it ends 10 s after")
    func doorbell() {
        var without = EventEngine()
        #expect(without.doorbellPress(at: Self.second).isEmpty)
        var engine = EventEngine(doorbellButtonConfigured: true)
        let first = engine.doorbellPress(at: Self.second)
        #expect(first.map(\.kind) == [.started])
        #expect(first.first?.event.trigger == .doorbellPress)
        #expect(engine.doorbellPress(at: 2 * Self.second).map(\.kind) == [.updated])
        #expect(engine.tick(now: 11 * Self.second).isEmpty)
        let ended = engine.tick(now: 21 * Self.second)
        #expect(ended.map(\.kind) == [.ended])
        #expect(ended.first?.event.end == 21 * Self.second)
        // No blind time: the next press starts a new event.
        #expect(engine.doorbellPress(at: 22 * Self.second).first?.event.id == 2)
    }

    @Test("a T3 alarm at 3.1 kHz: a smokeAlarm event within two cycles; T4: coAlarm; with the alarms off, nothing")
    func alarms() {
        for (t3, trigger) in [(true, EventTrigger.smokeAlarm), (false, .coAlarm)] {
            var signals = TestSignals(seed: 7)
            let chunks = TestSignals.chunks(signals.alarm(t3: t3, frequency: 3_100, seconds: 12))
            var engine = EventEngine()
            var notices: [EventNotice] = []
            for chunk in chunks { notices += engine.audio(chunk) }
            let start = notices.first { $0.kind == .started }
            #expect(start?.event.trigger == trigger)
            let cycle: Double = t3 ? 4 : 5.7
            let after = Double((start?.event.start ?? .max) - chunks[0].firstSampleTime) / 1e9
            #expect(after <= 2 * cycle + 0.3, "\(trigger) after \(after) s")
            #expect(notices.allSatisfy { $0.event.trigger == trigger })

            var off = EventEngine(settings: EventSettings(enabledTriggers: [.motion]))
            var silent: [EventNotice] = []
            for chunk in chunks { silent += off.audio(chunk) }
            #expect(silent.isEmpty)
            #expect(off.chunksAnalyzed == 0)
        }
    }

    @Test("the sound trigger is off by default; on, a loud tone makes a sound event")
    func soundTrigger() {
        var signals = TestSignals(seed: 3)
        let loud = signals.tone(frequency: 440, amplitude: 0.5, gate: [Bool](repeating: true, count: 48_000))
        var byDefault = EventEngine()
        var notices: [EventNotice] = []
        for chunk in TestSignals.chunks(loud) { notices += byDefault.audio(chunk) }
        #expect(notices.isEmpty)
        var engine = EventEngine(settings: EventSettings(enabledTriggers: [.sound]))
        for chunk in TestSignals.chunks(loud) { notices += engine.audio(chunk) }
        #expect(notices.map(\.kind) == [.started])
        #expect(notices.first?.event.trigger == .sound)
    }

    @Test("unsupported triggers never run, even when enabled")
    func unsupported() {
        let engine = EventEngine(settings: EventSettings(enabledTriggers: [.dogBark, .glassBreak, .personTalking, .doorbellPress]))
        #expect(engine.activeTriggers.isEmpty)
        #expect(!engine.wantsAudio && !engine.wantsVideo)
    }

    @Test("notices count from 1 without gaps, and their summary line names the trigger, zone and reason")
    func sequenceAndSummary() throws {
        var engine = EventEngine(settings: EventSettings(zones: try Self.halves()))
        var notices = Self.run(&engine, seconds: 3, start: Self.second, moving: true)
        notices += engine.tick(now: 200 * Self.second)
        #expect(notices.map(\.sequence) == Array(1...UInt64(notices.count)))
        #expect(notices.first?.summary == "1 started motion zone 0 (event 1)")
        #expect(notices.last?.summary.hasSuffix(": timeout") == true)
    }
}
