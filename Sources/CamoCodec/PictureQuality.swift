import CYUV
import CamoMedia
import Foundation

/// Objective picture comparisons.
public enum PictureQuality {
    /// Peak signal-to-noise ratio over the luma of two BGRA frames of the same size, in dB.
    ///
    /// Luma is full-range BT.601 (0.299 R + 0.587 G + 0.114 B, libyuv's ARGBToJ400, as TestPattern reads
    /// it); PSNR = 10 log10(255² / mean squared error). Infinity when the lumas are identical; NaN when the
    /// frames differ in size, are not BGRA, or break ``MediaContract/validate(_:)``.
    public static func psnr(_ a: VideoFrame, _ b: VideoFrame) -> Double {
        guard a.width == b.width, a.height == b.height,
            (try? MediaContract.validate(a)) != nil, (try? MediaContract.validate(b)) != nil
        else { return .nan }
        let width = a.width, height = a.height
        let lumaA = luma(a), lumaB = luma(b)
        let squaredError = lumaA.withUnsafeBufferPointer { first in
            lumaB.withUnsafeBufferPointer { second in
                ComputeSumSquareErrorPlane(
                    first.baseAddress, Int32(width), second.baseAddress, Int32(width), Int32(width), Int32(height))
            }
        }
        guard squaredError > 0 else { return .infinity }
        let meanSquaredError = Double(squaredError) / Double(width * height)
        return 10 * log10(255 * 255 / meanSquaredError)
    }

    /// The frame's full-range BT.601 luma plane, `width` bytes a row.
    private static func luma(_ frame: VideoFrame) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: frame.width * frame.height) { buffer, count in
            let result = frame.data.withUnsafeBufferPointer { source in
                ARGBToJ400(
                    source.baseAddress, Int32(frame.bytesPerRow), buffer.baseAddress, Int32(frame.width),
                    Int32(frame.width), Int32(frame.height))
            }
            if result != 0 { buffer.initialize(repeating: 0) }
            count = buffer.count
        }
    }
}
