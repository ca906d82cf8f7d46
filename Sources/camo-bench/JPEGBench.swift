import CTurboJPEG
import CamoMedia
import Foundation

enum JPEGBench {
    struct Result {
        var ourMs: Double
        var directMs: Double
        var ratio: Double { ourMs / directMs }
    }

    static func run(frames: Int, quality: Int) throws -> Result {
        let size = VideoSize.hd720
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        TestPattern.render(frameNumber: 42, size: size, into: &pixels)
        let frame = VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: pixels, captureTime: 0)

        let encoder = try JPEGEncoder()
        _ = try encoder.encode(frame, quality: quality)
        var start = seconds()
        var bytes = 0
        for _ in 0..<frames { bytes &+= try encoder.encode(frame, quality: quality).count }
        let ours = (seconds() - start) / Double(frames) * 1000

        // The reference: turbojpeg called directly with the same parameters, into a reused buffer.
        guard let handle = tjInitCompress() else { throw JPEGError.initializationFailed }
        defer { tjDestroy(handle) }
        let capacity = tjBufSize(Int32(size.width), Int32(size.height), Int32(TJSAMP_420.rawValue))
        var buffer: UnsafeMutablePointer<UInt8>? = tjAlloc(Int32(capacity))
        defer { tjFree(buffer) }
        start = seconds()
        var directBytes = 0
        for _ in 0..<(frames + 1) {
            var outSize = capacity
            let result = pixels.withUnsafeBufferPointer { source in
                tjCompress2(
                    handle, source.baseAddress, Int32(size.width), Int32(size.width * 4), Int32(size.height),
                    Int32(TJPF_BGRA.rawValue), &buffer, &outSize, Int32(TJSAMP_420.rawValue), Int32(quality),
                    TJFLAG_NOREALLOC)
            }
            precondition(result == 0, "tjCompress2 failed")
            directBytes &+= Int(outSize)
            if directBytes == Int(outSize) { start = seconds() }  // the first call warms up
        }
        let direct = (seconds() - start) / Double(frames) * 1000
        precondition(bytes > 0 && directBytes > 0)
        return Result(ourMs: ours, directMs: direct)
    }
}
