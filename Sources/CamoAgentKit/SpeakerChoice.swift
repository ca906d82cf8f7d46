import CamoLive

/// The configuration's `speaker` as an output: `none`, `file:PATH.wav`, `auto` (ALSA's default output) or an ALSA
/// playback device name. Talkback and the doorbell's chime play there.
enum SpeakerChoice {
    static func output(_ choice: String) -> SpeakerOutput {
        if choice == "none" { return .none }
        if let path = choice.wavFilePath { return .wavFile(path: path) }
        return .alsa(device: choice == "auto" ? "default" : choice)
    }
}
