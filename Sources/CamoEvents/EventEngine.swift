import CamoMedia

/// The detectors and the events they make, in one plain value: frames and audio go in, ``EventNotice``s come out.
/// No threads, no clock of its own: every call says what time it is (ns of the agent's monotonic clock), so it is
/// tested with explicit times; the agent runs it on its own queue, fed from bounded queues.
///
/// - Motion (``MotionDetector``): each zone with motion is activity for that zone's event (`motion`, zone id);
///   without zones, for the whole picture's (zone nil).
/// - Sound (``SoundLevelDetector``): each triggering 100 ms window is activity for the `sound` event.
/// - Alarms (``AlarmPatternDetector``): each T3 or T4 cycle heard is activity for the `smokeAlarm` or `coAlarm`
///   event.
/// - The doorbell: each press is activity for the `doorbellPress` event, under ``doorbellTimeControl``.
///
/// Each (trigger, zone) has its own ``EventTimeControl`` (start, updates, end, blind). Detectors of triggers that
/// are off do not run. Turning a trigger off, or removing or changing a zone, ends its running event with reason
/// `disabled`. Unsupported triggers (``EventTrigger/unsupportedReason(doorbellButtonConfigured:)``) never fire.
public struct EventEngine: Sendable {
    struct Key: Hashable, Sendable {
        var trigger: EventTrigger
        var zone: UInt16?
    }

    /// The doorbell's events: 10 s after a press, extended by 10 s per press, at most 60 s, no blind time (every
    /// press counts).
    public static let doorbellTimeControl = MotionTimeControl(initialDuration: 10, augmentationDuration: 10, maxDuration: 60, blindDuration: 0)

    /// What runs.
    public private(set) var settings: EventSettings
    /// Whether a doorbell button is configured (the `doorbellPress` trigger is supported).
    public let doorbellButtonConfigured: Bool
    /// Frames judged for motion.
    public private(set) var framesAnalyzed: UInt64 = 0
    /// Audio chunks judged.
    public private(set) var chunksAnalyzed: UInt64 = 0

    private var motion: MotionDetector
    private var sound: SoundLevelDetector
    private var alarm = AlarmPatternDetector()
    private var controls: [Key: EventTimeControl] = [:]
    private var running: [Key: Event] = [:]
    private var nextID: UInt64
    private var sequence: UInt64 = 0

    /// An engine with `settings`; event ids count from `firstID` (an agent continuing its ids across restarts
    /// passes the next one).
    public init(settings: EventSettings = EventSettings(), doorbellButtonConfigured: Bool = false, firstID: UInt64 = 1) {
        self.settings = settings
        self.doorbellButtonConfigured = doorbellButtonConfigured
        self.nextID = max(firstID, 1)
        motion = MotionDetector(
            configuration: MotionDetector.Configuration(sensitivity: settings.motionSensitivity), zones: settings.zones)
        sound = SoundLevelDetector(configuration: SoundLevelDetector.Configuration(thresholdDBFS: settings.soundThresholdDBFS))
    }

    /// The triggers that run: enabled and supported.
    public var activeTriggers: Set<EventTrigger> {
        settings.enabledTriggers.filter { $0.unsupportedReason(doorbellButtonConfigured: doorbellButtonConfigured) == nil }
    }

    /// The events running now, oldest first.
    public var ongoing: [Event] { running.values.sorted { $0.id < $1.id } }

    /// When ``tick(now:)`` next has something to do (an event's end, a blind period's end); nil when nothing runs.
    public var nextDeadline: UInt64? { controls.values.compactMap(\.nextDeadline).min() }

    /// Whether motion detection wants frames (the `motion` trigger runs).
    public var wantsVideo: Bool { activeTriggers.contains(.motion) }

    /// Whether the audio detectors want the microphone (a sound trigger runs).
    public var wantsAudio: Bool { activeTriggers.contains { $0.isSound } }

    /// Uses `settings` from now on: events of triggers turned off, and of zones removed or changed, end
    /// (`disabled`); a new sensitivity or zone list restarts motion's background; a new threshold restarts the
    /// sound level. A new time control applies to events that start afterwards.
    public mutating func apply(_ newSettings: EventSettings, now: UInt64) -> [EventNotice] {
        let old = settings
        settings = newSettings
        if old.motionSensitivity != newSettings.motionSensitivity || old.zones != newSettings.zones {
            motion = MotionDetector(
                configuration: MotionDetector.Configuration(sensitivity: newSettings.motionSensitivity), zones: newSettings.zones)
        }
        if old.soundThresholdDBFS != newSettings.soundThresholdDBFS {
            sound = SoundLevelDetector(configuration: SoundLevelDetector.Configuration(thresholdDBFS: newSettings.soundThresholdDBFS))
        }
        if !activeTriggers.contains(where: \.isSound) { alarm = AlarmPatternDetector() }
        let active = activeTriggers
        var notices: [EventNotice] = []
        for key in running.keys.sorted(by: { running[$0]!.id < running[$1]!.id }) {
            var gone = !active.contains(key.trigger)
            if key.trigger == .motion, !gone, old.zones != newSettings.zones {
                // An event of a zone that changed or went, or of the whole picture when zones came or went.
                gone = key.zone.map { old.zones[id: $0] != newSettings.zones[id: $0] } ?? !newSettings.zones.isEmpty
            }
            guard gone, var event = running.removeValue(forKey: key) else { continue }
            event.end = max(now, event.start)
            event.endReason = .disabled
            controls[key] = nil
            notices.append(notice(.ended, event))
        }
        // Idle or blind state machines take the new time control for their next event.
        for (key, control) in controls where !control.isActive && key.trigger != .doorbellPress {
            controls[key] = EventTimeControl(control: newSettings.timeControl)
        }
        return notices
    }

