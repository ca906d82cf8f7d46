import CALSA

/// Whether talkback has somewhere to play: an ALSA playback device that opens.
public enum SpeakerProbe {
    /// The device `choice` names (`auto` or `default`: ALSA's default output; any other text: an ALSA playback
    /// device name), or why it cannot play: nil when it opens for playback (it is closed again at once).
    public static func problem(with choice: String) -> String? {
        ALSALog.install()
        let name = choice == "auto" ? "default" : choice
        if choice == "auto" {
            var card: Int32 = -1
            guard snd_card_next(&card) == 0, card >= 0 else { return "this machine has no sound card (ALSA lists none)" }
        }
        var pcm: OpaquePointer?
        let code = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard code >= 0, let pcm else {
            return "the ALSA playback device \(name) does not open (\(String(cString: snd_strerror(code))))"
        }
        snd_pcm_close(pcm)
        return nil
    }
}
