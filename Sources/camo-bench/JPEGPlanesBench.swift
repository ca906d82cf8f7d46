import CYUV
import CamoCapture
import CamoMedia
import Foundation

/// JPEG's planes for a YUYV camera frame (1280x720, BT.709 limited range, the vivid HDMI input's): made straight
/// from the camera's bytes (``PixelConverter/jpegPlanes(planes:into:)``) beside the route they replace (libyuv's
/// `ARGBToJ420` from the converted BGRA) and libyuv's `YUY2ToI420` (a repack with no colour change at all, the floor).
enum JPEGPlanesBench {
    struct Result {
        var oursMs: Double
        var fromBGRAMs: Double
        var repackMs: Double
        var json: [String: Any] {
            ["jpegPlanesFromYUYVMs": oursMs, "argbToJ420Ms": fromBGRAMs, "yuy2ToI420Ms": repackMs]
        }
    }

    static func run(frames: Int) throws -> Result {
        let size = VideoSize.hd720
        var bgra = [UInt8](repeating: 0, count: size.width * size.height * 4)
        TestPattern.render(frameNumber: 42, size: size, into: &bgra)
        var yuyv = [UInt8](repeating: 0, count: size.width * size.height * 2)
        _ = ARGBToYUY2(bgra, Int32(size.width * 4), &yuyv, Int32(size.width * 2), Int32(size.width), Int32(size.height))
        let layout = CaptureLayout(tightlyPacked: .yuyv, width: size.width, height: size.height, colorimetry: .bt709Limited)
        let converter = try PixelConverter(layout: layout)
        let frame = VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: bgra, captureTime: 0)

        // Each timed loop runs once untimed first (buffers allocated, code and data warm).
        func time(_ body: () throws -> Void) rethrows -> Double {
            try body()
            let start = seconds()
            for _ in 0..<frames { try body() }
            return (seconds() - start) / Double(frames) * 1000
        }
        var storage: [UInt8] = []
        let ours = try time {
            _ = try yuyv.withUnsafeBytes { try converter.jpegPlanes(planes: [$0], into: &storage) }
        }
        var fromBGRA: [UInt8] = []
        let viaBGRA = try time { _ = try JPEGPlanes.converting(frame, into: &fromBGRA) }
        var planes = [UInt8](repeating: 0, count: JPEGPlanes.byteCount(width: size.width, height: size.height))
        let lumaBytes = size.width * size.height, chromaBytes = lumaBytes / 4
        let repack = time {
            planes.withUnsafeMutableBufferPointer { p in
                let y = p.baseAddress!
                _ = YUY2ToI420(
                    yuyv, Int32(size.width * 2), y, Int32(size.width), y + lumaBytes, Int32(size.width / 2),
                    y + lumaBytes + chromaBytes, Int32(size.width / 2), Int32(size.width), Int32(size.height))
            }
        }
        return Result(oursMs: ours, fromBGRAMs: viaBGRA, repackMs: repack)
    }

    static func print(_ result: Result, frames: Int) {
        Swift.print(String(format: "JPEG planes for a 1280x720 YUYV frame, BT.709 limited (%d frames):", frames))
        Swift.print(String(format: "  from the YUYV (PixelJFIF420)  %8.3f ms/frame", result.oursMs))
        Swift.print(String(format: "  ARGBToJ420 from the BGRA      %8.3f ms/frame  (ours / this %.2f)", result.fromBGRAMs, result.oursMs / result.fromBGRAMs))
        Swift.print(String(format: "  YUY2ToI420 (repack, no map)   %8.3f ms/frame  (ours / this %.2f)", result.repackMs, result.oursMs / result.repackMs))
    }
}
