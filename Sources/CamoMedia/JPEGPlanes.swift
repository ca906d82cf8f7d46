import CYUV

/// A frame in JPEG's colour space, ready for compression: full-range BT.601 Y'CbCr (as JFIF defines it) with
/// chroma at half width and height (4:2:0, rounded up). The planes are packed tightly in `data`: Y
/// (`width * height` bytes), then Cb, then Cr (`chromaWidth * chromaHeight` bytes each).
///
/// ``JPEGEncoder`` makes these from BGRA itself. A producer may make them earlier, on its own thread, and attach
/// them to the frame (``VideoFrame/jpegPlanes``), so that the thread that encodes only compresses: the colour
/// conversion and the compression then run side by side instead of one after the other.
public struct JPEGPlanes: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Y, then Cb, then Cr, ``byteCount(width:height:)`` bytes.
    public let data: [UInt8]

    /// Planes from their parts: `data` holds Y, Cb and Cr as described above. Encoders ignore planes whose
    /// size differs from the frame's or whose `data` is not ``byteCount(width:height:)`` bytes.
    public init(width: Int, height: Int, data: [UInt8]) {
        self.width = width
        self.height = height
        self.data = data
    }

    /// Width of the chroma planes: half the width, rounded up.
    public var chromaWidth: Int { (width + 1) / 2 }
    /// Height of the chroma planes: half the height, rounded up.
    public var chromaHeight: Int { (height + 1) / 2 }

    /// Bytes of the three planes of a `width` x `height` frame.
    public static func byteCount(width: Int, height: Int) -> Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }

    /// Converts a BGRA frame (which must pass ``MediaContract/validate(_:)``) with libyuv's `ARGBToJ420`, writing
    /// into `storage`, which is resized if needed and shared with the result. Pass the same storage again for the
    /// next frame: once the previous result is released, nothing is allocated.
    ///
    /// - Throws: ``ContractError`` for a frame that breaks the contract, ``JPEGError`` when libyuv refuses it.
    public static func converting(_ frame: VideoFrame, into storage: inout [UInt8]) throws -> JPEGPlanes {
        try MediaContract.validate(frame)
        let width = frame.width, height = frame.height
        let count = byteCount(width: width, height: height)
        if storage.count != count { storage = [UInt8](repeating: 0, count: count) }
        let chromaWidth = (width + 1) / 2, chromaBytes = chromaWidth * ((height + 1) / 2)
        let converted = frame.data.withUnsafeBufferPointer { source in
            storage.withUnsafeMutableBufferPointer { planes -> Int32 in
                let y = planes.baseAddress!, u = y + width * height, v = u + chromaBytes
                return ARGBToJ420(
                    source.baseAddress, Int32(frame.bytesPerRow), y, Int32(width), u, Int32(chromaWidth), v,
                    Int32(chromaWidth), Int32(width), Int32(height))
            }
        }
        guard converted == 0 else { throw JPEGError.compressionFailed("ARGBToJ420 failed (\(converted))") }
        return JPEGPlanes(width: width, height: height, data: storage)
    }

    /// True when these planes can stand for `frame`: the same size, and the byte count that size needs.
    public func fits(_ frame: VideoFrame) -> Bool {
        width == frame.width && height == frame.height && data.count == Self.byteCount(width: width, height: height)
    }
}
