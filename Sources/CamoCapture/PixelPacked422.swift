import CPixelKernels

/// Packed 4:2:2 Y'CbCr (YUYV, UYVY, YVYU, VYUY) to BGRA in one pass with exact coefficients for any
/// ``Colorimetry``: the CPixelKernels loop, for what Debian's libyuv cannot do in one call.
///
/// libyuv converts packed 4:2:2 in one pass only for YUYV and UYVY in BT.601 limited range (`YUY2ToARGB`,
/// `UYVYToARGB`, which ``PixelConverter`` still uses for them); anything else means unpacking to I422 first,
/// and its BT.709 and BT.2020 tables clamp Cb→B (see ``PixelChromaCorrection``). This loop holds every
/// coefficient in a 16-bit lane, in 1/64 units as libyuv does, and lands within ±1 of the exact conversion
/// (±2 for BT.2020; measured over the whole sample range by the tests).
struct PixelPacked422 {
    /// The coefficients handed to the loop.
    let coefficients: camo_yuv_coefficients
    /// The byte order of a pixel pair.
    let order: camo_packed422_order

    /// The conversion for `colorimetry`; `uyvy` for chroma-first pairs (UYVY, VYUY), `swapUV` for Cr
    /// before Cb (YVYU, VYUY).
    init(colorimetry: Colorimetry, uyvy: Bool, swapUV: Bool) {
        let (kr, kb) = colorimetry.matrix.lumaCoefficients
        let kg = 1 - kr - kb
        let lumaGain = colorimetry.range.lumaGain, chromaGain = colorimetry.range.chromaGain
        func q6(_ value: Double) -> Int16 { Int16((value * 64).rounded()) }
        coefficients = camo_yuv_coefficients(
            y_gain: UInt16((lumaGain * 128).rounded()),
            y_offset: q6(colorimetry.range.lumaBlack * lumaGain) - 32,
            cb_to_b: q6(2 * (1 - kb) * chromaGain),
            cb_to_g: q6(2 * (1 - kb) * kb / kg * chromaGain),
            cr_to_g: q6(2 * (1 - kr) * kr / kg * chromaGain),
            cr_to_r: q6(2 * (1 - kr) * chromaGain))
        order = Self.order(uyvy: uyvy, swapUV: swapUV)
    }

    /// The byte order of chroma-first (`uyvy`) and Cr-before-Cb (`swapUV`) pairs.
    static func order(uyvy: Bool, swapUV: Bool) -> camo_packed422_order {
        switch (uyvy, swapUV) {
        case (false, false): CAMO_PACKED422_YUYV
        case (true, false): CAMO_PACKED422_UYVY
        case (false, true): CAMO_PACKED422_YVYU
        case (true, true): CAMO_PACKED422_VYUY
        }
    }

    /// Converts `height` rows of `width` (even) pixels; 0, or -1 for an argument the loop refuses.
    func convert(
        _ source: UnsafePointer<UInt8>, stride: Int, into destination: UnsafeMutablePointer<UInt8>, destinationStride: Int,
        width: Int, height: Int
    ) -> Int32 {
        withUnsafePointer(to: coefficients) { k in
            camo_packed422_to_bgra(
                source, Int32(stride), destination, Int32(destinationStride), Int32(width), Int32(height), k,
                Int32(order.rawValue))
        }
    }

    /// Whether the loop runs its AVX2 build on this CPU (else the portable one).
    static var usesAVX2: Bool { camo_packed422_uses_avx2() != 0 }
}
