import CamoMedia
@testable import CamoPreview
import Foundation
import Logging
import Synchronization
import Testing

/// The window under SDL's offscreen video driver (no display here), read back with SDL_RenderReadPixels.
/// Serialized: SDL's video belongs to one thread, so one window is open at a time.
@Suite("PreviewWindow", .serialized, .timeLimit(.minutes(1)))
struct PreviewWindowTests {
    static let logger = Logger(label: "camo-preview-test") { _ in SwiftLogNoOpLogHandler() }

    static func openWindow() throws -> PreviewWindow {
        try PreviewWindow(title: "Camo — test", logger: logger, videoDriver: "offscreen")
    }

    /// Pixel (`x`, `y`) as 0xRRGGBB (alpha left out).
    static func rgb(_ frame: VideoFrame, _ x: Int, _ y: Int) -> UInt32 {
        let offset = y * frame.bytesPerRow + x * 4
        return UInt32(frame.data[offset]) | UInt32(frame.data[offset + 1]) << 8 | UInt32(frame.data[offset + 2]) << 16
    }

    /// Whether each channel of `got` is less than half of `original`'s (or `original`'s is already dark).
    static func isDarkened(_ got: UInt32, from original: UInt32) -> Bool {
        [0, 8, 16].allSatisfy { shift in
            let (channel, before) = ((got >> shift) & 0xFF, (original >> shift) & 0xFF)
            return channel * 2 < before || before < 40
        }
    }

    @Test("a test-pattern frame comes back pixel for pixel, with the figures' text drawn in its bar")
    func pictureAndOverlay() async throws {
        let window = try Self.openWindow()
        defer { window.close() }
        let frame = TestPattern.frame(number: 1, size: .hd720, captureTime: 0)
        let figures = PreviewFigures(fps: 30, state: "streaming")
        window.show(frame, figures: figures)
        let snapshot = try #require(await window.snapshot())
        #expect(snapshot.size == .hd720)

        let text = figures.overlayText
        #expect(text.hasPrefix("30.0 fps"))
        let bar = PreviewLayout.barRect(for: text)
        var differing = 0
        for y in 0..<frame.height {
            for x in 0..<frame.width where !bar.contains(x, y) {
                if Self.rgb(snapshot, x, y) != Self.rgb(frame, x, y) { differing += 1 }
            }
        }
        #expect(differing == 0, "pixels outside the bar that differ from the test pattern")

        // Inside the bar: white exactly where the font has ink, the picture darkened everywhere else.
        let bitmap = OverlayFont.bitmap(of: text)
        let scale = PreviewLayout.textScale
        let origin = PreviewLayout.textOrigin
        var wrongInk = 0
        var notDarkened = 0
        for y in bar.y..<(bar.y + bar.height) {
            for x in bar.x..<(bar.x + bar.width) {
                let (column, row) = ((x - origin.x) / scale, (y - origin.y) / scale)
                let ink = x >= origin.x && y >= origin.y && row < bitmap.count && column < bitmap[row].count && bitmap[row][column]
                let got = Self.rgb(snapshot, x, y)
                if ink {
                    if got != 0xFFFFFF { wrongInk += 1 }
                } else if !Self.isDarkened(got, from: Self.rgb(frame, x, y)) {
                    notDarkened += 1
                }
            }
        }
        #expect(wrongInk == 0, "ink pixels that are not white")
        #expect(notDarkened == 0, "bar pixels that are not darkened picture")
        #expect(window.statistics.drawn == 1)
        #expect(window.statistics.pictureSize == .hd720)
    }

    @Test("frames shown faster than they are drawn replace each other, and the newest is what shows")
    func mailbox() async throws {
        let window = try Self.openWindow()
        defer { window.close() }
        let size = VideoSize(width: 320, height: 180)
        let frames = (1...200).map { TestPattern.frame(number: UInt64($0), size: size, captureTime: 0) }
        for frame in frames { window.show(frame, figures: PreviewFigures(fps: 30, state: "streaming")) }
        // A snapshot is taken after the frame waiting in the mailbox is drawn.
        let snapshot = try #require(await window.snapshot())
        let statistics = window.statistics
        #expect(statistics.shown == 200)
        #expect(statistics.drawn + statistics.replaced == statistics.shown)
        #expect(statistics.drawn >= 1)
        #expect(statistics.discarded == 0)
        #expect(snapshot.size == size)
        #expect(TestPattern.readFrameNumber(snapshot) == 200)
    }

