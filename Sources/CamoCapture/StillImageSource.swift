import CamoMedia
import Foundation

/// Why a still image cannot be shown as a camera.
public struct StillImageError: Error, CustomStringConvertible, Sendable {
    /// The sentence.
    public var description: String
}

/// A still image (PNG or JPEG) shown as a 30 fps camera: `--camera image:FILE`. Frame `n` carries sequence
/// number `n` and its due time as the capture time, like the test pattern. It makes QR scanning (pairing by
/// holding a screen up to the webcam) testable without hardware.
public final class StillImageSource: Sendable {
    /// The image as a BGRA frame (capture time and sequence are set per delivery).
    public let frame: VideoFrame
    /// The file it came from.
    public let path: String

    /// Reads and decodes `path`: PNG by its signature, JPEG by its SOI marker.
    /// - Throws: ``StillImageError`` for a missing file, another format, a broken image, or one larger than 4096x4096.
    public init(path: String) throws(StillImageError) {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StillImageError(description: "Cannot read the image \(path); check the path.")
        }
        let bytes = [UInt8](data)
        let width: Int
        let height: Int
        let pixels: [UInt8]
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            do {
                let image = try PNGImage.decode(bytes)
                (width, height, pixels) = (image.width, image.height, image.bgra)
            } catch {
                throw StillImageError(
                    description: "The PNG \(path) cannot be decoded: \(error) Check the file, or save the picture "
                        + "again as PNG or JPEG.")
            }
        } else if bytes.starts(with: [0xFF, 0xD8]) {
            do {
                let decoded = try JPEGDecoder().decode(bytes)
                (width, height, pixels) = (decoded.width, decoded.height, decoded.data)
            } catch {
                throw StillImageError(description: "The JPEG \(path) cannot be decoded: \(error)")
            }
        } else {
            throw StillImageError(description: "\(path) is neither a PNG nor a JPEG image.")
        }
        guard (1...MediaContract.maxDimension).contains(width), (1...MediaContract.maxDimension).contains(height) else {
            throw StillImageError(description: "The image \(path) is \(width)x\(height); the largest frame is \(MediaContract.maxDimension)x\(MediaContract.maxDimension).")
        }
        frame = VideoFrame(width: width, height: height, bytesPerRow: width * 4, data: pixels, captureTime: 0)
    }

    /// Delivers the image 30 times a second until the task is cancelled; a late wake-up skips to the newest
    /// due frame, as a camera would.
    public func run(clock: some MonotonicClock, startTime: UInt64, deliver: @Sendable (VideoFrame) -> Void) async {
        var n: UInt64 = 0
        var next = frame
        while !Task.isCancelled {
            do {
                try await clock.sleep(until: SyntheticVideoSource.frameTime(n, startTime: startTime))
            } catch {
                return
            }
            let now = clock.now.nanoseconds
            if now >= startTime { n = max(n, (now - startTime) * UInt64(MediaContract.fps) / 1_000_000_000) }
            next.captureTime = SyntheticVideoSource.frameTime(n, startTime: startTime)
            next.sourceSequence = n
            deliver(next)
            n += 1
        }
    }
}