    /// Judges one frame captured at `now` for motion (nothing when the `motion` trigger is off).
    public mutating func video(_ frame: VideoFrame, now: UInt64) -> [EventNotice] {
        guard wantsVideo else { return tick(now: now) }
        framesAnalyzed += 1
        return motionReport(motion.process(frame, now: now), now: now)
    }

    /// Judges one frame's luma grid (``LumaGrid``) captured at `now`, as ``video(_:now:)``.
    public mutating func video(grid: LumaGrid, now: UInt64) -> [EventNotice] {
        guard wantsVideo else { return tick(now: now) }
        framesAnalyzed += 1
        return motionReport(motion.process(grid, now: now), now: now)
    }

    private mutating func motionReport(_ report: MotionReport, now: UInt64) -> [EventNotice] {
        var notices = tick(now: now)
        for zone in report.zones where zone.isMotion {
            notices += activity(Key(trigger: .motion, zone: zone.zoneID), at: now)
        }
        return notices
    }

    /// Judges a chunk of the microphone's audio (48 kHz stereo), timed by its first sample.
    public mutating func audio(_ chunk: AudioChunk) -> [EventNotice] {
        let active = activeTriggers
        let end = chunk.firstSampleTime + UInt64(chunk.sampleFrames) * 1_000_000_000 / 48_000
        guard active.contains(where: \.isSound) else { return tick(now: end) }
        chunksAnalyzed += 1
        var notices = tick(now: chunk.firstSampleTime)
        if active.contains(.sound) {
            for window in sound.process(chunk) where window.triggers {
                notices += activity(Key(trigger: .sound, zone: nil), at: window.start)
            }
        }
        if active.contains(.smokeAlarm) || active.contains(.coAlarm) {
            for detection in alarm.process(chunk) where active.contains(detection.trigger) {
                notices += activity(Key(trigger: detection.trigger, zone: nil), at: detection.time)
            }
        }
        return notices + tick(now: end)
    }

    /// The doorbell button was pressed at `time` (nothing when the trigger is off or no button is configured).
    public mutating func doorbellPress(at time: UInt64) -> [EventNotice] {
        guard activeTriggers.contains(.doorbellPress) else { return tick(now: time) }
        return tick(now: time) + activity(Key(trigger: .doorbellPress, zone: nil), at: time)
    }

    /// Time passed to `now`: events whose end has come end.
    public mutating func tick(now: UInt64) -> [EventNotice] {
        var notices: [EventNotice] = []
        for key in controls.keys.sorted(by: { ($0.trigger.rawValue, $0.zone ?? 0) < ($1.trigger.rawValue, $1.zone ?? 0) }) {
            guard var control = controls[key], control.nextDeadline.map({ $0 <= now }) ?? false else { continue }
            let transitions = control.tick(now: now)
            controls[key] = control
            notices += record(transitions, for: key)
        }
        return notices
    }

    private mutating func activity(_ key: Key, at time: UInt64) -> [EventNotice] {
        var control = controls[key]
            ?? EventTimeControl(control: key.trigger == .doorbellPress ? Self.doorbellTimeControl : settings.timeControl)
        let transitions = control.activity(now: time)
        controls[key] = control
        return record(transitions, for: key)
    }

    private mutating func record(_ transitions: [EventTimeControl.Transition], for key: Key) -> [EventNotice] {
        var notices: [EventNotice] = []
        for transition in transitions {
            switch transition {
            case .started(let at, _):
                let event = Event(id: nextID, trigger: key.trigger, zoneID: key.zone, start: at)
                nextID += 1
                running[key] = event
                notices.append(notice(.started, event))
            case .updated:
                guard var event = running[key] else { continue }
                event.apply(transition)
                running[key] = event
                notices.append(notice(.updated, event))
            case .ended:
                guard var event = running.removeValue(forKey: key) else { continue }
                event.apply(transition)
                notices.append(notice(.ended, event))
            }
        }
        return notices
    }

    private mutating func notice(_ kind: EventNotice.Kind, _ event: Event) -> EventNotice {
        sequence += 1
        return EventNotice(sequence: sequence, kind: kind, event: event)
    }
}
