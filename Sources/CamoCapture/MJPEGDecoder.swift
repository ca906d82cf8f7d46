import CTurboJPEG
import CamoMedia

/// Decodes one webcam JPEG frame into BGRA with libturbojpeg, refusing damaged frames.
///
/// Webcam MJPEG often has no Huffman tables (no DHT segment, as in AVI1/MJPEG); libjpeg-turbo then
/// uses the standard tables of JPEG Annex K.3, which is what those cameras encode with. A frame is
/// refused (never a crash) when it is empty, does not start with SOI (FFD8), has no EOI (FFD9) before its
/// trailing zero padding, declares a size other than the negotiated one, or when turbojpeg reports any
/// error or warning while decoding (e.g. "Premature end of JPEG file", "Corrupt JPEG data").
/// The colour is JFIF's full-range BT.601, whatever V4L2 reports. Not thread-safe.
final class MJPEGDecoder {
    private let handle: tjhandle
    private let size: VideoSize

    /// The flags of every decode: stop on the first warning (a damaged frame) and bound the number of
    /// progressive scans (a hostile file cannot take unbounded time).
    static let flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_FASTUPSAMPLE

    init(size: VideoSize) throws(PixelConversionError) {
        guard let handle = tjInitDecompress() else {
            throw .decoderUnavailable(String(cString: tjGetErrorStr2(nil)))
        }
        self.handle = handle
        self.size = size
    }

    deinit {
        tjDestroy(handle)
    }

    /// The length of `jpeg` without trailing zero padding, after checking SOI and EOI.
    static func checkedLength(_ jpeg: UnsafeRawBufferPointer) throws(PixelConversionError) -> Int {
        guard !jpeg.isEmpty else { throw .emptyFrame }
        guard jpeg.count >= 2, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else {
            throw .corruptJPEG("does not start with the JPEG start-of-image marker FFD8")
        }
        var end = jpeg.count
        while end > 2, jpeg[end - 1] == 0 { end -= 1 }
        guard end >= 4, jpeg[end - 2] == 0xFF, jpeg[end - 1] == 0xD9 else {
            throw .truncatedJPEG(bytes: jpeg.count)
        }
        return end
    }

    /// Decodes `jpeg` into `destination` (tight BGRA rows, at least `width * height * 4` bytes).
    func decode(_ jpeg: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws(PixelConversionError) {
        let length = try Self.checkedLength(jpeg)
        let source = jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, source, UInt(length), &width, &height, &subsampling, &colorspace) == 0 else {
            throw .corruptJPEG(message())
        }
        guard width > 0, height > 0 else { throw .corruptJPEG("the JPEG has no frame header (SOF)") }
        let found = VideoSize(width: Int(width), height: Int(height))
        guard found == size else { throw .sizeMismatch(expected: size, got: found) }
        precondition(destination.count >= size.width * size.height * 4, "MJPEGDecoder: destination too small")
        let result = tjDecompress2(
            handle, source, UInt(length), destination.baseAddress!.assumingMemoryBound(to: UInt8.self),
            width, width * 4, height, Int32(TJPF_BGRA.rawValue), Self.flags)
        guard result == 0 else {
            let warning = tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
            throw .corruptJPEG(warning ? "warning: \(message())" : message())
        }
    }

    private func message() -> String {
        String(cString: tjGetErrorStr2(handle))
    }
}
