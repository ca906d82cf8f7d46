/// What went wrong in CamoCodec. Each case carries the detail (often libavcodec's or libopenh264's own
/// message); ``description`` is a full sentence that also says what to do.
public enum H264Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The encoder kind cannot be used on this host; carries the probe's reason.
    case unavailable(String)
    /// An encoder, decoder or output file could not be opened or configured.
    case open(String)
    /// A frame handed to the encoder does not fit its settings (size, pixel format, buffer length),
    /// or a decoded picture is in a layout this module cannot convert to BGRA.
    case badFrame(String)
    /// The encoder failed on a frame.
    case encode(String)
    /// The decoder rejected damaged data; carries libavcodec's message.
    case corrupt(String)
    /// Writing the MP4 file failed.
    case mux(String)

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .unavailable(let reason):
            return "That H.264 encoder is not available on this host (\(reason)); choose another with --encoder, or auto."
        case .open(let reason):
            return "The codec could not be opened: \(reason). Check the settings (an even size of at most 4096x4096, a bit rate of at least 50 kb/s, a frame rate of 1...240, a GOP of at least 1 frame)."
        case .badFrame(let reason):
            return "The frame cannot be encoded: \(reason). Convert or scale it to the encoder's size in BGRA first."
        case .encode(let reason):
            return "The encoder failed on a frame: \(reason). Create a new encoder; the stream needs a keyframe."
        case .corrupt(let reason):
            return "The H.264 data is damaged and could not be decoded: \(reason). Ask the sender for a keyframe; the decoder stays usable."
        case .mux(let reason):
            return "Writing the MP4 file failed: \(reason). Check the path and free space; the file is incomplete."
        }
    }
}
