/// One thing `camo-studio setup` did or found, reported as it happens. ``description`` is the line to print;
/// ``isWarning`` marks what the user should act on.
public enum SetupStep: Sendable, Equatable, CustomStringConvertible {
    /// A dry run: this command would run.
    case wouldRun([String])
    /// This command ran and succeeded.
    case ran([String])
    /// The camera is ready: the loopback device just made.
    case cameraReady(VideoNode)
    /// v4l2loopback was already loaded; `/dev/videoN` is one of its devices. Not reloaded: a program may be using it.
    case cameraAlreadyLoaded(LoopbackModuleState, device: VideoNode)
    /// The device was made without exclusive_caps=1, so Chrome will not list it.
    case exclusiveCapsOff(VideoNode)
    /// The device is ours but carries another label than the one asked for.
    case labelDiffers(VideoNode, requested: String)
    /// The microphone is ready: the snd-aloop card just made.
    case microphoneReady(LoopbackSoundCard)
    /// snd-aloop was already loaded with our card.
    case microphoneAlreadyLoaded(LoopbackSoundCard)
    /// snd-aloop was already loaded, but without a card named CamoMic.
    case microphoneOtherCards([LoopbackSoundCard])
    /// --no-microphone.
    case microphoneSkipped

    /// Whether the user should act on it.
    public var isWarning: Bool {
        switch self {
        case .exclusiveCapsOff, .labelDiffers, .microphoneOtherCards: true
        default: false
        }
    }

    public var description: String {
        let cardID = LoopbackSetupOptions.microphoneCardID
        switch self {
        case .wouldRun(let command):
            return shellLine(command)
        case .ran(let command):
            return "ran: \(shellLine(command))"
        case .cameraReady(let device):
            return "camera: \(device.described) is a v4l2loopback device with exclusive_caps=1; programs list it once camo-studio camera feeds it."
        case .cameraAlreadyLoaded(let state, let device):
            let parameters = state.parameterSummary.isEmpty ? "" : " (\(state.parameterSummary))"
            return "camera: v4l2loopback was already loaded\(parameters); \(device.described) is one of its devices, so it was left as it is."
        case .exclusiveCapsOff(let device):
            return "warning: \(device.path) was made without exclusive_caps=1, so Chrome will not list it; once no program uses it, reload it with sudo modprobe -r v4l2loopback and run camo-studio setup again."
        case .labelDiffers(let device, let requested):
            return "warning: \(device.path) is named \"\(device.name ?? "")\", not \"\(requested)\"; to rename it, reload it with sudo modprobe -r v4l2loopback (once no program uses it) and run camo-studio setup again."
        case .microphoneReady(let card):
            return "microphone: card \(card.id) (snd-aloop, card \(card.index)); the virtual microphone is played into \(card.playbackDevice) and programs record from \(card.captureDevice)."
        case .microphoneAlreadyLoaded(let card):
            return "microphone: snd-aloop was already loaded with card \(card.id) (card \(card.index)); programs record from \(card.captureDevice)."
        case .microphoneOtherCards(let cards):
            let list = cards.isEmpty ? "no loopback card" : "card " + cards.map(\.id).joined(separator: ", ")
            return "warning: snd-aloop was already loaded with \(list), not \(cardID); camo-studio camera plays into \(cardID), so reload it with sudo modprobe -r snd-aloop (once no program uses it) and run camo-studio setup again."
        case .microphoneSkipped:
            return "microphone: skipped (--no-microphone)."
        }
    }
}
