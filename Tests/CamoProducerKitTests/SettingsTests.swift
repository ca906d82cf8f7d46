import CamoMedia
@testable import CamoProducerKit
import CamoStudioKit
import CamoWire
import Foundation
import Logging
import Synchronization
import Testing

/// The settings model over real sessions (TCP, Noise, protocol 1.2): studios read and write it, every studio hears of
/// each change, the picture turns in the frames studios receive, and bad writes come back with reasons.
@Suite("Settings model: studios read, write and are told", .timeLimit(.minutes(2)))
struct SettingsTests {
    /// 1280x720 grey with a red block in the top-left corner (x 0..<160, y 0..<90) and a blue 80x80 block in the
    /// centre (x 600..<680, y 320..<400).
    static func markedFrame(captureTime: UInt64, sequence: UInt64) -> VideoFrame {
        var data = [UInt8](repeating: 128, count: 1280 * 720 * 4)
        for y in 0..<90 {
            for x in 0..<160 {
                let i = (y * 1280 + x) * 4
                data[i] = 0; data[i + 1] = 0; data[i + 2] = 255
            }
        }
        for y in 320..<400 {
            for x in 600..<680 {
                let i = (y * 1280 + x) * 4
                data[i] = 255; data[i + 1] = 0; data[i + 2] = 0
            }
        }
        for i in stride(from: 3, to: data.count, by: 4) { data[i] = 255 }
        return VideoFrame(width: 1280, height: 720, bytesPerRow: 1280 * 4, data: data, captureTime: captureTime, sourceSequence: sequence)
    }

    /// Feeds the marked frame at 30 fps until cancelled.
    static func feed(_ controller: CamoController) -> Task<Void, Never> {
        Task.detached {
            var sequence: UInt64 = 0
            let clock = SystemMonotonicClock()
            while !Task.isCancelled {
                sequence += 1
                try? controller.enqueueVideo(markedFrame(captureTime: clock.now.nanoseconds, sequence: sequence))
                try? await Task.sleep(nanoseconds: 33_000_000)
            }
        }
    }

