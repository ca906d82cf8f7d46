import CamoMedia
import Dispatch
import Foundation
import Logging
import Synchronization

/// The live preview window: the newest frame, scaled to fit, with a line of figures over its top-left corner.
///
/// The window runs SDL2 on one thread of its own, because SDL's video calls must stay on the thread that
/// initialised video: that thread opens SDL, the window, its renderer and texture, draws, handles the window's
/// events and closes everything again. Other threads only talk to it through a locked state and a wake-up event
/// (SDL_PushEvent is thread-safe), so ``show(_:figures:)`` can be called from any thread and never waits for drawing.
///
/// One window per process at a time (SDL's video belongs to one thread); ``close()`` must be called before the
/// window is let go.
///
/// ```swift
/// let preview = try PreviewWindow(title: "Camo — desk", logger: logger)
/// preview.onClose = { stop() }
/// preview.show(frame, figures: PreviewFigures(fps: 29.9, kbitPerSecond: 4200, latencyMs: 41, state: "streaming"))
/// preview.close()
/// ```
///
/// `Sendable` without `@unchecked`: every mutable part is inside one `Mutex`, and the SDL objects are local
/// to the window's thread.
public final class PreviewWindow: Sendable {
    /// The window's title.
    public let title: String

    private enum Phase {
        /// The thread is drawing.
        case running
        /// ``close()`` was called; the thread is ending. Nothing is pushed to SDL any more.
        case closing
        /// The thread ended (or never started) and SDL's video is shut down.
        case closed
    }

    private struct State {
        var phase = Phase.running
        /// The mailbox of one: the newest frame not yet drawn.
        var pending: (frame: VideoFrame, figures: PreviewFigures)?
        /// A wake-up event is queued for a frame; no need for another.
        var wakePending = false
        /// The user closed the window; it is hidden and frames are discarded.
        var userClosed = false
        var statistics = PreviewStatistics()
        var onClose: (@Sendable () -> Void)?
        var snapshotWaiters: [CheckedContinuation<VideoFrame?, Never>] = []
        /// The window's thread, once it has started.
        var sdlThread: pthread_t?
        /// Why the thread could not open the window.
        var startError: PreviewError?
    }

    /// Whether a preview window is open in this process.
    private static let windowOpen = Mutex(false)
    /// How long the thread waits for an event before it looks at the state anyway, ms.
    private static let pollMilliseconds: Int32 = 100
    private static let background = PreviewColor(red: 0, green: 0, blue: 0)
    private static let barColor = PreviewColor(red: 0, green: 0, blue: 0, alpha: 160)
    private static let textColor = PreviewColor(red: 255, green: 255, blue: 255)

    private let state = Mutex(State())
    /// Left when the thread has ended; ``close()`` waits for it.
    private let finished = DispatchGroup()
    private let logger: Logger

    /// Opens SDL's video and a hidden window; the window appears with the first frame, sized to fit it within
    /// 1280x720.
    /// - Parameters:
    ///   - title: the window's title, e.g. `Camo — desk`.
    ///   - logger: where the window logs opening, closing and frames it cannot draw.
    /// - Throws: ``PreviewError/noDisplay(sdlMessage:)`` when there is no display to show a window on,
    ///   ``PreviewError/alreadyOpen`` when another preview window is open, ``PreviewError/sdl(call:sdlMessage:)``
    ///   when SDL fails otherwise.
    public convenience init(title: String, logger: Logger) throws(PreviewError) {
        try self.init(title: title, logger: logger, videoDriver: nil)
    }

    /// Opens the window with SDL's video driver `videoDriver` (tests: `offscreen`), or SDL's choice when nil.
    init(title: String, logger: Logger, videoDriver: String?) throws(PreviewError) {
        self.title = title
        self.logger = logger
        try Self.windowOpen.withLock { (open) throws(PreviewError) in
            guard !open else { throw .alreadyOpen }
            open = true
        }
        let started = DispatchSemaphore(value: 0)
        finished.enter()
        let thread = Thread { [self] in
            run(videoDriver: videoDriver, started: started)
        }
        thread.name = "camo-preview"
        thread.start()
        started.wait()
        if let error = state.withLock({ $0.startError }) { throw error }
    }

    /// Called once, on the window's thread, when the user closes the window (its close button, or the q or
    /// Escape key). The window hides itself and discards frames from then on; the owner should call ``close()``
    /// (which may be called from here).
    public var onClose: (@Sendable () -> Void)? {
        get { state.withLock { $0.onClose } }
        set { state.withLock { $0.onClose = newValue } }
    }

    /// What happened to the frames shown so far.
    public var statistics: PreviewStatistics { state.withLock { $0.statistics } }

    /// Hands `frame` (BGRA) and its `figures` to the window's thread; any thread, never waits.
    ///
    /// A frame not yet drawn when the next one arrives is replaced by it (counted in
    /// ``PreviewStatistics/replaced``). After ``close()``, or once the user closed the window, frames are discarded.
    public func show(_ frame: VideoFrame, figures: PreviewFigures) {
        state.withLock { state in
            state.statistics.shown += 1
            guard state.phase == .running, !state.userClosed else {
                state.statistics.discarded += 1
                return
            }
            if state.pending != nil { state.statistics.replaced += 1 }
            state.pending = (frame, figures)
            if !state.wakePending {
                // Pushed under the lock so that it cannot race SDL's shutdown, which waits for phase `.closing`.
                state.wakePending = SDLWindow.pushWake()
            }
        }
    }

    /// Closes the window: ends its thread, which destroys the texture, renderer and window and shuts SDL's video
    /// down. Idempotent; waits for the thread unless called on it (from ``onClose``), in which case the thread
    /// ends right after ``onClose`` returns.
    public func close() {
        let onWindowThread = state.withLock { state -> Bool in
            if state.phase == .running {
                state.phase = .closing
                SDLWindow.pushWake()
            }
            guard let thread = state.sdlThread else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }
        if !onWindowThread { finished.wait() }
    }

