/// Draws a ``SyntheticScene``'s frames. The still (and, for ``SyntheticScene/steps``, its two brightened copies) is
/// drawn once per size and kept, so a frame costs at most one copy and the block: it keeps up with 30 fps at
/// 1280x720 in a debug build.
public struct SceneRenderer: Sendable {
    /// The scene drawn.
    public let scene: SyntheticScene
    private var size = VideoSize(width: 0, height: 0)
    /// The still at ``size``, by brightness offset.
    private var stills: [Int: [UInt8]] = [:]

    /// A renderer of `scene`; nothing is drawn until the first frame.
    public init(scene: SyntheticScene) {
        self.scene = scene
    }

    /// Frame `frameNumber` at `size` as BGRA with `bytesPerRow = 4 * width` (empty for a size with a non-positive
    /// side).
    public mutating func render(frameNumber: UInt64, size: VideoSize) -> [UInt8] {
        guard size.width > 0, size.height > 0 else { return [] }
        if size != self.size {
            self.size = size
            stills = [:]
        }
        switch scene {
        case .steps:
            return still(brightness: SyntheticScene.brightnessOffset(frameNumber: frameNumber))
        case .block:
            var pixels = still(brightness: 0)
            let (columns, rows) = SyntheticScene.blockRect(frameNumber: frameNumber, size: size)
            let level = SyntheticScene.blockLevel
            let width = size.width
            pixels.withUnsafeMutableBufferPointer { buffer in
                for y in rows {
                    for x in columns {
                        let offset = (y * width + x) * 4
                        buffer[offset] = level
                        buffer[offset + 1] = level
                        buffer[offset + 2] = level
                    }
                }
            }
            return pixels
        }
    }

    /// Frame `frameNumber` as a ``VideoFrame`` captured at `captureTime`, with `frameNumber` as its source sequence.
    public mutating func frame(number frameNumber: UInt64, size: VideoSize, captureTime: UInt64) -> VideoFrame {
        VideoFrame(
            width: size.width, height: size.height, bytesPerRow: size.width * 4, pixelFormat: .bgra,
            data: render(frameNumber: frameNumber, size: size), captureTime: captureTime, sourceSequence: frameNumber)
    }

    private mutating func still(brightness: Int) -> [UInt8] {
        if let pixels = stills[brightness] { return pixels }
        let pixels = SceneStill.render(size: size, brightness: brightness)
        stills[brightness] = pixels
        return pixels
    }
}
