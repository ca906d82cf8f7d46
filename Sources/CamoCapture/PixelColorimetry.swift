/// The Y'CbCr → R'G'B' matrix (the luma coefficients Kr and Kb).
public enum YCbCrMatrix: Sendable, Hashable, CustomStringConvertible {
    /// ITU-R BT.601 (Kr 0.299, Kb 0.114): SD video, JPEG, and what most webcams send.
    case bt601
    /// ITU-R BT.709 (Kr 0.2126, Kb 0.0722): HD video.
    case bt709
    /// ITU-R BT.2020 non-constant luminance (Kr 0.2627, Kb 0.0593).
    case bt2020

    /// `BT.601`, `BT.709` or `BT.2020`.
    public var description: String {
        switch self {
        case .bt601: return "BT.601"
        case .bt709: return "BT.709"
        case .bt2020: return "BT.2020"
        }
    }

    /// The luma coefficients: Y' = Kr R' + (1 - Kr - Kb) G' + Kb B'.
    public var lumaCoefficients: (kr: Double, kb: Double) {
        switch self {
        case .bt601: return (0.299, 0.114)
        case .bt709: return (0.2126, 0.0722)
        case .bt2020: return (0.2627, 0.0593)
        }
    }
}

/// The quantization range of 8-bit samples.
public enum YCbCrRange: Sendable, Hashable, CustomStringConvertible {
    /// "TV" range: Y' 16...235, Cb/Cr 16...240.
    case limited
    /// "PC"/JPEG range: 0...255.
    case full

    /// `limited` or `full`.
    public var description: String { self == .limited ? "limited" : "full" }

    /// Luma's black level in 8-bit samples: 16 in limited range, 0 in full.
    var lumaBlack: Double { self == .limited ? 16 : 0 }
    /// From luma samples (minus the black level) to 0...255: 255/219 in limited range, 1 in full.
    var lumaGain: Double { self == .limited ? 255.0 / 219 : 1 }
    /// From chroma samples (minus 128) to ±127.5: 255/224 in limited range, 1 in full.
    var chromaGain: Double { self == .limited ? 255.0 / 224 : 1 }
}

/// How to turn a format's samples into R'G'B': the matrix and the range.
///
/// Only Y'CbCr formats use the matrix; RGB formats are copied as they are and JPEG is always
/// full-range BT.601 (JFIF), whatever the driver reports.
public struct Colorimetry: Sendable, Hashable, CustomStringConvertible {
    /// The Y'CbCr matrix.
    public var matrix: YCbCrMatrix
    /// The sample range.
    public var range: YCbCrRange

    /// Creates a colorimetry from its two parts.
    public init(matrix: YCbCrMatrix, range: YCbCrRange) {
        self.matrix = matrix
        self.range = range
    }

    /// BT.601, limited range: the V4L2 default for webcams (`V4L2_COLORSPACE_SRGB` with default encoding).
    public static let bt601Limited = Colorimetry(matrix: .bt601, range: .limited)
    /// BT.601, full range: JPEG/JFIF (`V4L2_COLORSPACE_JPEG`).
    public static let bt601Full = Colorimetry(matrix: .bt601, range: .full)
    /// BT.709, limited range: HD video (`V4L2_COLORSPACE_REC709`).
    public static let bt709Limited = Colorimetry(matrix: .bt709, range: .limited)
    /// BT.709, full range.
    public static let bt709Full = Colorimetry(matrix: .bt709, range: .full)

    /// The colorimetry a driver means by the `colorspace`, `ycbcr_enc` and `quantization` fields of
    /// `v4l2_pix_format` (or `v4l2_pix_format_mplane`), with the kernel's rules for the `DEFAULT` values
    /// (`V4L2_MAP_YCBCR_ENC_DEFAULT` and `V4L2_MAP_QUANTIZATION_DEFAULT` in videodev2.h):
    ///
    /// - encoding `DEFAULT` (0) follows the colorspace: `REC709` and `DCI_P3` → BT.709, `BT2020` →
    ///   BT.2020, `SMPTE240M` → SMPTE 240M, everything else (`SMPTE170M`, `470_SYSTEM_*`, `JPEG`, `SRGB`,
    ///   `OPRGB`, `RAW`, `DEFAULT`) → BT.601;
    /// - quantization `DEFAULT` (0) is full range for RGB formats (`isYUV == false`) and for the `JPEG`
    ///   colorspace, limited otherwise.
    ///
    /// Explicit encodings: `601`, `XV601`, `SYCC` → BT.601; `709`, `XV709` → BT.709; `BT2020` and
    /// `BT2020_CONST_LUM` → BT.2020. SMPTE 240M has no libyuv matrix; BT.709, whose coefficients differ
    /// by less than 1 %, stands in for it. Unknown values are treated as `DEFAULT`.
    ///
    /// - Parameter isYUV: whether the pixel format is Y'CbCr (``FourCC/isYUV``); false for RGB.
    public init(v4l2Colorspace: UInt32, ycbcrEnc: UInt32, quantization: UInt32, isYUV: Bool) {
        // enum v4l2_colorspace
        let rec709: UInt32 = 3, jpeg: UInt32 = 7, bt2020: UInt32 = 10, smpte240m: UInt32 = 2, dciP3: UInt32 = 12
        // enum v4l2_ycbcr_encoding
        let enc601: UInt32 = 1, enc709: UInt32 = 2, encXV601: UInt32 = 3, encXV709: UInt32 = 4, encSYCC: UInt32 = 5
        let encBT2020: UInt32 = 6, encBT2020Const: UInt32 = 7, encSMPTE240M: UInt32 = 8
        // enum v4l2_quantization
        let full: UInt32 = 1, limited: UInt32 = 2

        var encoding = ycbcrEnc
        if ![enc601, enc709, encXV601, encXV709, encSYCC, encBT2020, encBT2020Const, encSMPTE240M].contains(encoding) {
            // V4L2_MAP_YCBCR_ENC_DEFAULT
            switch v4l2Colorspace {
            case rec709, dciP3: encoding = enc709
            case bt2020: encoding = encBT2020
            case smpte240m: encoding = encSMPTE240M
            default: encoding = enc601
            }
        }
        switch encoding {
        case enc709, encXV709, encSMPTE240M: matrix = .bt709
        case encBT2020, encBT2020Const: matrix = .bt2020
        default: matrix = .bt601
        }

        switch quantization {
        case full: range = .full
        case limited: range = .limited
        default:
            // V4L2_MAP_QUANTIZATION_DEFAULT
            range = (!isYUV || v4l2Colorspace == jpeg) ? .full : .limited
        }
    }

    /// E.g. `BT.601 limited`.
    public var description: String { "\(matrix) \(range)" }
}
