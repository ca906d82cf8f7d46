import CTurboJPEG
import CYUV

/// Compresses BGRA frames to baseline JPEG (4:2:0) with libturbojpeg.
///
/// The colour conversion and chroma downsampling are libyuv's `ARGBToJ420` (full-range BT.601, as JFIF
/// defines JPEG's Y'CbCr; ``JPEGPlanes``), and turbojpeg compresses the planes (`tjCompressFromYUVPlanes`).
/// Its JPEG decodes within a level of `tjCompress2`'s from the same BGRA on average (sharp colour edges
/// differ by more: the two round the chroma average differently), in about 0.8x its time on the development
/// machine and about 0.75x under emulation (camo-bench prints the ratio). A frame that carries its planes
/// already (``VideoFrame/jpegPlanes``, of its size) is only compressed.
///
/// Not thread-safe: use one encoder per task or thread. The planes and the output buffer are reused
/// between frames of the same size.
public final class JPEGEncoder {
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferSize: UInt = 0
    /// Where frames without their own ``VideoFrame/jpegPlanes`` are converted; reused between frames.
    private var storage: [UInt8] = []

    /// Creates a compressor.
    public init() throws {
        guard let handle = tjInitCompress() else { throw JPEGError.initializationFailed }
        self.handle = handle
    }

    deinit {
        if let buffer { tjFree(buffer) }
        tjDestroy(handle)
    }

    /// Compresses `frame` (which must pass ``MediaContract/validate(_:)``) at `quality` (1...100).
    ///
    /// - Throws: ``ContractError`` for a frame that breaks the contract, ``JPEGError`` otherwise.
    public func encode(_ frame: VideoFrame, quality: Int) throws -> [UInt8] {
        try MediaContract.validate(frame)
        guard (1...100).contains(quality) else { throw JPEGError.qualityOutOfRange(quality) }
        let needed = tjBufSize(Int32(frame.width), Int32(frame.height), Int32(TJSAMP_420.rawValue))
        guard needed != UInt(bitPattern: -1), needed <= UInt(Int32.max) else {
            throw JPEGError.compressionFailed("no buffer size for \(frame.width)x\(frame.height)")
        }
        if buffer == nil || bufferSize < needed {
            if let buffer { tjFree(buffer) }
            buffer = tjAlloc(Int32(needed))
            bufferSize = buffer == nil ? 0 : needed
        }
        guard buffer != nil else { throw JPEGError.compressionFailed("out of memory") }

        let planes = try frame.jpegPlanes.flatMap { $0.fits(frame) ? $0 : nil }
            ?? JPEGPlanes.converting(frame, into: &storage)
        var outSize = bufferSize
        let result = planes.data.withUnsafeBufferPointer { data -> Int32 in
            let y = data.baseAddress!, u = y + planes.width * planes.height
            let v = u + planes.chromaWidth * planes.chromaHeight
            // On the stack: nothing allocated per frame but the returned bytes. The strides are explicit:
            // turbojpeg's default (and tjCompressFromYUV's layout) pads an odd width's luma rows to even.
            return withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 3) { sources in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: 3) { strides in
                    sources[0] = y
                    sources[1] = u
                    sources[2] = v
                    strides[0] = Int32(planes.width)
                    strides[1] = Int32(planes.chromaWidth)
                    strides[2] = Int32(planes.chromaWidth)
                    return tjCompressFromYUVPlanes(
                        handle, sources.baseAddress, Int32(planes.width), strides.baseAddress, Int32(planes.height),
                        Int32(TJSAMP_420.rawValue), &buffer, &outSize, Int32(quality), TJFLAG_NOREALLOC)
                }
            }
        }
        guard result == 0, let output = buffer else {
            throw JPEGError.compressionFailed(String(cString: tjGetErrorStr2(handle)))
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(outSize)))
    }
}
