import CTurboJPEG

/// Compresses BGRA frames to baseline JPEG (4:2:0) with libturbojpeg.
///
/// Not thread-safe: use one encoder per task or thread. The output buffer is reused between
/// frames of the same size.
public final class JPEGEncoder {
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferSize: UInt = 0

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

        var outSize = bufferSize
        let result = frame.data.withUnsafeBufferPointer { source in
            tjCompress2(
                handle, source.baseAddress, Int32(frame.width), Int32(frame.bytesPerRow), Int32(frame.height),
                Int32(TJPF_BGRA.rawValue), &buffer, &outSize, Int32(TJSAMP_420.rawValue), Int32(quality),
                TJFLAG_NOREALLOC)
        }
        guard result == 0, let output = buffer else {
            throw JPEGError.compressionFailed(String(cString: tjGetErrorStr2(handle)))
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(outSize)))
    }
}
