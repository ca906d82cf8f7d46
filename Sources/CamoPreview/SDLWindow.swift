import CSDL2
import CamoMedia
import Foundation

/// A colour with alpha, 8 bits a channel.
struct PreviewColor: Sendable, Hashable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8
    var alpha: UInt8 = 255
}

/// What the preview's loop needs to know of SDL's events.
enum SDLWindowEvent: Sendable, Equatable {
    /// The user asked to close: the window's close button, SDL_QUIT, or the q or Escape key.
    case closeRequested
    /// The window must be drawn again (exposed or resized).
    case redraw
    /// ``SDLWindow/pushWake()`` was called from another thread.
    case wake
}

/// The SDL2 calls of the preview: the video subsystem, one window, its renderer and one streaming texture.
///
/// Not Sendable on purpose: apart from the static `push…` methods (SDL_PushEvent is thread-safe), every method
/// must run on the thread that called ``open(title:size:videoDriver:)``, because SDL's video calls must stay on
/// the thread that initialised video. ``destroy()`` must be called before the last reference goes.
final class SDLWindow {
    private let window: OpaquePointer
    private let renderer: OpaquePointer
    private var texture: OpaquePointer?
    /// The size of the texture, or nil before the first upload.
    private(set) var textureSize: VideoSize?
    /// The video driver SDL chose, e.g. `x11`, `wayland`, `offscreen`.
    let driverName: String
    /// The renderer SDL chose, e.g. `opengl`, `software`.
    let rendererName: String
    private var destroyed = false

    /// Frames are BGRA in memory: SDL_PIXELFORMAT_BGRA32 names that byte order on any host (it is
    /// SDL_PIXELFORMAT_ARGB8888 on little-endian ones).
    private static let pixelFormat = SDL_PIXELFORMAT_BGRA32.rawValue

    private init(window: OpaquePointer, renderer: OpaquePointer, driverName: String, rendererName: String) {
        self.window = window
        self.renderer = renderer
        self.driverName = driverName
        self.rendererName = rendererName
    }

    deinit {
        assert(destroyed, "SDLWindow released without destroy()")
    }

    /// Initialises SDL's video on the calling thread and opens a hidden, resizable window of `size` with a renderer.
    /// - Parameter videoDriver: SDL's video driver to use (tests: `offscreen`); nil lets SDL choose, and then SDL's
    ///   offscreen and dummy drivers count as no display (SDL 2.26 falls back to offscreen when no display works),
    ///   unless the SDL_VIDEODRIVER environment variable asks for them.
    static func open(title: String, size: VideoSize, videoDriver: String?) throws(PreviewError) -> SDLWindow {
        // SDL would turn SIGINT and SIGTERM into SDL_QUIT; the program handles its own signals.
        SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        if let videoDriver {
            SDL_SetHint(SDL_HINT_VIDEODRIVER, videoDriver)
        } else {
            SDL_ResetHint(SDL_HINT_VIDEODRIVER)
        }
        guard SDL_InitSubSystem(SDL_INIT_VIDEO) == 0 else { throw .noDisplay(sdlMessage: lastError()) }
        let driverName = SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? "none"
        if videoDriver == nil, getenv("SDL_VIDEODRIVER") == nil, ["offscreen", "dummy"].contains(driverName) {
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw .noDisplay(sdlMessage: "no video driver but \(driverName) works, which shows nothing")
        }
        let centered = camo_sdl_windowpos_centered()
        let flags = SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_HIDDEN.rawValue
        guard let window = SDL_CreateWindow(title, centered, centered, Int32(size.width), Int32(size.height), flags) else {
            let message = lastError()
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw .sdl(call: "SDL_CreateWindow", sdlMessage: message)
        }
        guard let renderer = SDL_CreateRenderer(window, -1, 0) else {
            let message = lastError()
            SDL_DestroyWindow(window)
            SDL_QuitSubSystem(SDL_INIT_VIDEO)
            throw .sdl(call: "SDL_CreateRenderer", sdlMessage: message)
        }
        var info = SDL_RendererInfo()
        let rendererName = SDL_GetRendererInfo(renderer, &info) == 0 && info.name != nil ? String(cString: info.name) : "unknown"
        return SDLWindow(window: window, renderer: renderer, driverName: driverName, rendererName: rendererName)
    }

    /// SDL_GetError()'s text.
    private static func lastError() -> String {
        String(cString: SDL_GetError())
    }

    /// Resizes the window to `size`, centres it and shows it.
    func show(size: VideoSize) {
        SDL_SetWindowSize(window, Int32(size.width), Int32(size.height))
        let centered = camo_sdl_windowpos_centered()
        SDL_SetWindowPosition(window, centered, centered)
        SDL_ShowWindow(window)
    }

    /// Hides the window.
    func hide() {
        SDL_HideWindow(window)
    }

