import CamoMedia

/// A rectangle in window pixels, top-left origin.
struct PixelRect: Sendable, Hashable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    /// Whether the pixel at (`px`, `py`) lies inside.
    func contains(_ px: Int, _ py: Int) -> Bool {
        px >= x && px < x + width && py >= y && py < y + height
    }
}

/// Where things go in the preview window: its first size, the picture's place, the overlay bar. Pure arithmetic.
enum PreviewLayout {
    /// The largest first window: the picture is scaled down to fit, never up.
    static let largestWindow = VideoSize.hd720
    /// The overlay's glyph pixels are this many window pixels wide and high.
    static let textScale = 2
    /// Space between the window's top-left corner and the overlay bar.
    static let barMargin = 8
    /// Space between the bar's edge and its text.
    static let barPadding = 6

    /// The window's first size for a picture of `picture` pixels: the same aspect ratio, scaled down to fit
    /// within `bound` (never scaled up), at least 1x1.
    static func initialWindowSize(for picture: VideoSize, bound: VideoSize = largestWindow) -> VideoSize {
        guard picture.width > 0, picture.height > 0 else { return bound }
        let scale = min(1, Double(bound.width) / Double(picture.width), Double(bound.height) / Double(picture.height))
        return VideoSize(
            width: max(1, Int((Double(picture.width) * scale).rounded())),
            height: max(1, Int((Double(picture.height) * scale).rounded())))
    }

    /// Where a picture of `picture` pixels is drawn in an output of `output` pixels: as large as fits with its
    /// aspect ratio kept, centred (black bars fill the rest).
    static func pictureRect(picture: VideoSize, output: VideoSize) -> PixelRect {
        guard picture.width > 0, picture.height > 0, output.width > 0, output.height > 0 else {
            return PixelRect(x: 0, y: 0, width: output.width, height: output.height)
        }
        // Compare aspect ratios in integers: picture.w / picture.h against output.w / output.h.
        if picture.width * output.height >= output.width * picture.height {
            let height = output.width * picture.height / picture.width
            return PixelRect(x: 0, y: (output.height - height) / 2, width: output.width, height: height)
        } else {
            let width = output.height * picture.width / picture.height
            return PixelRect(x: (output.width - width) / 2, y: 0, width: width, height: output.height)
        }
    }

    /// The translucent bar behind the overlay's `text`, at the window's top-left corner.
    static func barRect(for text: String) -> PixelRect {
        PixelRect(
            x: barMargin, y: barMargin,
            width: OverlayFont.width(of: text, scale: textScale) + 2 * barPadding,
            height: OverlayFont.glyphHeight * textScale + 2 * barPadding)
    }

    /// The top-left corner of the overlay's text.
    static var textOrigin: (x: Int, y: Int) { (barMargin + barPadding, barMargin + barPadding) }
}
