/// The layout of the pixels in a ``VideoFrame``.
///
/// Only ``bgra`` passes ``MediaContract/validate(_:)``; the other cases exist so a caller can say
/// what it has and get a precise refusal instead of a garbled picture.
public enum PixelFormat: Sendable, Equatable, CustomStringConvertible {
    /// 8 bits each of blue, green, red and alpha, in that byte order (the only accepted format).
    case bgra
    /// 8 bits each of red, green, blue and alpha.
    case rgba
    /// Packed 4:2:2 YUV (Y0 U Y1 V).
    case yuyv
    /// Planar 4:2:0 YUV with interleaved chroma.
    case nv12
    /// Any other format, named by its FourCC code (little-endian, as V4L2 spells it).
    case other(UInt32)

    /// A short human-readable name, e.g. `BGRA` or `FourCC 'MJPG'`.
    public var description: String {
        switch self {
        case .bgra: return "BGRA"
        case .rgba: return "RGBA"
        case .yuyv: return "YUYV"
        case .nv12: return "NV12"
        case .other(let code):
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }
            if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                return "FourCC '\(String(decoding: bytes, as: UTF8.self))'"
            }
            return "format 0x\(String(code, radix: 16))"
        }
    }
}