    static func studio(_ port: Int, name: String, identity: StudioIdentity = .generated(), agentKey: [UInt8]? = nil,
                       purpose: SessionPurpose = .media, decode: Bool = true) async throws -> StudioClient {
        var configuration = StudioClientConfiguration(identity: identity, studioName: name, audioSamplesRequired: 1024, codec: .jpeg)
        configuration.purpose = purpose
        configuration.decodeVideo = decode
        if let agentKey { configuration.handshake = .paired(agentKey: agentKey) }
        return try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration)
    }

    /// The next settings event matching `predicate` (nil when the session closes or 5 s pass).
    static func nextSettings(_ events: inout StudioEventStream.AsyncIterator, _ predicate: (SettingsSnapshot) -> Bool) async -> SettingsSnapshot? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, let event = await events.next() {
            switch event {
            case .settings(let snapshot) where predicate(snapshot): return snapshot
            case .closed: return nil
            default: continue
            }
        }
        return nil
    }

    static func nextResult(_ events: inout StudioEventStream.AsyncIterator, id: UInt32) async -> SettingsResult? {
        while let event = await events.next() {
            switch event {
            case .settingsResult(let result) where result.requestId == id: return result
            case .closed: return nil
            default: continue
            }
        }
        return nil
    }

    @Test("One studio turns the picture 90°: the other hears of it before the first portrait frame (latency printed), and frames arrive 720x1280 with the marker top-right")
    func rotationReachesTheOtherStudioAndTheFrames() async throws {
        let controller = ControllerTests.makeController()
        try await controller.start()
        let port = try #require(controller.port)
        let feeding = Self.feed(controller)
        defer { feeding.cancel() }
        let writer = try await Self.studio(port, name: "writer")
        // The watcher does not decode (its news would wait behind its decoding in a debug build); the writer does.
        let watcher = try await Self.studio(port, name: "watcher", decode: false)
        #expect(watcher.agent.capabilities.contains(.settings) && watcher.agent.versionMinor == WireLimits.versionMinor)
        var watcherEvents = watcher.events.makeAsyncIterator()
        var writerEvents = writer.events.makeAsyncIterator()

        // The whole model first: rotation 0, supported; the status light listed as unsupported, with a reason.
        try await watcher.requestSettings()
        let model = try #require(await Self.nextSettings(&watcherEvents) { $0.reason == .answer })
        #expect(model.settings.first { $0.name == "imageRotation" }?.value == .int(0))
        let light = try #require(model.settings.first { $0.name == "statusLightEnabled" })
        #expect(!light.supported && light.note?.contains("status-led") == true, "\(light)")
        #expect(model.studioMayWrite)

        // The watcher reads all along, as a real studio does (one that stops reading gets its news behind its unread frames).
        // It is told before the first portrait frame reaches it.
        let watching = Task { () -> (change: SettingsSnapshot?, at: UInt64) in
            while let event = await watcherEvents.next() {
                switch event {
                case .video(let frame) where frame.frame.height > frame.frame.width:
                    Issue.record("a portrait frame arrived before the change notification")
                    return (nil, 0)
                case .settings(let snapshot) where snapshot.reason == .change:
                    return (snapshot, DispatchTime.now().uptimeNanoseconds)
                case .closed:
                    return (nil, 0)
                default:
                    continue
                }
            }
            return (nil, 0)
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        let sent = DispatchTime.now().uptimeNanoseconds
        try await writer.writeSettings(["imageRotation": .int(90)], requestId: 7)
        let result = try #require(await Self.nextResult(&writerEvents, id: 7))
        #expect(result.refused.isEmpty && result.applied.first?.value == .int(90))
        let watched = await watching.value
        let change = try #require(watched.change, "the other studio never heard of the change")
        let latencyMs = Double(watched.at - sent) / 1e6
        // Printed, not judged here (no wall-clock bounds in unit tests); the must-hold of 100 ms is measured beside it.
        print("settings: the other studio heard of the change after \(String(format: "%.2f", latencyMs)) ms")
        #expect(change.settings.map(\.name) == ["imageRotation"] && change.settings.first?.value == .int(90))
        #expect(change.changedBy == "studio writer")

        // Frames: after the change they are portrait, and the top-left marker is now top-right.
        var portrait: ReceivedVideoFrame?
        while portrait == nil, let event = await writerEvents.next() {
            if case .video(let frame) = event, frame.frame.width == 720 { portrait = frame }
            if case .closed(let reason) = event { Issue.record("closed: \(reason)"); break }
        }
        let frame = try #require(portrait, "no portrait frame arrived").frame
        #expect(frame.height == 1280)
        func pixel(_ x: Int, _ y: Int) -> (b: UInt8, g: UInt8, r: UInt8) {
            let i = y * frame.bytesPerRow + x * 4
            return (frame.data[i], frame.data[i + 1], frame.data[i + 2])
        }
        let topRight = pixel(720 - 45, 80), topLeft = pixel(45, 80)
        #expect(topRight.r > 200 && topRight.b < 50, "the marker should be top-right after 90° clockwise: \(topRight)")
        #expect(topLeft.r < 160 && topLeft.b > 100, "top-left should be grey now: \(topLeft)")
        #expect(controller.imageTransform.rotation == .quarter)
        await writer.close()
        await watcher.close()
        await controller.stop()
    }

    @Test("A viewport of the centre quarter shows the centre scaled 2x, and a mirror puts the corner marker top-right, in the frames a studio receives")
    func viewportAndMirrorInTheReceivedFrames() async throws {
        let controller = ControllerTests.makeController()
        try await controller.start()
        let feeding = Self.feed(controller)
        defer { feeding.cancel() }
        let studio = try await Self.studio(try #require(controller.port), name: "viewer")
        var events = studio.events.makeAsyncIterator()

        /// The first frame after the write's result that satisfies `check` (nil after 90 frames).
        func frameAfter(_ values: [String: SettingValue], id: UInt32, _ check: (VideoFrame) -> Bool) async throws -> VideoFrame? {
            try await studio.writeSettings(values, requestId: id)
            let result = await Self.nextResult(&events, id: id)
            #expect(result?.refused.isEmpty == true, "\(String(describing: result))")
            var seen = 0
            while seen < 90, let event = await events.next() {
                guard case .video(let received) = event else { continue }
                seen += 1
                if check(received.frame) { return received.frame }
            }
            return nil
        }
        func pixel(_ frame: VideoFrame, _ x: Int, _ y: Int) -> (b: Int, g: Int, r: Int) {
            let i = y * frame.bytesPerRow + x * 4
            return (Int(frame.data[i]), Int(frame.data[i + 1]), Int(frame.data[i + 2]))
        }
        func isBlue(_ p: (b: Int, g: Int, r: Int)) -> Bool { p.b > 200 && p.r < 60 }
        func isRed(_ p: (b: Int, g: Int, r: Int)) -> Bool { p.r > 200 && p.b < 60 }

        // The centre quarter (320,180-960,540) scaled back to 1280x720: the 80x80 blue block becomes 160x160.
        let zoomed = try #require(await frameAfter(["viewport": .rectangle(SettingRectangle(x1: 320, y1: 180, x2: 960, y2: 540))], id: 1) {
            isBlue(pixel($0, 640 - 70, 360)) && $0.width == 1280
        }, "no zoomed frame: the blue block never reached 70 px left of the centre")
        #expect(isBlue(pixel(zoomed, 640 + 70, 360 + 70)) && isBlue(pixel(zoomed, 640 - 70, 360 - 70)), "the block should span ±80 px")
        #expect(!isBlue(pixel(zoomed, 640 - 100, 360)) && !isBlue(pixel(zoomed, 640, 360 + 100)), "and not much more")
        #expect(!isRed(pixel(zoomed, 40, 40)), "the corner marker is outside the viewport")

        // Back to the full frame, mirrored: the red corner block is now top-right.
        let mirrored = try #require(await frameAfter(
            ["viewport": .rectangle(SettingRectangle(x1: 0, y1: 0, x2: 1280, y2: 720)), "imageFlipHorizontal": .bool(true)], id: 2
        ) { isRed(pixel($0, 1280 - 40, 40)) }, "no mirrored frame")
        #expect(!isRed(pixel(mirrored, 40, 40)))
        // Upside down as well: bottom-right.
        let both = try #require(await frameAfter(["imageFlipVertical": .bool(true)], id: 3) { isRed(pixel($0, 1280 - 40, 720 - 40)) },
                                "no frame flipped both ways")
        #expect(!isRed(pixel(both, 1280 - 40, 40)))
        await studio.close()
        await controller.stop()
    }

    @Test("A read-only studio's write is refused with a reason; its reads work")
    func readOnlyStudio() async throws {
        let identity = StudioIdentity.generated()
        var record = PairedStudio(id: identity.id, name: "viewer", publicKey: identity.publicKey, pairedAt: Date())
        record.settingsReadOnly = true
        let controller = ControllerTests.makeController(allowUnpaired: false)
        try controller.pairedDeviceStore.add(record)
        try await controller.start()
        let studio = try await Self.studio(
            try #require(controller.port), name: "viewer", identity: identity, agentKey: controller.configuration.identity.keyPair.publicKey)
        var events = studio.events.makeAsyncIterator()
        try await studio.requestSettings()
        let model = try #require(await Self.nextSettings(&events) { $0.reason == .answer })
        #expect(!model.studioMayWrite)
        try await studio.writeSettings(["imageFlipHorizontal": .bool(true)], requestId: 1)
        let result = try #require(await Self.nextResult(&events, id: 1))
        #expect(result.applied.isEmpty)
        #expect(result.refused.first?.reason.contains("may read the settings but not change them") == true, "\(result.refused)")
        #expect(controller.imageTransform.isIdentity)
        await studio.close()
        await controller.stop()
    }

    @Test("Bad writes: unknown name, wrong type, out of range, a viewport of no area or outside the frame, read-only and unsupported ones; good ones in the same write apply")
    func badWritesComeBackWithReasons() async throws {
        let controller = ControllerTests.makeController()
        let result = controller.writeSettings([
            "noSuchThing": .int(1),
            "imageFlipVertical": .int(1),
            "imageRotation": .int(45),
            "viewport": .rectangle(SettingRectangle(x1: 100, y1: 100, x2: 100, y2: 400)),
            "lastContactTimestamp": .text("now"),
            "nightVision": .text("on"),
            "microphoneMuted": .text("yes please"),
            "imageFlipHorizontal": .bool(true),
        ], by: "test")
        let reasons = Dictionary(uniqueKeysWithValues: result.refused.map { ($0.name, $0.reason) })
        #expect(reasons["noSuchThing"]?.contains("no setting named 'noSuchThing'") == true, "\(reasons)")
        #expect(reasons["imageFlipVertical"]?.contains("true or false") == true, "\(reasons)")
        #expect(reasons["imageRotation"]?.contains("0, 90, 180, 270") == true, "\(reasons)")
        #expect(reasons["viewport"]?.contains("no area") == true, "\(reasons)")
        #expect(reasons["lastContactTimestamp"]?.contains("read-only") == true, "\(reasons)")
        #expect(reasons["nightVision"]?.contains("not supported") == true, "\(reasons)")
        #expect(reasons["microphoneMuted"]?.contains("true or false") == true, "\(reasons)")
        #expect(result.applied.map(\.name) == ["imageFlipHorizontal"])
        #expect(controller.imageTransform.flipHorizontal && !controller.imageTransform.flipVertical)

        let outside = controller.writeSettings(
            ["viewport": .rectangle(SettingRectangle(x1: 0, y1: 0, x2: 1400, y2: 720, width: 1280, height: 720))], by: "test")
        #expect(outside.refused.first?.reason.contains("outside") == true, "\(outside.refused)")
        // Wrong JSON on the wire is refused before it reaches the model.
        #expect(throws: WireError.self) { try AppMessage.decode([0x0F, 0, 0, 0, 2] + Array("{}".utf8)) }
    }

    @Test("transportStatus is the privacy switch by the push transport model's name: inactive pauses (streamingEnabled false), active resumes, anything else is refused")
    func transportStatusIsThePrivacySwitch() {
        let controller = ControllerTests.makeController()
        func value(_ name: String) -> SettingValue? { controller.settingsModel().first { $0.name == name }?.value }
        #expect(value("transportStatus") == .text("active"))
        let off = controller.writeSettings(["transportStatus": .text("inactive")], by: "test")
        #expect(off.refused.isEmpty && off.applied.map(\.name) == ["streamingEnabled"], "\(off)")
        #expect(controller.isPaused)
        #expect(value("transportStatus") == .text("inactive") && value("streamingEnabled") == .bool(false))
        let bad = controller.writeSettings(["transportStatus": .text("paused")], by: "test")
        #expect(bad.refused.first?.reason.contains("active or inactive") == true && bad.applied.isEmpty, "\(bad)")
        #expect(controller.isPaused)
        _ = controller.writeSettings(["transportStatus": .text("Active")], by: "test")
        #expect(!controller.isPaused && value("transportStatus") == .text("active"))
    }

    @Test("10,000 writes: each answered, the file written far fewer times, the last value saved; a new controller restores it per camera")
    func floodAndPersistence() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func make() -> CamoController {
            var configuration = ControllerConfiguration(
                identity: AgentIdentity(id: "agent-test", name: "Test agent", keyPair: .generate()),
                description: AgentDescription(model: "test", softwareVersion: "0.0", camera: "none", microphone: "none"),
                admission: AdmissionPolicy(allowUnpaired: true))
            configuration.port = 0
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            return CamoController(configuration: configuration, logger: logger, pairedDevices: PairedDeviceStore(inMemory: []),
                                  advertiser: .off, settingsDirectory: directory)
        }
        let first = make()
        var answered = 0
        for i in 0..<10_000 {
            let result = first.writeSettings(["imageRotation": .int([0, 90, 180, 270][i % 4])], by: "flood")
            if result.applied.count == 1 || !result.refused.isEmpty { answered += 1 }
        }
        _ = first.writeSettings(["imageRotation": .int(180), "streamingEnabled": .bool(false)], by: "test")
        first.cameraOpened(settingsKey: "usb:046d:0825:ABC")
        _ = first.writeSettings(["imageFlipVertical": .bool(true)], by: "test")
        first.flushSettings()
        #expect(answered == 10_000)
        print("settings: 10,002 writes cost \(first.settingsFileWrites) writes of settings.json")
        #expect(first.settingsFileWrites < 10_002 && first.settingsFileWrites >= 1)

        let second = make()
        #expect(second.isPaused, "the privacy switch is saved")
        #expect(second.imageTransform.rotation == .half, "the test pattern's rotation is restored")
        second.cameraOpened(settingsKey: "usb:046d:0825:ABC")
        second.flushSettings()
        #expect(second.imageTransform.rotation == .none && second.imageTransform.flipVertical, "the camera's own settings follow it")
        second.cameraOpened(settingsKey: SettingsValues.testPatternKey)
        second.flushSettings()
        #expect(second.imageTransform.rotation == .half && !second.imageTransform.flipVertical)

        // A corrupt file is kept aside and reported, never half-read.
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: directory + "/settings.json"))
        let third = make()
        #expect(!third.isPaused && third.imageTransform.isIdentity)
        let listing = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(listing.filter { $0.hasPrefix("settings.json.corrupt") }.count == 1, "\(listing)")
    }
}
