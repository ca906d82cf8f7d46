import CamoMedia
import Testing

@Suite("Night vision auto: when the IR light goes on and off")
struct NightVisionAutoTests {
    static let second: UInt64 = 1_000_000_000
    /// A start time well away from 0, as CLOCK_MONOTONIC is.
    static let start: UInt64 = 1_000 * second

    /// Feeds `luma(t)` every `interval` ns from `from` (ns after start) up to and including `to`, and returns the first
    /// time (ns after start) at which the answer differed from the state before, or nil.
    static func feed(
        _ auto: inout NightVisionAuto, from: UInt64 = 0, to: UInt64, every interval: UInt64 = second / 10,
        _ luma: (UInt64) -> Double
    ) -> UInt64? {
        let before = auto.isOn
        var flipped: UInt64?
        var t = from
        while t <= to {
            if auto.update(time: start + t, meanLuma: luma(t)) != before, flipped == nil { flipped = t }
            t += interval
        }
        return flipped
    }

    /// One measurement (a mutating call cannot sit inside #expect).
    static func measure(_ auto: inout NightVisionAuto, _ time: UInt64, _ luma: Double) -> Bool {
        auto.update(time: time, meanLuma: luma)
    }

    @Test("a dark scene turns night vision on after 2 s, not before")
    func darkTurnsOn() {
        var auto = NightVisionAuto()
        #expect(Self.feed(&auto, to: 1_900_000_000) { _ in 10 } == nil)
        #expect(!auto.isOn)
        #expect(Self.measure(&auto, Self.start + 2 * Self.second, 10))
        #expect(auto.isOn)
    }

    @Test("flicker around the threshold, or single dark or bright frames, do not toggle it")
    func flicker() {
        var auto = NightVisionAuto()
        // Dark and bright frames alternating for 10 s.
        #expect(Self.feed(&auto, to: 10 * Self.second) { t in (t / (Self.second / 10)) % 2 == 0 ? 5 : 120 } == nil)
        // A dark scene with one bright frame every 1.5 s never stays dark for 2 s.
        #expect(Self.feed(&auto, from: 11 * Self.second, to: 20 * Self.second) { t in t % (3 * Self.second / 2) == 0 ? 200 : 5 } == nil)
        #expect(!auto.isOn)
        // Once on, one bright frame (a flash) in a dark scene does not turn it off.
        var on = NightVisionAuto(isOn: true)
        #expect(Self.feed(&on, to: 10 * Self.second) { t in t == 3 * Self.second ? 250 : 50 } == nil)
        #expect(on.isOn)
    }

    @Test("a bright scene turns it off after 5 s; a scene between the thresholds keeps it on")
    func brightTurnsOff() {
        var auto = NightVisionAuto(isOn: true)
        // The IR light lifts the dark scene to 60: between 40 and 90, so it stays on.
        #expect(Self.feed(&auto, to: 30 * Self.second) { _ in 60 } == nil)
        // Daylight.
        #expect(Self.feed(&auto, from: 31 * Self.second, to: 40 * Self.second) { _ in 150 } == 36 * Self.second)
        #expect(!auto.isOn)
        // And a scene between the thresholds keeps it off too.
        #expect(Self.feed(&auto, from: 41 * Self.second, to: 60 * Self.second) { _ in 60 } == nil)
    }

    @Test("a gap of more than 2 s between measurements restarts the wait")
    func gapResets() {
        var auto = NightVisionAuto()
        #expect(!Self.measure(&auto, Self.start, 10))
        #expect(!Self.measure(&auto, Self.start + Self.second, 10))
        // 2.5 s without measurements, then dark again: the wait starts over from here.
        #expect(!Self.measure(&auto, Self.start + 3_500_000_000, 10))
        #expect(!Self.measure(&auto, Self.start + 5_000_000_000, 10))
        #expect(Self.measure(&auto, Self.start + 5_500_000_000, 10))
        // A gap of exactly 2 s keeps the wait going (slow measurements are fine).
        var slow = NightVisionAuto()
        #expect(!Self.measure(&slow, Self.start, 10))
        #expect(Self.measure(&slow, Self.start + 2 * Self.second, 10))
        // Time going backwards restarts it too.
        var backwards = NightVisionAuto()
        #expect(!Self.measure(&backwards, Self.start + 5 * Self.second, 10))
        #expect(!Self.measure(&backwards, Self.start + 4 * Self.second, 10))
        #expect(!Self.measure(&backwards, Self.start + 5_900_000_000, 10))
        #expect(Self.measure(&backwards, Self.start + 6 * Self.second, 10))
    }

