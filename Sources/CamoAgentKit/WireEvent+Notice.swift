import CamoEvents
import CamoWire

extension WireEvent {
    /// The notice as it travels to studios (protocol 1.3 `eventNotice`).
    public init(_ notice: EventNotice) {
        self.init(
            sequence: notice.sequence, kind: notice.kind.rawValue, id: notice.event.id, trigger: notice.event.trigger.rawValue,
            zoneID: notice.event.zoneID, start: notice.event.start, updates: notice.event.updates, end: notice.event.end,
            endReason: notice.event.endReason?.rawValue, time: notice.time)
    }
}
