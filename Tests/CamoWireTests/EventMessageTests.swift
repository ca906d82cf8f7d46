import CamoWire
import Foundation
import Testing

/// The event messages of protocol 1.3: `eventsRequest` (a replay byte) and `eventNotice` (JSON behind a u32).
@Suite("Protocol 1.3: event messages")
struct EventMessageTests {
    static let event = WireEvent(
        sequence: 12, kind: "ended", id: 7, trigger: "motion", zoneID: 2, start: 1_000, updates: [2_000, 3_000], end: 9_000,
        endReason: "timeout", time: 1_795_000_000.5)

    @Test("both round-trip; the notice's summary names the trigger, zone and reason")
    func roundTrip() throws {
        for replay in [false, true] {
            #expect(try AppMessage.decode(AppMessage.eventsRequest(replay: replay).encoded()) == .eventsRequest(replay: replay))
        }
        #expect(try AppMessage.decode(AppMessage.eventNotice(Self.event).encoded()) == .eventNotice(Self.event))
        #expect(Self.event.summary == "12 ended motion zone 2 (event 7): timeout")
        // A trigger this side does not know still decodes (a later agent may add triggers).
        var later = Self.event
        later.trigger = "packageDelivered"
        #expect(try AppMessage.decode(AppMessage.eventNotice(later).encoded()) == .eventNotice(later))
    }

    @Test("bad bodies are refused with a sentence: a replay byte of 2, JSON that is not a notice, too many updates, trailing bytes")
    func badBodies() {
        #expect(throws: WireError.self) { try AppMessage.decode([AppMessageType.eventsRequest.rawValue, 2]) }
        #expect(throws: WireError.self) { try AppMessage.decode([AppMessageType.eventsRequest.rawValue]) }
        let json = Array(#"{"sequence":1}"#.utf8)
        var incomplete = [AppMessageType.eventNotice.rawValue]
        incomplete += withUnsafeBytes(of: UInt32(json.count).bigEndian, Array.init) + json
        #expect(throws: WireError.self) { try AppMessage.decode(incomplete) }
        var many = Self.event
        many.updates = Array(repeating: 1, count: WireEvent.maxUpdates + 1)
        #expect(throws: WireError.self) { try AppMessage.decode(AppMessage.eventNotice(many).encoded()) }
        #expect(throws: WireError.self) { try AppMessage.decode(AppMessage.eventNotice(Self.event).encoded() + [0]) }
    }

    @Test("only a studio sends eventsRequest, only an agent eventNotice")
    func directions() {
        #expect(AppMessageType.eventsRequest.sentByStudio == true)
        #expect(AppMessageType.eventNotice.sentByStudio == false)
    }
}
