/// A width and height in pixels.
public struct VideoSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size of `width` x `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// 1280x720, the default capture and streaming size.
    public static let hd720 = VideoSize(width: 1280, height: 720)

    /// `WIDTHxHEIGHT`, e.g. `1280x720`.
    public var description: String { "\(width)x\(height)" }
}

/// One picture: pixels, their layout, and the CLOCK_MONOTONIC time it was captured.
///
/// A frame is a plain value; nothing is checked when it is built. ``MediaContract/validate(_:)``
/// decides whether it may enter the pipeline.
public struct VideoFrame: Sendable {
    /// Width in pixels.
    public var width: Int { didSet { jpegPlanes = nil } }
    /// Height in pixels.
    public var height: Int { didSet { jpegPlanes = nil } }
    /// Bytes from the start of one row to the start of the next (at least `4 * width` for BGRA).
    public var bytesPerRow: Int { didSet { jpegPlanes = nil } }
    /// The pixel layout of `data`.
    public var pixelFormat: PixelFormat { didSet { jpegPlanes = nil } }
    /// The pixel rows, `bytesPerRow * height` bytes.
    public var data: [UInt8] { didSet { jpegPlanes = nil } }
    /// The same picture in JPEG's colour space, when the producer made it already (``JPEGPlanes``); JPEG encoders
    /// then only compress. Changing the pixels, the size or the layout clears it, so it never describes other
    /// pixels. Nil for most frames.
    public var jpegPlanes: JPEGPlanes?
    /// Capture time, nanoseconds of CLOCK_MONOTONIC.
    public var captureTime: UInt64
    /// The source's own frame counter: the V4L2 buffer sequence, or the test pattern's frame number.
    public var sourceSequence: UInt64

    /// Creates a frame from its parts; see ``MediaContract/validate(_:)`` for what is accepted.
    public init(
        width: Int, height: Int, bytesPerRow: Int, pixelFormat: PixelFormat = .bgra,
        data: [UInt8], captureTime: UInt64, sourceSequence: UInt64 = 0
    ) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.pixelFormat = pixelFormat
        self.data = data
        self.captureTime = captureTime
        self.sourceSequence = sourceSequence
    }

    /// The frame's size.
    public var size: VideoSize { VideoSize(width: width, height: height) }
}
