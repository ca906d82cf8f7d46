import CamoMedia
import CamoTestSupport
import Foundation

/// Synthetic BGRA pictures for the motion tests.
enum TestFrames {
    static let size = VideoSize(width: 320, height: 180)

    /// A still scene: the test pattern's frame 1 (its bars move from frame to frame, and frame 0 is a white flash,
    /// so the tests hold one frame), or flat grey.
    enum Scene: String, CaseIterable, CustomStringConvertible {
        case testPattern
        case grey
        var description: String { rawValue }

        var pixels: [UInt8] {
            switch self {
            case .testPattern:
                return TestPattern.frame(number: 1, size: TestFrames.size, captureTime: 0).data
            case .grey:
                return [UInt8](repeating: 128, count: TestFrames.size.width * TestFrames.size.height * 4)
            }
        }
    }

    static func frame(_ pixels: [UInt8], time: UInt64) -> VideoFrame {
        VideoFrame(width: size.width, height: size.height, bytesPerRow: 4 * size.width, data: pixels, captureTime: time)
    }

    /// Fills a `width` x `height` block at (`x`, `y`) pixels with one colour.
    static func block(_ pixels: inout [UInt8], x: Int, y: Int, width: Int, height: Int, bgr: (UInt8, UInt8, UInt8)) {
        for row in max(y, 0)..<min(y + height, size.height) {
            for column in max(x, 0)..<min(x + width, size.width) {
                let offset = (row * size.width + column) * 4
                pixels[offset] = bgr.0
                pixels[offset + 1] = bgr.1
                pixels[offset + 2] = bgr.2
            }
        }
    }

    /// Adds `delta` to every colour channel, clipping at 0 and 255.
    static func brighten(_ pixels: inout [UInt8], by delta: Int) {
        for i in pixels.indices where i % 4 != 3 {
            pixels[i] = UInt8(clamping: Int(pixels[i]) + delta)
        }
    }

    /// Multiplies every colour channel by `gain`, clipping at 255.
    static func gain(_ pixels: inout [UInt8], _ gain: Double) {
        for i in pixels.indices where i % 4 != 3 {
            pixels[i] = UInt8(clamping: Int((Double(pixels[i]) * gain).rounded()))
        }
    }

    /// Adds gaussian-ish noise to every channel: the sum of four uniform integers in 0...3, centred, so within
    /// ±6 with a standard deviation of 2.2 (independent per pixel and channel, as sensor noise is).
    static func addNoise(_ pixels: inout [UInt8], generator: inout SeededGenerator) {
        for i in pixels.indices where i % 4 != 3 {
            let bits = generator.next()
            var sum = 0
            for k in 0..<4 { sum += Int((bits >> (16 * UInt64(k))) & 3) }
            pixels[i] = UInt8(clamping: Int(pixels[i]) + sum - 6)
        }
    }
}
