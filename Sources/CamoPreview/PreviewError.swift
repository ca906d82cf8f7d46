/// Why the preview window could not open.
public enum PreviewError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SDL found no display to open a window on; `sdlMessage` is SDL_GetError()'s text.
    case noDisplay(sdlMessage: String)
    /// An SDL call failed; `sdlMessage` is SDL_GetError()'s text.
    case sdl(call: String, sdlMessage: String)
    /// Another preview window is open in this process; SDL's video runs on one thread, so there is one at a time.
    case alreadyOpen

    public var description: String {
        switch self {
        case .noDisplay(let message):
            "No display for the preview window (SDL: \(message)). Run without --preview, or set DISPLAY (X11) or WAYLAND_DISPLAY (Wayland) to a display this user may use."
        case .sdl(let call, let message):
            "The preview window could not be opened: \(call) failed (SDL: \(message))."
        case .alreadyOpen:
            "A preview window is open already; this process shows one at a time."
        }
    }
}