    /// The size of the renderer's output in pixels (the window's drawable area).
    func outputSize() -> VideoSize {
        var width: Int32 = 0
        var height: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &width, &height)
        return VideoSize(width: Int(width), height: Int(height))
    }

    /// Copies `frame`'s BGRA pixels into the texture, making a new texture first when the size changed.
    /// - Returns: whether a new texture was made.
    /// - Throws: when the frame is not BGRA or has too few bytes for its size, or SDL refuses.
    func upload(_ frame: VideoFrame) throws(PreviewError) -> Bool {
        guard frame.pixelFormat == .bgra, frame.width > 0, frame.height > 0, frame.bytesPerRow >= frame.width * 4,
            frame.data.count >= frame.bytesPerRow * (frame.height - 1) + frame.width * 4
        else {
            throw .sdl(call: "SDL_UpdateTexture", sdlMessage: "not a whole BGRA frame of \(frame.size)")
        }
        var created = false
        if textureSize != frame.size || texture == nil {
            if let texture { SDL_DestroyTexture(texture) }
            texture = nil
            textureSize = nil
            guard
                let made = SDL_CreateTexture(
                    renderer, Self.pixelFormat, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue),
                    Int32(frame.width), Int32(frame.height))
            else {
                throw .sdl(call: "SDL_CreateTexture", sdlMessage: Self.lastError())
            }
            SDL_SetTextureScaleMode(made, SDL_ScaleModeLinear)
            texture = made
            textureSize = frame.size
            created = true
        }
        let result = frame.data.withUnsafeBytes { bytes in
            SDL_UpdateTexture(texture, nil, bytes.baseAddress, Int32(frame.bytesPerRow))
        }
        guard result == 0 else { throw .sdl(call: "SDL_UpdateTexture", sdlMessage: Self.lastError()) }
        return created
    }

    /// Fills the whole output with `color`.
    func clear(_ color: PreviewColor) {
        SDL_SetRenderDrawColor(renderer, color.red, color.green, color.blue, color.alpha)
        SDL_RenderClear(renderer)
    }

    /// Draws the texture (if any) stretched into `rect`.
    func drawPicture(in rect: PixelRect) {
        guard let texture else { return }
        var destination = Self.sdlRect(rect)
        SDL_RenderCopy(renderer, texture, nil, &destination)
    }

    /// Fills `rects` with `color`, blended by its alpha.
    func fill(_ rects: [PixelRect], color: PreviewColor) {
        guard !rects.isEmpty else { return }
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
        SDL_SetRenderDrawColor(renderer, color.red, color.green, color.blue, color.alpha)
        let sdlRects = rects.map(Self.sdlRect)
        SDL_RenderFillRects(renderer, sdlRects, Int32(sdlRects.count))
    }

    /// The output as drawn so far (before ``present()``), as a BGRA frame; nil when SDL cannot read it.
    func readPixels() -> VideoFrame? {
        let size = outputSize()
        guard size.width > 0, size.height > 0 else { return nil }
        var data = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let result = data.withUnsafeMutableBytes { bytes in
            SDL_RenderReadPixels(renderer, nil, Self.pixelFormat, bytes.baseAddress, Int32(size.width * 4))
        }
        guard result == 0 else { return nil }
        return VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: data, captureTime: 0)
    }

    /// Shows what was drawn.
    func present() {
        SDL_RenderPresent(renderer)
    }

    /// Waits up to `timeoutMilliseconds` for an event, then takes every queued one.
    func waitEvents(timeoutMilliseconds: Int32) -> [SDLWindowEvent] {
        var event = SDL_Event()
        guard SDL_WaitEventTimeout(&event, timeoutMilliseconds) == 1 else { return [] }
        var events: [SDLWindowEvent] = []
        repeat {
            if let translated = Self.translate(event) { events.append(translated) }
        } while SDL_PollEvent(&event) == 1
        return events
    }

    private static func translate(_ event: SDL_Event) -> SDLWindowEvent? {
        switch event.type {
        case SDL_QUIT.rawValue:
            return .closeRequested
        case SDL_USEREVENT.rawValue:
            return .wake
        case SDL_KEYDOWN.rawValue:
            let key = event.key.keysym.sym
            return key == Int32(SDLK_q.rawValue) || key == Int32(SDLK_ESCAPE.rawValue) ? .closeRequested : nil
        case SDL_WINDOWEVENT.rawValue:
            switch UInt32(event.window.event) {
            case SDL_WINDOWEVENT_CLOSE.rawValue: return .closeRequested
            case SDL_WINDOWEVENT_EXPOSED.rawValue, SDL_WINDOWEVENT_SIZE_CHANGED.rawValue: return .redraw
            default: return nil
            }
        default:
            return nil
        }
    }

    /// Wakes the thread in ``waitEvents(timeoutMilliseconds:)``; any thread, while the window is open.
    /// - Returns: false when SDL's queue refused the event.
    @discardableResult
    static func pushWake() -> Bool {
        var event = SDL_Event()
        event.type = SDL_USEREVENT.rawValue
        return SDL_PushEvent(&event) == 1
    }

    /// Queues SDL_QUIT as if the user had closed the window (tests); any thread, while the window is open.
    static func pushQuit() {
        var event = SDL_Event()
        event.type = SDL_QUIT.rawValue
        SDL_PushEvent(&event)
    }

    /// Destroys the texture, renderer and window and ends SDL's video; idempotent.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if let texture { SDL_DestroyTexture(texture) }
        texture = nil
        textureSize = nil
        SDL_DestroyRenderer(renderer)
        SDL_DestroyWindow(window)
        SDL_QuitSubSystem(SDL_INIT_VIDEO)
    }

    private static func sdlRect(_ rect: PixelRect) -> SDL_Rect {
        SDL_Rect(x: Int32(clamping: rect.x), y: Int32(clamping: rect.y), w: Int32(clamping: rect.width), h: Int32(clamping: rect.height))
    }
}
