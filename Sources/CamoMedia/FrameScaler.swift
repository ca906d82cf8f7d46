import CYUV

/// Resizes BGRA frames with libyuv's `ARGBScale` and a box filter (good for downscaling).
public enum FrameScaler {
    /// Scales `frame` to `size`; the result has `bytesPerRow = 4 * width` and the same capture time.
    ///
    /// The frame and size must be valid (frames are validated when they enter the pipeline);
    /// a violation is a programming error and stops the process. Use
    /// ``checkedScale(_:to:)`` for input that has not been validated.
    public static func scale(_ frame: VideoFrame, to size: VideoSize) -> VideoFrame {
        do {
            return try checkedScale(frame, to: size)
        } catch {
            preconditionFailure("FrameScaler.scale: \(error)")
        }
    }

    /// Scales `frame` to `size`, refusing an invalid frame or target size with a ``ContractError``.
    public static func checkedScale(_ frame: VideoFrame, to size: VideoSize) throws(ContractError) -> VideoFrame {
        try MediaContract.validate(frame)
        let limit = 1...MediaContract.maxDimension
        guard limit.contains(size.width), limit.contains(size.height) else {
            throw .invalidSize(width: size.width, height: size.height)
        }
        if size == frame.size, frame.bytesPerRow == frame.width * 4 { return frame }
        let bytesPerRow = size.width * 4
        var pixels = [UInt8](repeating: 0, count: bytesPerRow * size.height)
        let result = frame.data.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { destination in
                ARGBScale(
                    source.baseAddress, Int32(frame.bytesPerRow), Int32(frame.width), Int32(frame.height),
                    destination.baseAddress, Int32(bytesPerRow), Int32(size.width), Int32(size.height), kFilterBox)
            }
        }
        // ARGBScale fails only for invalid arguments, which were checked above.
        precondition(result == 0, "ARGBScale failed for \(frame.size) -> \(size)")
        return VideoFrame(
            width: size.width, height: size.height, bytesPerRow: bytesPerRow, pixelFormat: .bgra,
            data: pixels, captureTime: frame.captureTime, sourceSequence: frame.sourceSequence)
    }
}
