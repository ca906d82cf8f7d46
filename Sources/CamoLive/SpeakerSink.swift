/// The speaker's end of a pipeline, shared by talkback (``WebRTCSpeaker``) and the doorbell's chime
/// (``ChimePlayer``): F32LE stereo at 48 kHz in, through `audioconvert ! audioresample ! volume name=volume`, out to
/// the ALSA device or the WAV file.
enum SpeakerSink {
    /// The gst-launch description from the converters to the sink (the caller puts its source before it), or nil
    /// for ``SpeakerOutput/none``.
    static func description(_ output: SpeakerOutput) -> String? {
        let sink: String
        switch output {
        case .none:
            return nil
        case .alsa(let device):
            let chosen = ["", "auto", "default"].contains(device.lowercased()) ? "" : " device=\(quoted(device))"
            sink = "alsasink\(chosen) sync=false async=false"
        case .wavFile(let path):
            sink = "audioconvert ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(quoted(path)) sync=false async=false"
        }
        return "audioconvert ! audioresample ! volume name=volume ! \(sink)"
    }

    /// The caps of what the source gives: interleaved F32LE stereo at 48 kHz.
    static let sourceCaps = "audio/x-raw,format=F32LE,rate=48000,channels=2,layout=interleaved"

    /// A value quoted for a gst-launch description.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The volume element's settings: speakerVolumeLevel 0–100 as 0–1, and speakerMuted.
    static func setVolume(_ volume: GstElementRef, percent: Int, muted: Bool) {
        GstCalls.setVolume(volume, level: Double(min(max(percent, 0), 100)) / 100, muted: muted)
    }
}
