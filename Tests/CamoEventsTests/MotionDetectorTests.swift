import CamoEvents
import CamoMedia
import CamoTestSupport
import Testing

@Suite("Motion detection on synthetic frames")
struct MotionDetectorTests {
    static let frameNanos: UInt64 = 33_333_333
    static let t0: UInt64 = 1_000_000_000_000

    /// Zone A: the left 960/2048 of the picture (x < 150 px at 320 wide); zone B: the right 768/2048 (x > 200 px).
    static let zones: ZoneList = {
        // Both zones are valid: the force-try cannot fail.
        try! ZoneList(zones: [
            ActivityZone(id: 1, name: "A", vertices: ActivityZone.rectangle(left: 0, top: 0, right: 960, bottom: 2048), color: "#FF0000"),
            ActivityZone(id: 2, name: "B", vertices: ActivityZone.rectangle(left: 1280, top: 0, right: 2048, bottom: 2048), color: "#0000FF"),
        ])
    }()

    static func detector(_ level: Int, zones: ZoneList = zones) -> MotionDetector {
        MotionDetector(configuration: .init(sensitivity: MotionSensitivity(level)), zones: zones)
    }

    static func motion(_ report: MotionReport, zone: UInt16?) -> Bool {
        report.zones.first { $0.zoneID == zone }?.isMotion ?? false
    }

    /// Runs `count` frames at 30 fps; `picture(i)` makes frame `i`'s pixels (noise is added to every frame).
    static func run(
        _ detector: inout MotionDetector, count: Int, seed: UInt64 = 1, picture: (Int) -> [UInt8]
    ) -> [MotionReport] {
        var generator = SeededGenerator(seed: seed)
        var reports: [MotionReport] = []
        for i in 0..<count {
            var pixels = picture(i)
            TestFrames.addNoise(&pixels, generator: &generator)
            let time = t0 + UInt64(i) * frameNanos
            reports.append(detector.process(TestFrames.frame(pixels, time: time), now: time))
        }
        return reports
    }

    /// A 32x18 black block (10 % of the picture's width and height) moving right 3 px a frame inside zone A from
    /// frame `from` on.
    static func movingBlock(_ scene: [UInt8], frame i: Int, from: Int = 10, width: Int = 32, height: Int = 18) -> [UInt8] {
        var pixels = scene
        if i >= from {
            TestFrames.block(&pixels, x: 10 + 3 * ((i - from) % 33), y: 30, width: width, height: height, bgr: (0, 0, 0))
        }
        return pixels
    }

    @Test("a block moving in zone A is motion in A from its second frame, never in B", arguments: TestFrames.Scene.allCases)
    func blockInZoneA(scene: TestFrames.Scene) {
        var detector = Self.detector(5)
        let still = scene.pixels
        let reports = Self.run(&detector, count: 60) { Self.movingBlock(still, frame: $0) }
        #expect(reports[0].zones.isEmpty)  // the first frame only starts the background
        for (i, report) in reports.enumerated().dropFirst() {
            #expect(!Self.motion(report, zone: 2), "zone B, frame \(i)")
            #expect(Self.motion(report, zone: 1) == (i >= 11), "zone A, frame \(i): \(report.zones)")
        }
        #expect(reports[30].zones.map(\.zoneID) == [1, 2])
    }

    @Test("a +40 brightness step over the whole frame is not motion", arguments: TestFrames.Scene.allCases, [5, 10])
    func brightnessStep(scene: TestFrames.Scene, level: Int) {
        var detector = Self.detector(level, zones: ZoneList())
        var brighter = scene.pixels
        TestFrames.brighten(&brighter, by: 40)
        let still = scene.pixels
        let reports = Self.run(&detector, count: 40) { $0 < 15 ? still : brighter }
        #expect(reports.filter(\.isMotion).isEmpty)
        #expect(reports.map(\.changedCells).max()! <= 3)
    }

    @Test("auto-exposure gain steps (x1.3, then x0.6) are not motion", arguments: TestFrames.Scene.allCases)
    func gainStep(scene: TestFrames.Scene) {
        var detector = Self.detector(5, zones: ZoneList())
        let still = scene.pixels
        var brighter = still
        TestFrames.gain(&brighter, 1.3)
        var darker = still
        TestFrames.gain(&darker, 0.6)
        let reports = Self.run(&detector, count: 60) { $0 < 15 ? still : $0 < 35 ? brighter : darker }
        #expect(reports.filter(\.isMotion).isEmpty)
    }

    @Test("sensor noise of ±6 per pixel is never motion, even at sensitivity 10", arguments: TestFrames.Scene.allCases)
    func noise(scene: TestFrames.Scene) {
        var detector = Self.detector(10)
        let still = scene.pixels
        let reports = Self.run(&detector, count: 90, seed: 7) { _ in still }
        #expect(reports.filter(\.isMotion).isEmpty)
        #expect(reports.map(\.changedCells).max()! == 0)
        var whole = Self.detector(10, zones: ZoneList())
        #expect(Self.run(&whole, count: 90, seed: 8) { _ in still }.filter(\.isMotion).isEmpty)
    }

