import CYUV

/// libyuv's conversion matrices (`kYuvI601Constants` and friends), as the pointers its `*Matrix`
/// functions take. libyuv declares them with `struct YuvConstants`, an incomplete type in its public
/// headers, so Swift cannot name them; the CYUV shim hands out their addresses.
enum PixelYUVConstants {
    /// The constants for `colorimetry`; `swapUV` gives the variant that reads U as V and V as U
    /// (libyuv's `kYvu*` tables), for formats that store Cr before Cb.
    static func pointer(for colorimetry: Colorimetry, swapUV: Bool = false) -> OpaquePointer {
        let matrix: Int32
        switch colorimetry.matrix {
        case .bt601: matrix = 0
        case .bt709: matrix = 1
        case .bt2020: matrix = 2
        }
        // Safe: the shim returns the address of a libyuv global for every input.
        return camo_yuv_constants(matrix, colorimetry.range == .full ? 1 : 0, swapUV ? 1 : 0)!
    }
}
