import CYUV

/// Makes libyuv's BT.709 and BT.2020 limited-range conversions accurate.
///
/// libyuv holds the Cb→B coefficient as a signed 8-bit number in 1/64 units, so unless it is built with
/// `LIBYUV_UNLIMITED_DATA` (Debian's is not) its limited-range tables clamp it to 128 (2.0), where
/// BT.709 needs 2.112 and BT.2020 2.142. Blue then misses by up to 0.14 x |Cb - 128| (13 levels for
/// saturated blue or yellow, measured against ffmpeg). Scaling Cb about 128 by the ratio before libyuv
/// reads it restores blue; green takes the same scaled Cb with a 0.2 coefficient, which moves it by at
/// most 1.5 levels.
///
/// The coefficient libyuv really uses is measured once per converter (two pixels), so a libyuv built
/// without the clamp gets no correction; so do BT.601 (2.018 → 2.0) and the full-range tables, which
/// are within 1 %. The scaling is applied to the Cb samples only, in cache-sized strips, so the driver's
/// buffer is never written; the loops are 16-bit integer arithmetic the compiler vectorizes.
struct PixelChromaCorrection {
    /// The Cb scale minus one, in 1/1024 units (58 for BT.709, 73 for BT.2020 with Debian's libyuv):
    /// small, so the arithmetic fits 16-bit lanes, which SSE2 multiplies eight at a time.
    let excess: Int16

    /// The correction for `colorimetry` given libyuv's `constants` for it, or nil when libyuv is within 1 %.
    init?(_ colorimetry: Colorimetry, constants: OpaquePointer) {
        let kb = colorimetry.matrix.lumaCoefficients.kb
        let scale = colorimetry.range.chromaGain
        let wanted = 2 * (1 - kb) * scale  // B per Cb step
        let ratio = wanted / Self.libyuvCbToBlue(constants)
        guard abs(ratio - 1) > 0.01, ratio < 1.2 else { return nil }
        excess = Int16(((ratio - 1) * 1024).rounded())
    }

    /// The B change per Cb step that libyuv's conversion with `constants` makes: Y 180, Cr 128 and Cb
    /// 128 then 40 (B stays inside 0...255 for every matrix and range, clamped or not).
    static func libyuvCbToBlue(_ constants: OpaquePointer) -> Double {
        let y: [UInt8] = [180, 180], cr: [UInt8] = [128, 128], cb: [UInt8] = [128, 40]
        var out = [UInt8](repeating: 0, count: 16)
        // Two I422 pixel pairs (4x1), one per Cb value, so each pair gets its own Cb.
        let luma = y + y
        let result = I422ToARGBMatrix(luma, 4, cb, 2, cr, 2, &out, 16, constants, 4, 1)
        precondition(result == 0, "I422ToARGBMatrix refused a 4x1 probe")
        return (Double(out[0]) - Double(out[8])) / 88
    }

    /// One corrected Cb sample: 128 + (Cb - 128) x (1 + excess / 1024), clamped.
    @inline(__always)
    func corrected(_ cb: UInt8) -> UInt8 {
        let d = Int16(cb) &- 128
        return UInt8(clamping: 128 &+ d &+ ((d &* excess &+ 512) >> 10))
    }

    /// Corrects `count` Cb samples from `source` into `destination` (which should not overlap it, or the
    /// loop runs unvectorized).
    func apply(from source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count { destination[i] = corrected(source[i]) }
    }

    /// Copies `pairs` interleaved chroma pairs, correcting the Cb of each (the first byte when `cbFirst`,
    /// else the second).
    func applyInterleaved(from source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, pairs: Int, cbFirst: Bool) {
        if cbFirst {
            for i in 0..<pairs {
                destination[2 * i] = corrected(source[2 * i])
                destination[2 * i + 1] = source[2 * i + 1]
            }
        } else {
            for i in 0..<pairs {
                destination[2 * i] = source[2 * i]
                destination[2 * i + 1] = corrected(source[2 * i + 1])
            }
        }
    }
}