    @Test("at sensitivity 1 the block is smaller than the minimum area: nothing; at 5 and 10 it is motion")
    func sensitivityArea() {
        let still = TestFrames.Scene.grey.pixels
        var low = Self.detector(1)
        let lowReports = Self.run(&low, count: 40) { Self.movingBlock(still, frame: $0) }
        #expect(lowReports.filter(\.isMotion).isEmpty)
        // The block did change cells: fewer than the 6 % of zone A's 1080 cells sensitivity 1 needs.
        let changed = lowReports.compactMap { $0.zones.first?.changedCells }.max() ?? 0
        #expect(changed > 2 && changed < 65)
        #expect(lowReports[20].zones.first?.requiredCells == 65)
        for level in [5, 10] {
            var detector = Self.detector(level)
            #expect(Self.run(&detector, count: 40) { Self.movingBlock(still, frame: $0) }[20].zones.first?.isMotion == true)
        }
    }

    @Test("one odd frame is not motion (two in a row are needed)")
    func glitch() {
        let still = TestFrames.Scene.testPattern.pixels
        var detector = Self.detector(10)
        let reports = Self.run(&detector, count: 30) { i in i == 12 ? Self.movingBlock(still, frame: 12, from: 0, width: 100, height: 80) : still }
        #expect(reports[12].zones.first!.changedCells >= reports[12].zones.first!.requiredCells)
        #expect(reports.filter(\.isMotion).isEmpty)
    }

    @Test("something that arrives and stays is motion at first, then becomes background within 30 s")
    func absorbed() throws {
        let still = TestFrames.Scene.grey.pixels
        var withBlock = still
        TestFrames.block(&withBlock, x: 100, y: 60, width: 64, height: 36, bgr: (0, 0, 0))
        var detector = Self.detector(5, zones: ZoneList())
        var generator = SeededGenerator(seed: 3)
        var lastMotion: Int?
        // 10 fps for 40 s; the block appears at 1 s.
        for i in 0..<400 {
            var pixels = i < 10 ? still : withBlock
            TestFrames.addNoise(&pixels, generator: &generator)
            let time = Self.t0 + UInt64(i) * 100_000_000
            let report = detector.process(TestFrames.frame(pixels, time: time), now: time)
            if i == 11 { #expect(report.isMotion && report.zones.first?.zoneID == nil) }
            if report.isMotion { lastMotion = i }
        }
        let last = try #require(lastMotion)
        #expect(last > 50 && last < 300, "motion until frame \(last)")
    }

    @Test("new zones apply from the next frame and keep the background; no zones reports the whole picture")
    func changingZones() {
        let still = TestFrames.Scene.testPattern.pixels
        var detector = Self.detector(5, zones: ZoneList())
        // A block twice the usual size: the whole picture needs 35 changed cells at sensitivity 5.
        var reports = Self.run(&detector, count: 20) { Self.movingBlock(still, frame: $0, width: 64, height: 36) }
        #expect(reports[15].zones.map(\.zoneID) == [nil] && reports[15].isMotion)
        #expect(reports[15].zones.first?.cells == 64 * 36)
        detector.setZones(Self.zones)
        // The block keeps moving in zone A: motion in A again after the two frames that confirm it, none in B.
        reports = Self.run(&detector, count: 20) { Self.movingBlock(still, frame: $0 + 20, width: 64, height: 36) }
        #expect(reports[0].zones.map(\.zoneID) == [1, 2])
        #expect(reports[0].changedCells > 0)  // the background stayed: no restart
        #expect(reports[1].zonesWithMotion == [1])
        #expect(!reports.contains { $0.zones[1].isMotion })
    }

    @Test("frames that are not BGRA or RGBA, or smaller than the grid, are skipped")
    func unsupportedFrames() {
        var detector = Self.detector(5)
        let yuyv = VideoFrame(width: 320, height: 180, bytesPerRow: 640, pixelFormat: .yuyv, data: [UInt8](repeating: 0, count: 640 * 180), captureTime: 0)
        #expect(detector.process(yuyv, now: 0).zones.isEmpty)
        let tiny = VideoFrame(width: 32, height: 18, bytesPerRow: 128, data: [UInt8](repeating: 0, count: 128 * 18), captureTime: 0)
        #expect(detector.process(tiny, now: 0).zones.isEmpty)
    }

    @Test("the luma grid averages each cell; sensitivities are clamped to 1...10 and stored as their level")
    func gridAndSensitivity() throws {
        var pixels = [UInt8](repeating: 0, count: 320 * 180 * 4)
        TestFrames.block(&pixels, x: 0, y: 0, width: 5, height: 5, bgr: (255, 255, 255))
        let grid = try #require(LumaGrid(frame: TestFrames.frame(pixels, time: 0), columns: 64, rows: 36))
        #expect(grid.values[0] > 254 && grid.values[1] == 0 && grid.values[64] == 0)
        #expect(LumaGrid.samplingStep(width: 1280, height: 720, columns: 64, rows: 36) == 3)
        #expect(LumaGrid.samplingStep(width: 1920, height: 1080, columns: 64, rows: 36) == 5)

        #expect(MotionSensitivity(0) == .low && MotionSensitivity(11) == .high)
        let levels = (1...10).map(MotionSensitivity.init)
        #expect(zip(levels, levels.dropFirst()).allSatisfy { $0.cellThreshold > $1.cellThreshold && $0.areaFraction > $1.areaFraction })
        #expect(MotionSensitivity.high.requiredCells(of: 100) == 2)
        #expect(MotionSensitivity.medium.requiredCells(of: 2304) == 35)
    }
}
