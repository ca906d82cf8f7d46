/// What is done to each captured frame before it is sent: the viewport crop scaled back to the frame's size,
/// then the rotation (90 and 270 swap width and height), then the flips (in the rotated picture's orientation).
///
/// All of it runs in libyuv, in as few passes over the pixels as the combination allows (each pass is one libyuv
/// call writing a whole picture):
///
/// | viewport | rotation and flips                                                        | passes |
/// |----------|---------------------------------------------------------------------------|--------|
/// | none     | none (identity: the frame itself is returned)                             | 0      |
/// | none     | any other: flips alone, 180°, 90° or 270° with or without flips           | 1      |
/// | zoomed   | none; a vertical flip; 180° with a horizontal flip (= a vertical flip) or | 1      |
/// |          | with both flips (= none)                                                  |        |
/// | zoomed   | any other (a turn of the crop, then the scale)                            | 2      |
///
/// Every combination is "read the source bottom-up or not (a vertical flip), then turn it by 0, 90, 180 or 270°"
/// (a horizontal flip is a vertical flip and a half turn), which is one libyuv call: `ARGBCopy` with a negative
/// height, `ARGBMirror` (a half turn is a mirror read bottom-up), or `ARGBRotate`. With a viewport and no turn,
/// `ARGBScale` reads the crop in place (bottom-up for a vertical flip) straight into the result; with a turn, the
/// crop is first turned into one intermediate buffer of the crop's size (fewer pixels than the frame's), which
/// is then scaled into the result.
///
/// The zoom is libyuv's bilinear `ARGBScale`. Its x86 column filter weighs the two neighbours 127/128 in all and
/// truncates, so a zoomed picture comes out up to 2 levels darker in every channel, alpha included (255 becomes
/// 253); rotations and flips copy pixels exactly.
public struct ImageTransform: Sendable, Hashable, Codable {
    /// Clockwise rotation, applied after the viewport.
    public var rotation: ImageRotation = .none
    /// Mirror left and right, in the rotated picture's orientation.
    public var flipHorizontal = false
    /// Mirror top and bottom, in the rotated picture's orientation.
    public var flipVertical = false
    /// The zoom-and-crop rectangle; nil or ``Viewport/isFull`` means no crop. A viewport with a
    /// ``Viewport/problem`` is not applied (the whole frame is used).
    public var viewport: Viewport? = nil

    /// Creates a transform; the defaults leave frames as they are.
    public init(
        rotation: ImageRotation = .none, flipHorizontal: Bool = false, flipVertical: Bool = false, viewport: Viewport? = nil
    ) {
        self.rotation = rotation
        self.flipHorizontal = flipHorizontal
        self.flipVertical = flipVertical
        self.viewport = viewport
    }

    /// The transform that changes nothing.
    public static let identity = ImageTransform()

    /// Whether the transform leaves every frame as it is: no rotation and no flip (or a half turn and both flips,
    /// which cancel out), and no viewport (or a full or invalid one).
    public var isIdentity: Bool {
        orientation == Orientation(bottomUp: false, turn: .none) && !zooms
    }

    /// The size of the transformed picture for an input of `size`.
    public func outputSize(for size: VideoSize) -> VideoSize {
        rotation.swapsSides ? VideoSize(width: size.height, height: size.width) : size
    }

    /// Applies the transform to a BGRA frame (any bytesPerRow ≥ 4*width); the result has bytesPerRow = 4*width,
    /// the same captureTime and sourceSequence. An identity transform returns the frame unchanged (no copy).
    ///
    /// The frame must be valid (frames are validated when they enter the pipeline); a violation is a programming
    /// error and stops the process. Use ``checkedApply(_:)`` for a frame that has not been validated.
    public func apply(_ frame: VideoFrame) -> VideoFrame {
        if isIdentity { return frame }
        do {
            return try checkedApply(frame)
        } catch {
            preconditionFailure("ImageTransform.apply: \(error)")
        }
    }

    /// Applies the transform like ``apply(_:)``, refusing a frame that ``MediaContract/validate(_:)`` refuses.
    public func checkedApply(_ frame: VideoFrame) throws(ContractError) -> VideoFrame {
        try MediaContract.validate(frame)
        // libyuv's rotations refuse rows whose stride is not a whole number of pixels: such a frame is packed first.
        if frame.bytesPerRow % 4 != 0 {
            var tight = [UInt8](repeating: 0, count: frame.width * 4 * frame.height)
            for row in 0..<frame.height {
                let from = row * frame.bytesPerRow, to = row * frame.width * 4
                tight[to..<(to + frame.width * 4)] = frame.data[from..<(from + frame.width * 4)]
            }
            return try checkedApply(VideoFrame(
                width: frame.width, height: frame.height, bytesPerRow: frame.width * 4, pixelFormat: frame.pixelFormat,
                data: tight, captureTime: frame.captureTime, sourceSequence: frame.sourceSequence))
        }
        let crop = zooms ? viewport?.crop(in: frame.size) : nil
        let orientation = self.orientation
        let size = outputSize(for: frame.size)
        let pixels: [UInt8]
        switch (crop, orientation.turn) {
        case (nil, _):
            if orientation == Orientation(bottomUp: false, turn: .none) { return frame }  // the viewport rounds to the whole frame
            pixels = BGRAKernels.orient(frame.data, .init(frame), bottomUp: orientation.bottomUp, turn: orientation.turn)
        case (let crop?, .none):
            pixels = BGRAKernels.scale(frame.data, .init(crop, of: frame), bottomUp: orientation.bottomUp, to: size)
        case (let crop?, let turn):
            let turned = BGRAKernels.orient(frame.data, .init(crop, of: frame), bottomUp: orientation.bottomUp, turn: turn)
            let turnedSize = turn.swapsSides
                ? VideoSize(width: crop.height, height: crop.width) : VideoSize(width: crop.width, height: crop.height)
            pixels = BGRAKernels.scale(turned, .init(tight: turnedSize), bottomUp: false, to: size)
        }
        return VideoFrame(
            width: size.width, height: size.height, bytesPerRow: size.width * 4, pixelFormat: .bgra, data: pixels,
            captureTime: frame.captureTime, sourceSequence: frame.sourceSequence)
    }

    /// Whether a viewport crops (it is set, valid and not the full frame).
    private var zooms: Bool {
        guard let viewport else { return false }
        return !viewport.isFull && viewport.problem == nil
    }

    /// The rotation and flips as one libyuv pass: the source read bottom-up or not, then turned clockwise.
    struct Orientation: Hashable {
        /// Read the source's rows from the bottom up (a vertical flip of the source).
        var bottomUp: Bool
        /// The clockwise turn after that.
        var turn: ImageRotation
    }

    /// The rotation then the flips, rewritten as a vertical flip of the source (or none) then a turn.
    ///
    /// A vertical flip after a turn by θ is a vertical flip before a turn by -θ; a horizontal flip is a vertical
    /// flip and a half turn, so after a turn by θ it is a vertical flip before a turn by 180° - θ; both flips are
    /// a half turn.
    var orientation: Orientation {
        let degrees = rotation.rawValue
        switch (flipHorizontal, flipVertical) {
        case (false, false): return Orientation(bottomUp: false, turn: rotation)
        case (false, true): return Orientation(bottomUp: true, turn: ImageRotation(normalizing: -degrees))
        case (true, false): return Orientation(bottomUp: true, turn: ImageRotation(normalizing: 180 - degrees))
        case (true, true): return Orientation(bottomUp: false, turn: ImageRotation(normalizing: degrees + 180))
        }
    }
}
