import CamoMedia
import CV4L2
import Foundation

/// Something that turns one captured frame into tightly packed BGRA.
protocol FrameConverting: AnyObject {
    func convert(planes: [UnsafeRawBufferPointer], into output: inout [UInt8]) throws(PixelConversionError)
    /// Whether ``jpegPlanes(planes:into:)`` can make JPEG's planes from this converter's frames.
    var makesJPEGPlanes: Bool { get }
    /// JPEG's planes straight from the camera's frame, or nil when this converter cannot make them.
    func jpegPlanes(planes: [UnsafeRawBufferPointer], into storage: inout [UInt8]) throws(PixelConversionError) -> JPEGPlanes?
}

extension FrameConverting {
    var makesJPEGPlanes: Bool { false }

    func jpegPlanes(planes: [UnsafeRawBufferPointer], into storage: inout [UInt8]) throws(PixelConversionError) -> JPEGPlanes? {
        nil
    }
}

extension PixelConverter: FrameConverting {}

/// libv4lconvert, for formats neither libyuv nor turbojpeg reads (Bayer and the like): to BGR24, then to BGRA
/// with libyuv. About ten times slower than the direct paths, so it is only the fallback.
final class FallbackConverter: FrameConverting {
    /// Bayer 8-bit orders, which webcams without an ISP and vivid deliver.
    static let formats: [FourCC] = ["BA81", "GBRG", "GRBG", "RGGB"].compactMap { FourCC($0) }

    static func canConvert(_ fourcc: FourCC) -> Bool { formats.contains(fourcc) }

    private let data: OpaquePointer
    private var source: v4l2_format
    private var destination: v4l2_format
    private var bgr: [UInt8]
    private let second: PixelConverter

    init?(device: V4L2Device, layout: CaptureLayout) {
        guard Self.canConvert(layout.format), let data = v4lconvert_create(device.fd) else { return nil }
        self.data = data
        source = v4l2_format()
        source.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        source.fmt.pix.width = UInt32(layout.width)
        source.fmt.pix.height = UInt32(layout.height)
        source.fmt.pix.pixelformat = layout.format.rawValue
        source.fmt.pix.bytesperline = UInt32(layout.planes.first?.bytesPerLine ?? layout.width)
        source.fmt.pix.sizeimage = UInt32(layout.planes.first?.sizeImage ?? 0)
        source.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        destination = source
        destination.fmt.pix.pixelformat = FourCC.bgr24.rawValue
        destination.fmt.pix.bytesperline = UInt32(layout.width * 3)
        destination.fmt.pix.sizeimage = UInt32(layout.width * layout.height * 3)
        bgr = [UInt8](repeating: 0, count: layout.width * layout.height * 3)
        let bgrLayout = CaptureLayout(
            format: .bgr24, width: layout.width, height: layout.height,
            planes: [PlaneLayout(bytesPerLine: layout.width * 3, sizeImage: layout.width * layout.height * 3)],
            colorimetry: .bt601Full)
        guard let second = try? PixelConverter(layout: bgrLayout) else {
            v4lconvert_destroy(data)
            return nil
        }
        self.second = second
    }

    deinit {
        v4lconvert_destroy(data)
    }

    func convert(planes: [UnsafeRawBufferPointer], into output: inout [UInt8]) throws(PixelConversionError) {
        guard let plane = planes.first, let base = plane.baseAddress else {
            throw PixelConversionError.emptyFrame
        }
        let capacity = bgr.count
        let written = bgr.withUnsafeMutableBytes { out in
            v4lconvert_convert(
                data, &source, &destination, UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)),
                Int32(plane.count), out.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(capacity))
        }
        guard written == capacity else {
            throw PixelConversionError.corruptJPEG("libv4lconvert wrote \(written) of \(capacity) bytes: \(String(cString: v4lconvert_get_error_message(data)))")
        }
        let second = self.second
        let failure: PixelConversionError? = bgr.withUnsafeBytes { raw in
            do throws(PixelConversionError) {
                try second.convert(planes: [raw], into: &output)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }
}
