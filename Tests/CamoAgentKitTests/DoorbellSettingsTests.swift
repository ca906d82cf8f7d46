@testable import CamoAgentKit
import CamoDoorbell
import CamoProducerKit
import CamoWire
import Logging
import Synchronization
import Testing

/// The chime's settings provider, and the Doorbell's parsing of its configuration.
@Suite("Doorbell settings: the chime's sounds, choice and wired chime")
struct DoorbellSettingsTests {
    typealias N = SettingsCatalog.Name

    /// What the provider applied, in order.
    final class Applied: Sendable {
        private let values = Mutex<[DoorbellSettings.Chime]>([])
        func add(_ chime: DoorbellSettings.Chime) { values.withLock { $0.append(chime) } }
        var all: [DoorbellSettings.Chime] { values.withLock { $0 } }
    }

    /// The provider with `saved` values; every applied value lands in the returned box.
    static func make(externalChime: String?, saved: [String: SettingValue] = [:]) -> (DoorbellSettings, Applied) {
        let applied = Applied()
        let settings = DoorbellSettings(externalChime: externalChime, saved: { saved[$0] }) { applied.add($0) }
        return (settings, applied)
    }

    static func descriptor(_ settings: DoorbellSettings, _ name: String) throws -> SettingDescriptor {
        try #require(settings.settingDescriptors().first { $0.name == name }, "no \(name)")
    }

    @Test("The model: the installed sounds (read-only), the chosen one among them, the wired chime's switch and duration")
    func descriptors() throws {
        let (settings, applied) = Self.make(externalChime: "gpio:chime")
        #expect(applied.all == [DoorbellSettings.Chime()], "the saved (here: default) values are applied at once")
        let installed = try Self.descriptor(settings, N.installedChimeSounds)
        #expect(installed.kind == .info && !installed.writable)
        #expect(installed.value == .facts(["dingdong": "Ding-dong", "westminster": "Westminster", "triple": "Triple", "buzz": "Buzz"]))
        let selected = try Self.descriptor(settings, N.selectedChime)
        #expect(selected.kind == .choice && selected.choices == ["dingdong", "westminster", "triple", "buzz"])
        #expect(selected.value == .text("dingdong") && selected.defaultValue == .text("dingdong"))
        let enabled = try Self.descriptor(settings, N.externalChimeEnabled)
        #expect(enabled.kind == .bool && enabled.supported && enabled.value == .bool(true) && enabled.note?.contains("gpio:chime") == true)
        let duration = try Self.descriptor(settings, N.externalChimeDuration)
        #expect(duration.kind == .int && duration.supported && duration.minimum == 100 && duration.maximum == 10_000)
        #expect(duration.value == .int(1_000) && duration.defaultValue == .int(1_000))
    }

    @Test("Without a wired chime its two settings are listed unsupported, saying how to configure one")
    func noWiredChime() throws {
        let (settings, _) = Self.make(externalChime: nil)
        for name in [N.externalChimeEnabled, N.externalChimeDuration] {
            let d = try Self.descriptor(settings, name)
            #expect(!d.supported && d.value == nil, "\(name)")
            #expect(d.note?.contains("config key externalChime") == true, "\(name): \(d.note ?? "")")
        }
        #expect(try Self.descriptor(settings, N.selectedChime).supported, "the speaker's chime needs no wired chime")
    }

    @Test("Writes go to the doorbell at once; an unknown chime is refused with the installed names")
    func writes() throws {
        let (settings, applied) = Self.make(externalChime: "gpio:gpiochip0:4")
        try settings.applySetting(name: N.selectedChime, value: .text("Westminster"))
        try settings.applySetting(name: N.externalChimeEnabled, value: .bool(false))
        try settings.applySetting(name: N.externalChimeDuration, value: .int(2_500))
        let last = try #require(applied.all.last)
        #expect(last == DoorbellSettings.Chime(selected: "westminster", externalEnabled: false, externalDurationMs: 2_500))
        #expect(settings.current == last)
        #expect(try Self.descriptor(settings, N.selectedChime).value == .text("westminster"))
        #expect(try Self.descriptor(settings, N.externalChimeDuration).value == .int(2_500))
        do {
            try settings.applySetting(name: N.selectedChime, value: .text("bell"))
            Issue.record("an unknown chime was accepted")
        } catch {
            #expect(error.description.contains("dingdong, westminster, triple, buzz") && error.description.contains("'bell'"), "\(error)")
        }
        #expect(settings.current.selected == "westminster")
    }

    @Test("Saved values come back at start; a saved sound that no longer exists, and a duration out of range, do not")
    func saved() {
        let (settings, applied) = Self.make(externalChime: "gpio:chime", saved: [
            N.selectedChime: .text("triple"), N.externalChimeEnabled: .bool(false), N.externalChimeDuration: .int(700),
        ])
        #expect(settings.current == DoorbellSettings.Chime(selected: "triple", externalEnabled: false, externalDurationMs: 700))
        #expect(applied.all == [settings.current])
        let (odd, _) = Self.make(externalChime: "gpio:chime", saved: [N.selectedChime: .text("gong"), N.externalChimeDuration: .int(60_000)])
        #expect(odd.current.selected == "dingdong" && odd.current.externalDurationMs == 10_000)
    }

    @Test("Doorbell: the configuration texts are checked at once; configure keeps a known sound and clamps the rest")
    func doorbellConfiguration() throws {
        #expect(throws: DoorbellError.self) {
            try Doorbell(button: "button", externalChime: nil, speaker: .none, logger: Logger(label: "test")) { _ in }
        }
        #expect(throws: DoorbellError.self) {
            try Doorbell(button: "gpio:doorbell", externalChime: "gpio:chip:x", speaker: .none, logger: Logger(label: "test")) { _ in }
        }
        let doorbell = try Doorbell(button: "gpio:doorbell", externalChime: "gpio:chime", speaker: .none, logger: Logger(label: "test")) { _ in }
        #expect(doorbell.input == .gpio(.named("doorbell"), activeLow: true))
        #expect(doorbell.externalChimeLine == .named("chime"))
        #expect(Doorbell.installedSounds == ["dingdong", "westminster", "triple", "buzz"])
        doorbell.configure(chime: "buzz", volume: 150, muted: true, externalEnabled: false, externalDurationMs: 20)
        #expect(doorbell.configuration == Doorbell.Chime(sound: .buzz, volume: 100, muted: true, externalEnabled: false, externalDurationMs: 100))
        doorbell.configure(chime: "gong", volume: -5, muted: false, externalEnabled: true, externalDurationMs: 99_999)
        #expect(doorbell.configuration == Doorbell.Chime(sound: .buzz, volume: 0, muted: false, externalEnabled: true, externalDurationMs: 10_000))
    }

    @Test("Doorbell: a missing button line is a clear error at start, and nothing is left open")
    func doorbellMissingLine() throws {
        let doorbell = try Doorbell(button: "gpio:camo-test-no-such-doorbell", externalChime: nil, speaker: .none, logger: Logger(label: "test")) { _ in }
        #expect(throws: DoorbellError.lineNotFound("camo-test-no-such-doorbell")) { try doorbell.start() }
        doorbell.stop()
        #expect(doorbell.presses == 0)
    }
}
