import CPixelKernels

/// Packed 4:2:2 Y'CbCr (YUYV, UYVY, YVYU, VYUY) in any ``Colorimetry`` straight to JPEG's planes (full-range
/// BT.601 4:2:0, as JFIF defines them; ``JPEGPlanes``): the CPixelKernels loop.
///
/// A JPEG encoder would otherwise convert the BGRA frame back to Y'CbCr (libyuv's `ARGBToJ420`). From the
/// camera's bytes it is one affine map per sample and a two-row chroma average, in 16-bit fixed point as
/// ``PixelPacked422`` (an AVX2 build where the CPU has it, else the portable one); the tests measure how close
/// it lands to the exact map.
struct PixelJFIF420 {
    /// The coefficients handed to the loop.
    let coefficients: camo_jfif_coefficients
    /// The byte order of a pixel pair.
    let order: camo_packed422_order

    /// The map from `colorimetry` to JFIF's; `order` as for ``PixelPacked422``. Nil when a coefficient falls
    /// outside the loop's bounds (none of the six colorimetries does; the frame then goes without planes).
    init?(colorimetry: Colorimetry, order: camo_packed422_order) {
        let lumaGain = colorimetry.range.lumaGain, chromaGain = colorimetry.range.chromaGain
        let map = Self.toBT601(from: colorimetry.matrix.lumaCoefficients)
        func q6(_ value: Double) -> Int16 { Int16((value * 64).rounded()) }
        func q8(_ value: Double) -> Int16 { Int16((value * 256).rounded()) }
        // Row r of `map` gives (Y', Pb, Pr) of BT.601 from the source's (Y', Pb, Pr); JFIF stores them times 255.
        coefficients = camo_jfif_coefficients(
            y_gain: UInt16((lumaGain * 128).rounded()),
            y_offset: q6(colorimetry.range.lumaBlack * lumaGain) - 32,
            y_cb: q8(chromaGain * map[0][1]), y_cr: q8(chromaGain * map[0][2]),
            cb_cb: q8(chromaGain * map[1][1] - 1), cb_cr: q8(chromaGain * map[1][2]),
            cr_cb: q8(chromaGain * map[2][1]), cr_cr: q8(chromaGain * map[2][2] - 1))
        self.order = order
        let k = coefficients
        guard k.y_gain <= 255, (-64...8192).contains(k.y_offset),
              [k.y_cb, k.y_cr, k.cb_cb, k.cb_cr, k.cr_cb, k.cr_cr].allSatisfy({ (-127...127).contains($0) })
        else { return nil }
    }

    /// A loop with the given coefficients (for tests at the bounds), unchecked.
    init(coefficients: camo_jfif_coefficients, order: camo_packed422_order) {
        self.coefficients = coefficients
        self.order = order
    }

    /// The 3x3 map from normalized (Y', Pb, Pr) with luma coefficients `source` to BT.601's: through R'G'B'.
    static func toBT601(from source: (kr: Double, kb: Double)) -> [[Double]] {
        func rgb(_ y: Double, _ pb: Double, _ pr: Double, _ k: (kr: Double, kb: Double)) -> (Double, Double, Double) {
            let r = y + 2 * (1 - k.kr) * pr, b = y + 2 * (1 - k.kb) * pb
            return (r, (y - k.kr * r - k.kb * b) / (1 - k.kr - k.kb), b)
        }
        let target = YCbCrMatrix.bt601.lumaCoefficients
        func ycbcr(_ c: (Double, Double, Double)) -> [Double] {
            let y = target.kr * c.0 + (1 - target.kr - target.kb) * c.1 + target.kb * c.2
            return [y, (c.2 - y) / (2 * (1 - target.kb)), (c.0 - y) / (2 * (1 - target.kr))]
        }
        let columns = [ycbcr(rgb(1, 0, 0, source)), ycbcr(rgb(0, 1, 0, source)), ycbcr(rgb(0, 0, 1, source))]
        return (0..<3).map { row in (0..<3).map { column in columns[column][row] } }
    }

    /// Converts `height` rows of `width` (even) pixels into tightly packed planes at `destination` (Y, then Cb,
    /// then Cr, as ``JPEGPlanes`` holds them); 0, or -1 for an argument the loop refuses. `portable` runs the
    /// portable build even on a CPU with AVX2 (for the tests that check both builds).
    func convert(
        _ source: UnsafePointer<UInt8>, stride: Int, into destination: UnsafeMutablePointer<UInt8>, width: Int, height: Int,
        portable: Bool = false
    ) -> Int32 {
        let chroma = destination + width * height, chromaBytes = (width / 2) * ((height + 1) / 2)
        let loop = portable ? camo_packed422_to_jfif420_portable : camo_packed422_to_jfif420
        return withUnsafePointer(to: coefficients) { k in
            loop(
                source, Int32(stride), destination, Int32(width), chroma, chroma + chromaBytes, Int32(width / 2),
                Int32(width), Int32(height), k, Int32(order.rawValue))
        }
    }
}