    @Test("a smaller frame after a larger one makes a new texture and fills the same window")
    func sizeChange() async throws {
        let window = try Self.openWindow()
        defer { window.close() }
        let figures = PreviewFigures(fps: 30, state: "streaming")
        window.show(TestPattern.frame(number: 1, size: .hd720, captureTime: 0), figures: figures)
        _ = await window.snapshot()
        let small = TestPattern.frame(number: 7, size: VideoSize(width: 640, height: 360), captureTime: 0)
        window.show(small, figures: figures)
        let snapshot = try #require(await window.snapshot())
        #expect(window.statistics.textureCreations == 2)
        #expect(window.statistics.pictureSize == VideoSize(width: 640, height: 360))
        #expect(snapshot.size == .hd720)

        // Scaled 2x: where the small frame is uniform around a pixel, the window shows that pixel's colour.
        let bar = PreviewLayout.barRect(for: figures.overlayText)
        var compared = 0
        var differing = 0
        for y in stride(from: 3, to: 357, by: 5) {
            for x in stride(from: 3, to: 637, by: 5) where !bar.contains(2 * x, 2 * y) {
                let colour = Self.rgb(small, x, y)
                let uniform = (-2...2).allSatisfy { dy in (-2...2).allSatisfy { dx in Self.rgb(small, x + dx, y + dy) == colour } }
                guard uniform else { continue }
                compared += 1
                if Self.rgb(snapshot, 2 * x, 2 * y) != colour { differing += 1 }
            }
        }
        #expect(compared > 1000)
        #expect(differing == 0)
        // The code band of the small frame is still readable at 2x.
        #expect(TestPattern.readFrameNumber(snapshot) == 7)
    }

    @Test("SDL_QUIT calls onClose once and hides the window; close is idempotent and frees SDL for the next window")
    func quitAndClose() async throws {
        let window = try Self.openWindow()
        let calls = Mutex(0)
        window.onClose = { calls.withLock { $0 += 1 } }
        window.show(TestPattern.frame(number: 1, size: VideoSize(width: 320, height: 180), captureTime: 0), figures: PreviewFigures(fps: 30, state: "streaming"))
        _ = await window.snapshot()  // frame 1 is drawn before the quit events arrive
        #expect(throws: PreviewError.alreadyOpen) { try Self.openWindow() }

        window.pushQuitEvent()
        window.pushQuitEvent()
        let deadline = ContinuousClock.now + .seconds(10)
        while calls.withLock({ $0 }) == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        _ = await window.snapshot()  // both quit events are handled by now
        #expect(calls.withLock { $0 } == 1)
        window.show(TestPattern.frame(number: 2, size: VideoSize(width: 320, height: 180), captureTime: 0), figures: PreviewFigures(fps: 30, state: "streaming"))
        #expect(window.statistics.discarded == 1)

        window.close()
        window.close()
        #expect(await window.snapshot() == nil)
        window.show(TestPattern.frame(number: 3, size: VideoSize(width: 320, height: 180), captureTime: 0), figures: PreviewFigures(fps: 30, state: "streaming"))
        #expect(window.statistics.shown == 3)
        #expect(window.statistics.discarded == 2)
        #expect(calls.withLock { $0 } == 1)

        let next = try Self.openWindow()
        next.close()
    }

    @Test("close called from onClose, on the window's own thread, ends the window without waiting for itself")
    func closeFromOnClose() async throws {
        let window = try Self.openWindow()
        let called = Mutex(false)
        window.onClose = {
            called.withLock { $0 = true }
            window.close()
        }
        window.pushQuitEvent()
        let deadline = ContinuousClock.now + .seconds(10)
        while !called.withLock({ $0 }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(called.withLock { $0 })
        #expect(await window.snapshot() == nil)
        window.close()  // waits for the thread, which must not have waited for itself
    }

    @Test("no usable video driver throws an error that says what to do")
    func noVideoDriver() throws {
        do {
            _ = try PreviewWindow(title: "Camo — test", logger: Self.logger, videoDriver: "nonexistent")
            Issue.record("the window opened")
        } catch {
            guard case .noDisplay(let message) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(message.contains("nonexistent"))
            #expect(error.description.contains("without --preview"))
            #expect(error.description.contains("DISPLAY"))
            #expect(error.description.contains("WAYLAND_DISPLAY"))
        }
        // The failed attempt released SDL.
        try Self.openWindow().close()
    }

    @Test(
        "without a display, SDL's own fallback to its offscreen driver counts as no display",
        .enabled(if: ["DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"].allSatisfy { ProcessInfo.processInfo.environment[$0] == nil }))
    func noDisplay() {
        let error = #expect(throws: PreviewError.self) {
            try PreviewWindow(title: "Camo — test", logger: Self.logger).close()
        }
        guard case .noDisplay(let message) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(message.contains("offscreen"))
    }
}
