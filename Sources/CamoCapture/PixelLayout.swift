import CamoMedia

/// One buffer's geometry as the driver reported it (`bytesperline` and `sizeimage` of
/// `v4l2_pix_format`, or of one `v4l2_plane_pix_format` in the multi-planar API).
public struct PlaneLayout: Sendable, Hashable {
    /// Bytes from one row of the first plane in this buffer to the next (0 for compressed formats).
    public var bytesPerLine: Int
    /// The buffer size the driver asks for (an upper bound for compressed formats).
    public var sizeImage: Int

    /// Creates a plane layout from the driver's numbers.
    public init(bytesPerLine: Int, sizeImage: Int) {
        self.bytesPerLine = bytesPerLine
        self.sizeImage = sizeImage
    }
}

/// What a capture delivers: the format, the size, the buffers of one frame and how to read their colour.
public struct CaptureLayout: Sendable, Hashable {
    /// The pixel format.
    public var format: FourCC
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// One entry per buffer of a frame: one for single-planar formats (even NV12 or YU12, whose chroma
    /// planes follow the Y plane in the same buffer, with V4L2's implied strides), two for `NM12`/`NM21`,
    /// three for `YM12`/`YM21`/`YM16`.
    public var planes: [PlaneLayout]
    /// How to read the colour (used for Y'CbCr formats only).
    public var colorimetry: Colorimetry

    /// Creates a layout from what the driver reported (`VIDIOC_S_FMT`/`VIDIOC_G_FMT`).
    public init(format: FourCC, width: Int, height: Int, planes: [PlaneLayout], colorimetry: Colorimetry) {
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.colorimetry = colorimetry
    }

    /// The layout a driver with no row padding reports for `format` at `width` x `height`: tight rows,
    /// V4L2's plane order and chroma strides. For JPEG formats `bytesPerLine` is 0 and `sizeImage` is
    /// `width * height * 2`. Tests and benchmarks use it; real captures use the driver's numbers.
    public init(tightlyPacked format: FourCC, width: Int, height: Int, colorimetry: Colorimetry = .bt601Limited) {
        let halfWidth = (width + 1) / 2
        let halfHeight = (height + 1) / 2
        let planes: [PlaneLayout]
        switch format {
        case .yuyv, .uyvy, .yvyu, .vyuy, .rgb565:
            planes = [PlaneLayout(bytesPerLine: width * 2, sizeImage: width * 2 * height)]
        case .nv12, .nv21:
            planes = [PlaneLayout(bytesPerLine: width, sizeImage: width * height + 2 * halfWidth * halfHeight)]
        case .nv16, .nv61:
            planes = [PlaneLayout(bytesPerLine: width, sizeImage: width * height + 2 * halfWidth * height)]
        case .yu12, .yv12:
            planes = [PlaneLayout(bytesPerLine: width, sizeImage: width * height + 2 * halfWidth * halfHeight)]
        case .yuv422p:
            planes = [PlaneLayout(bytesPerLine: width, sizeImage: width * height + 2 * halfWidth * height)]
        case .nv12m, .nv21m:
            planes = [
                PlaneLayout(bytesPerLine: width, sizeImage: width * height),
                PlaneLayout(bytesPerLine: 2 * halfWidth, sizeImage: 2 * halfWidth * halfHeight),
            ]
        case .yu12m, .yv12m:
            planes = [
                PlaneLayout(bytesPerLine: width, sizeImage: width * height),
                PlaneLayout(bytesPerLine: halfWidth, sizeImage: halfWidth * halfHeight),
                PlaneLayout(bytesPerLine: halfWidth, sizeImage: halfWidth * halfHeight),
            ]
        case .yuv422m:
            planes = [
                PlaneLayout(bytesPerLine: width, sizeImage: width * height),
                PlaneLayout(bytesPerLine: halfWidth, sizeImage: halfWidth * height),
                PlaneLayout(bytesPerLine: halfWidth, sizeImage: halfWidth * height),
            ]
        case .grey:
            planes = [PlaneLayout(bytesPerLine: width, sizeImage: width * height)]
        case .rgb24, .bgr24:
            planes = [PlaneLayout(bytesPerLine: width * 3, sizeImage: width * 3 * height)]
        case .mjpeg, .jpeg:
            planes = [PlaneLayout(bytesPerLine: 0, sizeImage: width * height * 2)]
        default:
            // The 32-bit RGB formats, and a guess for anything unknown.
            planes = [PlaneLayout(bytesPerLine: width * 4, sizeImage: width * 4 * height)]
        }
        self.init(format: format, width: width, height: height, planes: planes, colorimetry: colorimetry)
    }

    /// The frame size.
    public var size: VideoSize { VideoSize(width: width, height: height) }
}

/// Why a layout or a frame cannot be converted. Layout errors come from ``PixelConverter/init(layout:)``
/// (fix the format negotiation); frame errors come from ``PixelConverter/convert(_:into:)`` and mean
/// one bad frame (drop it and take the next).
public enum PixelConversionError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Neither libyuv nor libturbojpeg reads this format; convert it with libv4lconvert instead.
    case unsupportedFormat(FourCC)
    /// The layout cannot describe a frame of its format (bad size, too few planes, short strides...).
    case invalidLayout(String)
    /// A frame came in a different number of buffers than the layout has planes.
    case wrongPlaneCount(expected: Int, got: Int)
    /// A buffer holds fewer bytes than a whole frame needs (a truncated or partial frame); for
    /// multi-planar formats, the first such buffer.
    case shortBuffer(expected: Int, got: Int)
    /// The buffer is empty (`bytesused` 0).
    case emptyFrame
    /// The JPEG has no end-of-image marker (FFD9) before its trailing zero padding: the transfer was cut off.
    case truncatedJPEG(bytes: Int)
    /// The data is not a decodable JPEG, or decoding it reported damage (turbojpeg's message).
    case corruptJPEG(String)
    /// The JPEG's own size differs from the negotiated frame size.
    case sizeMismatch(expected: VideoSize, got: VideoSize)
    /// libturbojpeg could not create a decompressor (out of memory).
    case decoderUnavailable(String)

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .unsupportedFormat(let format):
            return "pixel format \(format) is not converted by libyuv or libturbojpeg; use the libv4lconvert fallback or pick another format"
        case .invalidLayout(let reason):
            return "capture layout cannot be converted: \(reason); renegotiate the format"
        case .wrongPlaneCount(let expected, let got):
            return "frame arrived in \(got) buffer(s) but the format has \(expected); pass one buffer per plane"
        case .shortBuffer(let expected, let got):
            return "frame buffer holds \(got) bytes, a whole frame needs \(expected); dropping the partial frame"
        case .emptyFrame:
            return "the camera delivered an empty buffer; dropping it"
        case .truncatedJPEG(let bytes):
            return "JPEG frame of \(bytes) bytes has no end-of-image marker (FFD9): it was cut off; dropping it"
        case .corruptJPEG(let message):
            return "JPEG frame is corrupt (\(message)); dropping it"
        case .sizeMismatch(let expected, let got):
            return "JPEG frame is \(got) but the negotiated size is \(expected); dropping it (renegotiate if it persists)"
        case .decoderUnavailable(let message):
            return "libturbojpeg could not create a decompressor: \(message)"
        }
    }
}
