/// Why a frame, an audio buffer or an audio request was refused.
///
/// Each description says what is wrong and what to do about it, so it can be shown to the
/// developer who called the API as it is.
public enum ContractError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The frame is not BGRA.
    case notBGRA(PixelFormat)
    /// Width or height is outside `1...4096`.
    case invalidSize(width: Int, height: Int)
    /// `bytesPerRow` is smaller than `4 * width`.
    case strideTooSmall(bytesPerRow: Int, minimum: Int)
    /// The buffer is not exactly `bytesPerRow * height` bytes.
    case bufferLength(expected: Int, actual: Int)
    /// The audio byte count is not a multiple of 8 (one float32 stereo sample frame).
    case audioNotWholeSampleFrames(byteCount: Int)
    /// The audio buffer holds no samples.
    case audioEmpty
    /// An audio packet size outside `64...48000` sample frames was asked for.
    case samplesRequiredOutOfRange(Int)

    /// What is wrong and what to do.
    public var description: String {
        let maxSide = MediaContract.maxDimension
        switch self {
        case .notBGRA(let format):
            return "Video frame refused: its pixel format is \(format), but only BGRA "
                + "(bytes blue, green, red, alpha per pixel) is accepted. Convert the frame to BGRA before enqueueing it."
        case .invalidSize(let width, let height):
            return "Video frame refused: size \(width)x\(height) is outside 1...\(maxSide) in width or height. "
                + "Send frames between 1x1 and \(maxSide)x\(maxSide) pixels."
        case .strideTooSmall(let bytesPerRow, let minimum):
            return "Video frame refused: bytesPerRow is \(bytesPerRow), but a BGRA row of this width needs at least "
                + "\(minimum) bytes (4 per pixel). Pass the buffer's real row stride."
        case .bufferLength(let expected, let actual):
            return "Video frame refused: the buffer holds \(actual) bytes, but bytesPerRow x height is \(expected). "
                + "Pass exactly bytesPerRow x height bytes (check the stride and that the buffer is not cropped or padded)."
        case .audioNotWholeSampleFrames(let byteCount):
            return "Audio refused: \(byteCount) bytes is not a whole number of sample frames. Audio must be interleaved "
                + "stereo float32 (8 bytes per sample frame, left then right), so the byte count must be a multiple of 8."
        case .audioEmpty:
            return "Audio refused: the buffer is empty. Pass at least one stereo float32 sample frame (8 bytes)."
        case .samplesRequiredOutOfRange(let count):
            return "Audio packet size \(count) refused: audioSamplesRequired must be between "
                + "\(MediaContract.samplesRequiredRange.lowerBound) and \(MediaContract.samplesRequiredRange.upperBound) "
                + "sample frames per packet."
        }
    }
}
