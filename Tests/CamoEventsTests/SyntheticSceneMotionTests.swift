import CamoEvents
import CamoMedia
import Testing

/// The agent's synthetic scenes (`--camera test:block`, `test:steps`) through the event engine, as the agent runs them
/// but with the frames' own times: the same claims the end-to-end test makes of the running agent.
@Suite("Synthetic scenes through the event engine")
struct SyntheticSceneMotionTests {
    static let size = VideoSize(width: 1280, height: 720)
    /// The left zone covers x 0...700 of 2048 (a third of the picture, the block's quarter inside it), the right one
    /// x 1300...2048.
    static let zones = try! ZoneList(zones: [
        ActivityZone(id: 1, name: "left", vertices: ActivityZone.rectangle(left: 0, top: 0, right: 700, bottom: 2048), color: "#F439A0"),
        ActivityZone(id: 2, name: "right", vertices: ActivityZone.rectangle(left: 1300, top: 0, right: 2048, bottom: 2048), color: "#39A0F4"),
    ])

    /// Every notice of `seconds` of `scene` judged at 15 fps (every other frame, as a busy agent's mailbox may).
    static func notices(_ scene: SyntheticScene, seconds: Int, settings: EventSettings) -> [EventNotice] {
        var engine = EventEngine(settings: settings)
        var renderer = SceneRenderer(scene: scene)
        var notices: [EventNotice] = []
        for n in stride(from: UInt64(0), to: UInt64(seconds * 30), by: 2) {
            let time = 1_000_000_000 + n * 1_000_000_000 / 30
            notices += engine.video(renderer.frame(number: n, size: size, captureTime: time), now: time)
        }
        return notices
    }

    @Test("test:block: motion starts in the left zone within a second, never in the right one", arguments: [5, 10])
    func blockInLeftZone(sensitivity: Int) {
        let settings = EventSettings(enabledTriggers: [.motion], motionSensitivity: MotionSensitivity(sensitivity), zones: Self.zones)
        let notices = Self.notices(.block, seconds: 12, settings: settings)
        let started = notices.filter { $0.kind == .started }
        #expect(started.contains { $0.event.zoneID == 1 }, "no motion in the left zone: \(notices.map(\.summary))")
        #expect(!notices.contains { $0.event.zoneID == 2 }, "motion in the right zone: \(notices.map(\.summary))")
        let first = started.first { $0.event.zoneID == 1 }.map { Double($0.event.start - 1_000_000_000) / 1e9 }
        #expect((first ?? 99) < 1, "the left zone's event started \(first ?? -1) s into the scene")
    }

    @Test("test:steps: five brightness steps of ±40 over 15 s are no motion, with or without zones", arguments: [5, 10], [false, true])
    func stepsAreNotMotion(sensitivity: Int, withZones: Bool) {
        let settings = EventSettings(
            enabledTriggers: [.motion], motionSensitivity: MotionSensitivity(sensitivity), zones: withZones ? Self.zones : ZoneList())
        let notices = Self.notices(.steps, seconds: 15, settings: settings)
        #expect(notices.isEmpty, "\(notices.map(\.summary))")
    }
}
