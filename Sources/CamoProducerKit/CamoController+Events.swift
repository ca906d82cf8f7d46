import CamoWire
import Synchronization

/// The camera's events for studios (protocol 1.3): a studio that sends `eventsRequest` gets every `eventNotice`
/// from then on (with `replay`, the kept ones first). The controller does not detect anything itself: the host
/// (the agent's event detectors) publishes what it noticed.
extension CamoController {
    /// Sends `event` to every studio that asked for events.
    public func publishEvent(_ event: WireEvent) {
        for session in core.withLock({ $0.sessions }) { session.deliverEvent(event) }
    }

    /// Gives the notices a studio asking with `replay` gets first (the host's kept ones, oldest first).
    public func setEventHistory(_ history: @escaping @Sendable () -> [WireEvent]) {
        settingsHub.eventHistory.withLock { $0 = history }
    }

    /// Whether the host publishes events (it gave their history): studios are told so (capability `events`).
    public var publishesEvents: Bool { settingsHub.eventHistory.withLock { $0 != nil } }

    /// The kept notices (none until ``setEventHistory(_:)``).
    func eventHistory() -> [WireEvent] {
        settingsHub.eventHistory.withLock { $0 }?() ?? []
    }
}
