/// What can go wrong with browser live view (WebRTC) and talkback; the descriptions are for the user.
public enum LiveViewError: Error, Sendable, Hashable, CustomStringConvertible {
    /// GStreamer elements live view needs are not installed; `packages` are the Debian packages that bring them.
    case missingElements(elements: [String], packages: [String])
    /// The browser's offer is not SDP we can read.
    case malformedOffer(String)
    /// The offer asks for no video.
    case noVideo
    /// The offer's video accepts no H.264.
    case noH264
    /// Setting up the connection failed or timed out.
    case negotiationFailed(String)
    /// No viewer has this id (it ended or never existed).
    case unknownViewer(String)
    /// No speaker is configured.
    case talkbackUnsupported
    /// Another viewer is talking.
    case talkerBusy(String)
    /// The viewer's browser does not send its microphone.
    case noMicrophoneInOffer
    /// The speaker output could not be opened.
    case speakerFailed(String)

    public var description: String {
        switch self {
        case .missingElements(let elements, let packages):
            "Browser live view needs GStreamer elements that are not installed (\(elements.joined(separator: ", "))). "
                + "Install them with: sudo apt install \(packages.joined(separator: " "))"
        case .malformedOffer(let reason):
            "The browser's connection offer could not be read (\(reason)). Reload the page and try again."
        case .noVideo:
            "The browser's offer asks for no video. Reload the page; if it persists, the page or browser does not request the camera stream."
        case .noH264:
            "The browser does not accept H.264 video, which this camera sends. Use a browser with H.264 support (Chrome, Firefox, Safari, Edge)."
        case .negotiationFailed(let reason):
            "The connection with the browser could not be set up (\(reason)). Reload the page; if it persists, check that the browser can reach this device."
        case .unknownViewer(let id):
            "No live viewer \"\(id)\": it has already ended. Reload the page to start a new one."
        case .talkbackUnsupported:
            "Talkback is off: this camera has no speaker output. Start the agent with --speaker auto (the default ALSA output) or --speaker DEVICE (an ALSA playback device; aplay -L lists them)."
        case .talkerBusy(let id):
            "Someone else is talking (viewer \"\(id)\"). Try again when they stop."
        case .noMicrophoneInOffer:
            "Your browser is not sending its microphone. Allow microphone access for this page and reload it."
        case .speakerFailed(let reason):
            "The speaker could not be opened (\(reason)). Check the speaker setting and that no other program holds the device."
        }
    }
}
