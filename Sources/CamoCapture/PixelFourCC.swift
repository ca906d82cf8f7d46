/// A V4L2 pixel format code ("fourcc"), e.g. `YUYV`: four ASCII characters packed little-endian
/// (`a | b << 8 | c << 16 | d << 24`), exactly as `v4l2_fourcc()` builds them.
///
/// The constants below are the formats ``PixelConverter`` knows; any other code can be made with
/// ``init(rawValue:)`` or ``init(_:)``. Each constant's comment names the V4L2 macro and the byte
/// order in memory.
public struct FourCC: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The little-endian code, as in `v4l2_pix_format.pixelformat`.
    public var rawValue: UInt32

    /// Wraps a code read from the driver.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The code spelled by four ASCII characters, e.g. `FourCC("YUYV")`; nil unless `text` is
    /// exactly four ASCII characters.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// The four characters (e.g. `YUYV`), or `0x...` when they are not printable ASCII.
    public var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + String(rawValue, radix: 16)
    }

    private init(_ a: Unicode.Scalar, _ b: Unicode.Scalar, _ c: Unicode.Scalar, _ d: Unicode.Scalar) {
        rawValue = UInt32(a.value) | UInt32(b.value) << 8 | UInt32(c.value) << 16 | UInt32(d.value) << 24
    }

    // MARK: Packed 4:2:2 YUV

    /// `YUYV` (V4L2_PIX_FMT_YUYV, "YUY2"): Y0 U Y1 V, 4:2:2. The usual uncompressed webcam format.
    public static let yuyv = FourCC("Y", "U", "Y", "V")
    /// `UYVY` (V4L2_PIX_FMT_UYVY): U Y0 V Y1, 4:2:2.
    public static let uyvy = FourCC("U", "Y", "V", "Y")
    /// `YVYU` (V4L2_PIX_FMT_YVYU): Y0 V Y1 U, 4:2:2.
    public static let yvyu = FourCC("Y", "V", "Y", "U")
    /// `VYUY` (V4L2_PIX_FMT_VYUY): V Y0 U Y1, 4:2:2.
    public static let vyuy = FourCC("V", "Y", "U", "Y")

    // MARK: Semi-planar YUV (a Y plane, then one plane of interleaved chroma)

    /// `NV12` (V4L2_PIX_FMT_NV12): Y plane, then interleaved Cb Cr at half width and half height (4:2:0).
    public static let nv12 = FourCC("N", "V", "1", "2")
    /// `NV21` (V4L2_PIX_FMT_NV21): as NV12 with Cr Cb order.
    public static let nv21 = FourCC("N", "V", "2", "1")
    /// `NV16` (V4L2_PIX_FMT_NV16): Y plane, then interleaved Cb Cr at half width, full height (4:2:2).
    public static let nv16 = FourCC("N", "V", "1", "6")
    /// `NV61` (V4L2_PIX_FMT_NV61): as NV16 with Cr Cb order.
    public static let nv61 = FourCC("N", "V", "6", "1")
    /// `NM12` (V4L2_PIX_FMT_NV12M): NV12 with the Y and CbCr planes in two separate buffers.
    public static let nv12m = FourCC("N", "M", "1", "2")
    /// `NM21` (V4L2_PIX_FMT_NV21M): NV21 with the Y and CrCb planes in two separate buffers.
    public static let nv21m = FourCC("N", "M", "2", "1")

    // MARK: Planar YUV (three planes)

    /// `YU12` (V4L2_PIX_FMT_YUV420, "I420"): Y, Cb, Cr planes; chroma at half width and height.
    public static let yu12 = FourCC("Y", "U", "1", "2")
    /// `YV12` (V4L2_PIX_FMT_YVU420): Y, Cr, Cb planes; chroma at half width and height.
    public static let yv12 = FourCC("Y", "V", "1", "2")
    /// `422P` (V4L2_PIX_FMT_YUV422P): Y, Cb, Cr planes; chroma at half width, full height.
    public static let yuv422p = FourCC("4", "2", "2", "P")
    /// `YM12` (V4L2_PIX_FMT_YUV420M): YU12 with each plane in its own buffer.
    public static let yu12m = FourCC("Y", "M", "1", "2")
    /// `YM21` (V4L2_PIX_FMT_YVU420M): YV12 with each plane in its own buffer (Y, Cr, Cb).
    public static let yv12m = FourCC("Y", "M", "2", "1")
    /// `YM16` (V4L2_PIX_FMT_YUV422M): 422P with each plane in its own buffer.
    public static let yuv422m = FourCC("Y", "M", "1", "6")

    // MARK: Luma only

    /// `GREY` (V4L2_PIX_FMT_GREY): 8-bit luma only.
    public static let grey = FourCC("G", "R", "E", "Y")

    // MARK: RGB

    /// `RGB3` (V4L2_PIX_FMT_RGB24): R, G, B bytes in memory (libyuv calls this "RAW").
    public static let rgb24 = FourCC("R", "G", "B", "3")
    /// `BGR3` (V4L2_PIX_FMT_BGR24): B, G, R bytes in memory (libyuv "RGB24").
    public static let bgr24 = FourCC("B", "G", "R", "3")
    /// `XR24` (V4L2_PIX_FMT_XBGR32): B, G, R, X in memory (X ignored).
    public static let xrgb32LE = FourCC("X", "R", "2", "4")
    /// `AR24` (V4L2_PIX_FMT_ABGR32): B, G, R, A in memory (alpha is replaced by 255).
    public static let argb32LE = FourCC("A", "R", "2", "4")
    /// `XB24` (V4L2_PIX_FMT_RGBX32): R, G, B, X in memory.
    public static let xbgr32LE = FourCC("X", "B", "2", "4")
    /// `AB24` (V4L2_PIX_FMT_RGBA32): R, G, B, A in memory (alpha is replaced by 255).
    public static let abgr32LE = FourCC("A", "B", "2", "4")
    /// `RX24` (V4L2_PIX_FMT_BGRX32): X, B, G, R in memory.
    public static let rgbx32LE = FourCC("R", "X", "2", "4")
    /// `RA24` (V4L2_PIX_FMT_BGRA32): A, B, G, R in memory (alpha is replaced by 255).
    public static let rgba32LE = FourCC("R", "A", "2", "4")
    /// `BX24` (V4L2_PIX_FMT_XRGB32): X, R, G, B in memory.
    public static let bgrx32LE = FourCC("B", "X", "2", "4")
    /// `BA24` (V4L2_PIX_FMT_ARGB32): A, R, G, B in memory (alpha is replaced by 255).
    public static let bgra32LE = FourCC("B", "A", "2", "4")
    /// `RGBP` (V4L2_PIX_FMT_RGB565): 16-bit little-endian words, red in the top 5 bits, blue in the low 5.
    public static let rgb565 = FourCC("R", "G", "B", "P")

    // MARK: Compressed

    /// `MJPG` (V4L2_PIX_FMT_MJPEG): one JPEG per frame, often without Huffman tables.
    public static let mjpeg = FourCC("M", "J", "P", "G")
    /// `JPEG` (V4L2_PIX_FMT_JPEG): JFIF JPEG per frame.
    public static let jpeg = FourCC("J", "P", "E", "G")

    // MARK: Properties

    /// True for the Y'CbCr formats above (including luma-only `GREY`): their colorimetry's range
    /// defaults to limited. False for RGB, compressed and unknown formats.
    public var isYUV: Bool {
        switch self {
        case .yuyv, .uyvy, .yvyu, .vyuy, .nv12, .nv21, .nv16, .nv61, .nv12m, .nv21m,
            .yu12, .yv12, .yuv422p, .yu12m, .yv12m, .yuv422m, .grey:
            return true
        default:
            return false
        }
    }

    /// True for the RGB formats above: their colorimetry's range defaults to full.
    public var isRGB: Bool {
        switch self {
        case .rgb24, .bgr24, .xrgb32LE, .argb32LE, .xbgr32LE, .abgr32LE, .rgbx32LE, .rgba32LE, .bgrx32LE,
            .bgra32LE, .rgb565:
            return true
        default:
            return false
        }
    }

    /// True for `MJPG` and `JPEG`: a frame's size varies and its colour is always full-range BT.601.
    public var isJPEG: Bool { self == .mjpeg || self == .jpeg }

    /// How many buffers (V4L2 multi-planar API planes) one frame of this format arrives in: 2 for
    /// `NM12`/`NM21`, 3 for `YM12`/`YM21`/`YM16`, else 1.
    public var bufferCount: Int {
        switch self {
        case .nv12m, .nv21m: return 2
        case .yu12m, .yv12m, .yuv422m: return 3
        default: return 1
        }
    }
}