    /// The window's output as last drawn, BGRA at the window's size (drawn again and read with
    /// SDL_RenderReadPixels on the window's thread, after any frame waiting in the mailbox); nil once closed.
    func snapshot() async -> VideoFrame? {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                guard state.phase == .running else { return continuation.resume(returning: nil) }
                state.snapshotWaiters.append(continuation)
                SDLWindow.pushWake()
            }
        }
    }

    /// Queues SDL_QUIT as if the user closed the window (tests).
    func pushQuitEvent() {
        state.withLock { state in
            if state.phase == .running { SDLWindow.pushQuit() }
        }
    }

    // MARK: The window's thread

    /// What the thread takes from the state each time round.
    private struct Work {
        var stop = false
        var next: (frame: VideoFrame, figures: PreviewFigures)?
        var snapshotWaiters: [CheckedContinuation<VideoFrame?, Never>] = []
        /// The user just closed the window: hide it and call this (if set).
        var userJustClosed = false
        var onClose: (@Sendable () -> Void)?
    }

    /// The thread: opens SDL and the window, reports to `started`, draws until ``close()``, closes everything.
    private func run(videoDriver: String?, started: DispatchSemaphore) {
        let window: SDLWindow
        do {
            window = try SDLWindow.open(title: title, size: PreviewLayout.largestWindow, videoDriver: videoDriver)
        } catch {
            state.withLock {
                $0.phase = .closed
                $0.startError = error
            }
            Self.windowOpen.withLock { $0 = false }
            finished.leave()
            started.signal()
            return
        }
        state.withLock { $0.sdlThread = pthread_self() }
        logger.info(
            "Preview window open",
            metadata: ["title": "\(title)", "driver": "\(window.driverName)", "renderer": "\(window.rendererName)"])
        started.signal()

        drawUntilClosed(window)

        window.destroy()
        let waiters = state.withLock { state in
            state.phase = .closed
            if state.pending != nil { state.statistics.discarded += 1 }
            state.pending = nil
            // An onClose that captures this window would otherwise keep it alive forever.
            state.onClose = nil
            defer { state.snapshotWaiters = [] }
            return state.snapshotWaiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        let statistics = self.statistics
        logger.info(
            "Preview window closed",
            metadata: [
                "shown": "\(statistics.shown)", "drawn": "\(statistics.drawn)", "replaced": "\(statistics.replaced)",
                "discarded": "\(statistics.discarded)",
            ])
        Self.windowOpen.withLock { $0 = false }
        finished.leave()
    }

    /// The thread's loop: waits for events, draws the newest frame, answers snapshots, until ``close()``.
    private func drawUntilClosed(_ window: SDLWindow) {
        var figures: PreviewFigures?
        var visible = false
        var uploadFailed = false
        while true {
            let events = window.waitEvents(timeoutMilliseconds: Self.pollMilliseconds)
            let closeRequested = events.contains(.closeRequested)
            let work = state.withLock { state -> Work in
                state.wakePending = false
                guard state.phase == .running else { return Work(stop: true) }
                var work = Work()
                if closeRequested && !state.userClosed {
                    state.userClosed = true
                    work.userJustClosed = true
                    work.onClose = state.onClose
                    if state.pending != nil { state.statistics.discarded += 1 }
                    state.pending = nil
                }
                work.next = state.pending
                state.pending = nil
                work.snapshotWaiters = state.snapshotWaiters
                state.snapshotWaiters = []
                return work
            }
            if work.stop { return }

            var draw = events.contains(.redraw) || !work.snapshotWaiters.isEmpty
            var drawn = false
            var textureCreated = false
            if let next = work.next {
                do {
                    textureCreated = try window.upload(next.frame)
                    figures = next.figures
                    drawn = true
                    draw = true
                    if !visible {
                        window.show(size: PreviewLayout.initialWindowSize(for: next.frame.size))
                        visible = true
                    }
                } catch {
                    if !uploadFailed {
                        logger.error("The preview cannot draw a frame", metadata: ["error": "\(error)"])
                        uploadFailed = true
                    }
                }
            }
            var snapshot: VideoFrame?
            if draw {
                render(window, figures: figures)
                if !work.snapshotWaiters.isEmpty { snapshot = window.readPixels() }
                window.present()
            }
            let pictureSize = window.textureSize
            state.withLock { state in
                if work.next != nil {
                    if drawn { state.statistics.drawn += 1 } else { state.statistics.discarded += 1 }
                }
                if textureCreated { state.statistics.textureCreations += 1 }
                state.statistics.pictureSize = pictureSize
            }
            for waiter in work.snapshotWaiters { waiter.resume(returning: snapshot) }
            if work.userJustClosed {
                logger.info("The preview window was closed by its user")
                window.hide()
                work.onClose?()
            }
        }
    }

    /// Draws the picture letterboxed in the output and the figures' bar over its top-left corner.
    private func render(_ window: SDLWindow, figures: PreviewFigures?) {
        window.clear(Self.background)
        let output = window.outputSize()
        if let pictureSize = window.textureSize {
            window.drawPicture(in: PreviewLayout.pictureRect(picture: pictureSize, output: output))
        }
        guard let figures else { return }
        let text = figures.overlayText
        window.fill([PreviewLayout.barRect(for: text)], color: Self.barColor)
        let origin = PreviewLayout.textOrigin
        window.fill(
            OverlayFont.rects(for: text, x: origin.x, y: origin.y, scale: PreviewLayout.textScale), color: Self.textColor)
    }
}
