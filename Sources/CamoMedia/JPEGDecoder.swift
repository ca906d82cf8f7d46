import CTurboJPEG

/// Decompresses JPEG to BGRA frames with libturbojpeg.
///
/// The header is read first: sizes over 4096 and corrupt or truncated data are refused with a
/// ``JPEGError``, never a crash. Not thread-safe: use one decoder per task or thread.
public final class JPEGDecoder {
    private let handle: tjhandle

    /// Creates a decompressor.
    public init() throws {
        guard let handle = tjInitDecompress() else { throw JPEGError.initializationFailed }
        self.handle = handle
    }

    deinit {
        tjDestroy(handle)
    }

    /// The size a JPEG declares in its header, without decoding it.
    public func size(of jpeg: [UInt8]) throws(JPEGError) -> VideoSize {
        guard !jpeg.isEmpty else { throw .emptyInput }
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let result = jpeg.withUnsafeBufferPointer { source in
            tjDecompressHeader3(handle, source.baseAddress, UInt(source.count), &width, &height, &subsampling, &colorspace)
        }
        guard result == 0 else { throw .invalidHeader(errorMessage()) }
        return VideoSize(width: Int(width), height: Int(height))
    }

    /// Decodes `jpeg` to a BGRA frame with `bytesPerRow = 4 * width`, stamped with `captureTime`.
    public func decode(_ jpeg: [UInt8], captureTime: UInt64 = 0) throws -> VideoFrame {
        let size = try size(of: jpeg)
        let limit = 1...MediaContract.maxDimension
        guard limit.contains(size.width), limit.contains(size.height) else {
            throw JPEGError.unsupportedSize(width: size.width, height: size.height)
        }
        let bytesPerRow = size.width * 4
        var pixels = [UInt8](repeating: 0, count: bytesPerRow * size.height)
        let result = jpeg.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { destination in
                tjDecompress2(
                    handle, source.baseAddress, UInt(source.count), destination.baseAddress,
                    Int32(size.width), Int32(bytesPerRow), Int32(size.height), Int32(TJPF_BGRA.rawValue),
                    TJFLAG_STOPONWARNING)
            }
        }
        guard result == 0 else { throw JPEGError.decompressionFailed(errorMessage()) }
        return VideoFrame(
            width: size.width, height: size.height, bytesPerRow: bytesPerRow, pixelFormat: .bgra,
            data: pixels, captureTime: captureTime)
    }

    private func errorMessage() -> String {
        String(cString: tjGetErrorStr2(handle))
    }
}
