/// The media contract: what the agent accepts and the fixed rates it runs at.
///
/// Frames and audio are checked here before they enter the pipeline, so a wrong buffer is
/// refused with a clear ``ContractError`` instead of being streamed as garbage.
public enum MediaContract {
    /// Outgoing video rate: the pacer's slots are 1/30 s apart.
    public static let fps = 30
    /// Audio sample rate in Hz.
    public static let sampleRate = 48_000
    /// Audio channel count (interleaved left, right).
    public static let channels = 2
    /// Allowed `audioSamplesRequired` values (sample frames per audio packet).
    public static let samplesRequiredRange = 64...48_000
    /// Largest accepted width and height.
    public static let maxDimension = 4096
    /// Bytes per audio sample frame: two float32 values.
    public static let bytesPerSampleFrame = 8

    /// Checks that `frame` is BGRA, 1...4096 pixels in each dimension, has a stride of at least
    /// `4 * width`, and holds exactly `bytesPerRow * height` bytes.
    public static func validate(_ frame: VideoFrame) throws(ContractError) {
        guard frame.pixelFormat == .bgra else { throw .notBGRA(frame.pixelFormat) }
        guard (1...maxDimension).contains(frame.width), (1...maxDimension).contains(frame.height) else {
            throw .invalidSize(width: frame.width, height: frame.height)
        }
        let minimum = frame.width * 4
        guard frame.bytesPerRow >= minimum else {
            throw .strideTooSmall(bytesPerRow: frame.bytesPerRow, minimum: minimum)
        }
        let (expected, overflow) = frame.bytesPerRow.multipliedReportingOverflow(by: frame.height)
        guard !overflow, frame.data.count == expected else {
            throw .bufferLength(expected: overflow ? Int.max : expected, actual: frame.data.count)
        }
    }

    /// Checks that `byteCount` is a whole, non-zero number of float32 stereo sample frames.
    public static func validateAudio(byteCount: Int) throws(ContractError) {
        guard byteCount != 0 else { throw .audioEmpty }
        guard byteCount > 0, byteCount % bytesPerSampleFrame == 0 else {
            throw .audioNotWholeSampleFrames(byteCount: byteCount)
        }
    }

    /// Checks that `count` is an allowed number of sample frames per audio packet.
    public static func validateSamplesRequired(_ count: Int) throws(ContractError) {
        guard samplesRequiredRange.contains(count) else { throw .samplesRequiredOutOfRange(count) }
    }
}
