/// How long an event lasts: the model's `motionTimeControl` (PushAvStreamTransport trigger options), in seconds.
/// ``EventTimeControl`` runs it.
public struct MotionTimeControl: Sendable, Hashable, Codable {
    /// The maximum event lengths an app offers: 10, 15, 30, 60, 120 and 180 s.
    public static let maxDurationChoices: [UInt32] = [10, 15, 30, 60, 120, 180]

    /// How long an event lasts after the activity that started it, s (at least 1, at most ``maxDuration``).
    public var initialDuration: UInt16
    /// How much further activity during an event extends it, s (0: never; at most ``maxDuration``).
    public var augmentationDuration: UInt16
    /// The longest an event lasts, s: one of ``maxDurationChoices``.
    public var maxDuration: UInt32
    /// How long after an event ends activity starts no new one, s.
    public var blindDuration: UInt16

    /// A time control; the defaults (ours) are 10 s initially, extended by 5 s, at most 60 s, then 5 s blind.
    public init(initialDuration: UInt16 = 10, augmentationDuration: UInt16 = 5, maxDuration: UInt32 = 60, blindDuration: UInt16 = 5) {
        self.initialDuration = initialDuration
        self.augmentationDuration = augmentationDuration
        self.maxDuration = maxDuration
        self.blindDuration = blindDuration
    }

    /// Throws unless ``maxDuration`` is one of the choices, ``initialDuration`` is 1...maxDuration and
    /// ``augmentationDuration`` at most maxDuration.
    public func validate() throws(MotionTimeControlError) {
        guard Self.maxDurationChoices.contains(maxDuration) else { throw .maxDurationNotAChoice(maxDuration) }
        guard initialDuration >= 1, UInt32(initialDuration) <= maxDuration else {
            throw .initialDurationOutOfRange(initialDuration, maxDuration: maxDuration)
        }
        guard UInt32(augmentationDuration) <= maxDuration else {
            throw .augmentationDurationTooLong(augmentationDuration, maxDuration: maxDuration)
        }
    }
}

/// Why a ``MotionTimeControl`` was refused; each description says what is allowed.
public enum MotionTimeControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The maximum duration is not one of ``MotionTimeControl/maxDurationChoices``.
    case maxDurationNotAChoice(UInt32)
    /// The initial duration is 0 or beyond the maximum duration.
    case initialDurationOutOfRange(UInt16, maxDuration: UInt32)
    /// The augmentation is longer than the maximum duration.
    case augmentationDurationTooLong(UInt16, maxDuration: UInt32)

    public var description: String {
        switch self {
        case .maxDurationNotAChoice(let seconds):
            "maxDuration \(seconds) s is not allowed: choose one of \(MotionTimeControl.maxDurationChoices.map(String.init).joined(separator: ", ")) s"
        case .initialDurationOutOfRange(let seconds, let maxDuration):
            "initialDuration \(seconds) s is not allowed: it must be 1...\(maxDuration) s (at least 1 s, at most maxDuration)"
        case .augmentationDurationTooLong(let seconds, let maxDuration):
            "augmentationDuration \(seconds) s is not allowed: it must be 0...\(maxDuration) s (at most maxDuration)"
        }
    }
}