    @Test("reset forgets the wait but keeps the state; the thresholds can be changed")
    func resetAndConfiguration() {
        var auto = NightVisionAuto()
        _ = Self.feed(&auto, to: Self.second + Self.second / 2) { _ in 10 }
        auto.reset()
        #expect(auto.pendingSince == nil && auto.lastTime == nil)
        #expect(!Self.measure(&auto, Self.start + 2 * Self.second, 10))
        let quick = NightVisionAuto.Configuration(onBelow: 20, onAfter: .milliseconds(500), offAbove: 100, offAfter: .seconds(1))
        var custom = NightVisionAuto(configuration: quick)
        #expect(Self.feed(&custom, to: 2 * Self.second) { _ in 30 } == nil)
        #expect(Self.feed(&custom, from: 3 * Self.second, to: 4 * Self.second) { _ in 19 } == 3_500_000_000)
    }

    // MARK: meanLuma

    static func solid(width: Int, height: Int, b: UInt8, g: UInt8, r: UInt8, padding: Int = 0, format: PixelFormat = .bgra) -> VideoFrame {
        let bytesPerRow = 4 * width + padding
        var data = [UInt8](repeating: 0xEE, count: bytesPerRow * height)  // padding bytes that must not count
        for y in 0..<height {
            for x in 0..<width {
                let offset = y * bytesPerRow + 4 * x
                data[offset] = format == .bgra ? b : r
                data[offset + 1] = g
                data[offset + 2] = format == .bgra ? r : b
                data[offset + 3] = 255
            }
        }
        return VideoFrame(width: width, height: height, bytesPerRow: bytesPerRow, pixelFormat: format, data: data, captureTime: 0)
    }

    @Test("meanLuma of solid colours: black 0, white 255, green 0.587 × 255, red and blue by BT.601")
    func solidColours() {
        let cases: [(b: UInt8, g: UInt8, r: UInt8, luma: Double)] = [
            (0, 0, 0, 0), (255, 255, 255, 255), (0, 255, 0, 0.587 * 255), (0, 0, 255, 0.299 * 255), (255, 0, 0, 0.114 * 255),
            (128, 128, 128, 128),
        ]
        for c in cases {
            let frame = Self.solid(width: 64, height: 48, b: c.b, g: c.g, r: c.r, padding: 12)
            #expect(abs(NightVisionAuto.meanLuma(frame) - c.luma) < 1, "b \(c.b) g \(c.g) r \(c.r)")
            #expect(abs(NightVisionAuto.meanLuma(frame, step: 1) - c.luma) < 1)
        }
        let rgbaRed = Self.solid(width: 16, height: 16, b: 0, g: 0, r: 255, format: .rgba)
        #expect(abs(NightVisionAuto.meanLuma(rgbaRed) - 0.299 * 255) < 1)
    }

    @Test("meanLuma samples a grid: half a frame dark, half bright averages between; at 1080p it takes 32,400 samples")
    func grid() {
        // Left half black, right half white.
        var data = [UInt8](repeating: 0, count: 4 * 1920 * 1080)
        for y in 0..<1080 {
            data.replaceSubrange((y * 7680 + 3840)..<((y + 1) * 7680), with: repeatElement(255, count: 3840))
        }
        let frame = VideoFrame(width: 1920, height: 1080, bytesPerRow: 4 * 1920, data: data, captureTime: 0)
        #expect(abs(NightVisionAuto.meanLuma(frame) - 127.5) < 1)
        // One bright pixel off the grid is not seen; on the grid (4, 4) it is one sample of 32,400.
        var dark = VideoFrame(width: 1920, height: 1080, bytesPerRow: 4 * 1920, data: [UInt8](repeating: 0, count: 4 * 1920 * 1080), captureTime: 0)
        dark.data[0] = 255
        dark.data[1] = 255
        dark.data[2] = 255
        #expect(NightVisionAuto.meanLuma(dark) == 0)
        let onGrid = 4 * dark.bytesPerRow + 4 * 4
        dark.data[onGrid] = 255
        dark.data[onGrid + 1] = 255
        dark.data[onGrid + 2] = 255
        #expect(abs(NightVisionAuto.meanLuma(dark) - 255.0 / 32_400) < 1e-9)
    }

    @Test("meanLuma of an empty or short frame does not crash")
    func emptyFrames() {
        #expect(NightVisionAuto.meanLuma(VideoFrame(width: 0, height: 0, bytesPerRow: 0, data: [], captureTime: 0)) == 0)
        // Says 8x8 but holds one row: only the samples it holds count.
        let short = VideoFrame(width: 8, height: 8, bytesPerRow: 32, data: [UInt8](repeating: 255, count: 32 * 5), captureTime: 0)
        #expect(NightVisionAuto.meanLuma(short, step: 2) == 255)
    }
}
