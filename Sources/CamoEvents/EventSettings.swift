/// What the event detectors do: the model's enabled event triggers, motion sensitivity and time control, activity
/// zones, and the sound trigger's threshold. A plain value the agent keeps in its settings model.
public struct EventSettings: Sendable, Hashable, Codable {
    /// The triggers on by default: motion, the smoke and CO alarms and the doorbell press. The general `sound`
    /// trigger is off by default: in a lived-in room a level threshold fires all day, so it is the user's choice.
    public static let defaultTriggers: Set<EventTrigger> = [.motion, .smokeAlarm, .coAlarm, .doorbellPress]

    /// The triggers turned on (unsupported ones are never on: ``EventEngine`` ignores them).
    public var enabledTriggers: Set<EventTrigger>
    /// Motion's sensitivity, 1...10.
    public var motionSensitivity: MotionSensitivity
    /// How long events last (every trigger but the doorbell's, which is fixed: ``EventEngine/doorbellTimeControl``).
    public var timeControl: MotionTimeControl
    /// The `sound` trigger's level, dBFS.
    public var soundThresholdDBFS: Float
    /// The activity zones; none: motion anywhere in the picture.
    public var zones: ZoneList

    /// Settings; by default ``defaultTriggers``, medium sensitivity, ``MotionTimeControl``'s defaults, -30 dBFS and
    /// no zones.
    public init(
        enabledTriggers: Set<EventTrigger> = Self.defaultTriggers, motionSensitivity: MotionSensitivity = .medium,
        timeControl: MotionTimeControl = MotionTimeControl(), soundThresholdDBFS: Float = -30, zones: ZoneList = ZoneList()
    ) {
        self.enabledTriggers = enabledTriggers
        self.motionSensitivity = motionSensitivity
        self.timeControl = timeControl
        self.soundThresholdDBFS = soundThresholdDBFS
        self.zones = zones
    }
}
