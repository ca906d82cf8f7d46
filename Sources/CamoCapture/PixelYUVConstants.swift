import CYUV

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libyuv's conversion matrices (`kYuvI601Constants` and friends), as the pointers its `*Matrix`
/// functions take.
///
/// libyuv declares them with `struct YuvConstants`, an incomplete type in its public headers, so Swift
/// cannot name them; they are exported data symbols of libyuv.so, found here by name once.
enum PixelYUVConstants {
    /// The constants for `colorimetry`; `swapUV` gives the variant that reads U as V and V as U
    /// (libyuv's `kYvu*` tables), for formats that store Cr before Cb.
    static func pointer(for colorimetry: Colorimetry, swapUV: Bool = false) -> OpaquePointer {
        let name: String
        switch (colorimetry.matrix, colorimetry.range) {
        case (.bt601, .limited): name = "I601"
        case (.bt601, .full): name = "JPEG"
        case (.bt709, .limited): name = "H709"
        case (.bt709, .full): name = "F709"
        case (.bt2020, .limited): name = "2020"
        case (.bt2020, .full): name = "V2020"
        }
        let symbol = (swapUV ? "kYvu" : "kYuv") + name + "Constants"
        let program = dlopen(nil, RTLD_NOW)
        defer { if let program { dlclose(program) } }
        guard let address = dlsym(program, symbol) else {
            preconditionFailure("libyuv does not export \(symbol)")
        }
        return OpaquePointer(address)
    }
}
