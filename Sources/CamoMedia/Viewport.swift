/// The zoom-and-crop rectangle (the camera model's `viewport`): `x1`,`y1` inclusive, `x2`,`y2` exclusive, in pixels
/// of `space` (the camera's capture size when it was set). Applied proportionally to frames of another size.
///
/// ``ImageTransform`` crops a frame to it and scales the crop back to the frame's size, which zooms in.
public struct Viewport: Sendable, Hashable, Codable {
    /// Left edge, the first column inside.
    public var x1: Int
    /// Top edge, the first row inside.
    public var y1: Int
    /// Right edge, the first column past the rectangle.
    public var x2: Int
    /// Bottom edge, the first row past the rectangle.
    public var y2: Int
    /// The frame size the coordinates are in.
    public var space: VideoSize

    /// Creates the rectangle from (`x1`, `y1`) to (`x2`, `y2`), the second corner exclusive, in pixels of `space`.
    public init(x1: Int, y1: Int, x2: Int, y2: Int, space: VideoSize) {
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
        self.space = space
    }

    /// The full frame (no zoom).
    public static func full(_ space: VideoSize) -> Viewport {
        Viewport(x1: 0, y1: 0, x2: space.width, y2: space.height, space: space)
    }

    /// Whether the rectangle is the whole of `space` (no zoom).
    public var isFull: Bool { self == .full(space) }

    /// Nil when valid; else a sentence a user can act on, naming the allowed range, e.g.
    /// "the viewport 0,0-0,720 has no area; x2 must be greater than x1 (the frame is 1280x720)" or
    /// "the viewport 100,100-1400,800 is outside the 1280x720 frame: x must be in 0...1280, y in 0...720".
    public var problem: String? {
        let name = "the viewport \(x1),\(y1)-\(x2),\(y2)"
        guard space.width >= 1, space.height >= 1 else {
            return "\(name) is set in a \(space) frame, which has no pixels; the frame's width and height must be at least 1"
        }
        let columns = 0...space.width, rows = 0...space.height
        guard columns.contains(x1), columns.contains(x2), rows.contains(y1), rows.contains(y2) else {
            return "\(name) is outside the \(space) frame: x must be in 0...\(space.width), y in 0...\(space.height)"
        }
        if x2 == x1 { return "\(name) has no area; x2 must be greater than x1 (the frame is \(space))" }
        if y2 == y1 { return "\(name) has no area; y2 must be greater than y1 (the frame is \(space))" }
        if x2 < x1 {
            return "\(name) is inverted: x2 (\(x2)) is left of x1 (\(x1)); x2 must be greater than x1 (the frame is \(space))"
        }
        if y2 < y1 {
            return "\(name) is inverted: y2 (\(y2)) is above y1 (\(y1)); y2 must be greater than y1 (the frame is \(space))"
        }
        return nil
    }

    /// The rectangle in pixels of a frame of `size`, or nil when it covers the whole frame or has a ``problem``.
    ///
    /// Each edge is scaled by the frame's size over ``space`` (`x * size.width / space.width`); the left and top
    /// edges are rounded down and the right and bottom ones up, so the crop holds all of the chosen area and stays
    /// inside the frame. A crop narrower or shorter than 2 pixels is widened to 2 (as far as the frame allows).
    func crop(in size: VideoSize) -> PixelRect? {
        guard problem == nil, size.width >= 1, size.height >= 1 else { return nil }
        // `edge * side / space` without overflow for any space (edge <= space, so the quotient is at most side).
        func scaled(_ edge: Int, _ space: Int, _ side: Int, roundingUp: Bool) -> Int {
            let (quotient, remainder) = space.dividingFullWidth(edge.multipliedFullWidth(by: side))
            return roundingUp && remainder > 0 ? quotient + 1 : quotient
        }
        func span(_ low: Int, _ high: Int, _ space: Int, _ side: Int) -> (start: Int, length: Int) {
            var start = scaled(low, space, side, roundingUp: false)
            var end = scaled(high, space, side, roundingUp: true)
            let minimum = min(2, side)
            if end - start < minimum {
                end = min(start + minimum, side)
                start = end - minimum
            }
            return (start, end - start)
        }
        let (x, width) = span(x1, x2, space.width, size.width)
        let (y, height) = span(y1, y2, space.height, size.height)
        if width == size.width, height == size.height { return nil }
        return PixelRect(x: x, y: y, width: width, height: height)
    }
}

/// A rectangle in whole pixels of one frame: its top-left corner and size.
struct PixelRect: Sendable, Hashable {
    /// The first column inside.
    var x: Int
    /// The first row inside.
    var y: Int
    /// Columns inside.
    var width: Int
    /// Rows inside.
    var height: Int
}
