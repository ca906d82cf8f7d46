import CamoMedia

/// What the virtual camera offers its consumers: one pixel format at one size and 30 fps, fixed for as long as
/// the device is fed (the agent's own size may change; frames are scaled to this one).
public struct VirtualCameraFormat: Sendable, Hashable, CustomStringConvertible {
    /// The pixel formats written: both are listed by Chrome, Firefox, Zoom, OBS and ffmpeg.
    public enum PixelFormat: String, Sendable, Hashable, CaseIterable {
        /// Packed 4:2:2 (Y0 U Y1 V), BT.601 limited range: what most webcams send, so every consumer takes it.
        case yuyv
        /// Planar 4:2:0 (Y, then U, then V), BT.601 limited range.
        case i420

        /// The V4L2 fourcc.
        public var fourcc: UInt32 {
            switch self {
            case .yuyv: Self.code("YUYV")
            case .i420: Self.code("YU12")
            }
        }

        private static func code(_ text: String) -> UInt32 {
            let bytes = Array(text.utf8)
            return UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
        }
    }

    /// The pixel format.
    public var pixelFormat: PixelFormat
    /// The picture's size (even sides: both formats subsample chroma horizontally).
    public var size: VideoSize
    /// Frames per second offered (the agent's rate).
    public var framesPerSecond: Int = 30

    /// A format; `size` must have even sides of at least 2 and at most 4096.
    public init(pixelFormat: PixelFormat = .yuyv, size: VideoSize = .hd720) throws(VirtualDeviceError) {
        guard (2...4096).contains(size.width), (2...4096).contains(size.height), size.width % 2 == 0, size.height % 2 == 0 else {
            throw .badFormat("\(size) cannot be offered: both sides must be even and 2...4096")
        }
        self.pixelFormat = pixelFormat
        self.size = size
    }

    /// Bytes of one line of the first plane.
    public var bytesPerLine: Int { pixelFormat == .yuyv ? size.width * 2 : size.width }

    /// Bytes of one frame.
    public var frameBytes: Int {
        switch pixelFormat {
        case .yuyv: size.width * size.height * 2
        case .i420: size.width * size.height + 2 * ((size.width / 2) * (size.height / 2))
        }
    }

    /// `YUYV 1280x720 at 30 fps`.
    public var description: String { "\(pixelFormat.rawValue.uppercased()) \(size) at \(framesPerSecond) fps" }
}
