/// The filler picture while the camera is gone: the last frame dimmed to a third, with "NO SIGNAL" across it
/// (mid grey with the label when there was no last frame). The studio's virtual camera uses it with
/// ``reconnectingLabel`` while its agent is away.
public enum NoSignalFrame {
    /// 5x7 glyphs of the label, one row per byte (bit 4 = leftmost column).
    private static let glyphs: [Character: [UInt8]] = [
        "N": [0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x11],
        "O": [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        "S": [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        "I": [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        "G": [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        "A": [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        "L": [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        "R": [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        "E": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        "C": [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        "T": [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        " ": [0, 0, 0, 0, 0, 0, 0],
    ]

    /// The label drawn on the frame.
    public static let label = "NO SIGNAL"
    /// The label while a studio waits for its agent to come back.
    public static let reconnectingLabel = "RECONNECTING"

    /// A BGRA frame of `size`: `last` (scaled when its size differs) dimmed, with `label` (letters of ``label`` and
    /// ``reconnectingLabel``) centred in white. `captureTime` and `sourceSequence` are the filler's own (the moment
    /// the camera was lost).
    public static func make(
        from last: VideoFrame?, size: VideoSize, captureTime: UInt64, sourceSequence: UInt64, label: String = label
    ) -> VideoFrame {
        let width = max(1, size.width), height = max(1, size.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        if let last, last.pixelFormat == .bgra, let source = try? FrameScaler.checkedScale(last, to: VideoSize(width: width, height: height)) {
            for y in 0..<height {
                let from = y * source.bytesPerRow, to = y * width * 4
                for x in 0..<width {
                    pixels[to + 4 * x] = source.data[from + 4 * x] / 3
                    pixels[to + 4 * x + 1] = source.data[from + 4 * x + 1] / 3
                    pixels[to + 4 * x + 2] = source.data[from + 4 * x + 2] / 3
                    pixels[to + 4 * x + 3] = 255
                }
            }
        } else {
            for index in stride(from: 0, to: pixels.count, by: 4) {
                pixels[index] = 48
                pixels[index + 1] = 48
                pixels[index + 2] = 48
                pixels[index + 3] = 255
            }
        }
        drawLabel(label, into: &pixels, width: width, height: height)
        return VideoFrame(
            width: width, height: height, bytesPerRow: width * 4, pixelFormat: .bgra, data: pixels,
            captureTime: captureTime, sourceSequence: sourceSequence)
    }

    private static func drawLabel(_ label: String, into pixels: inout [UInt8], width: Int, height: Int) {
        let characters = Array(label)
        // Each glyph is 5 columns plus 1 of spacing; scale so the label spans about half the width.
        let scale = max(1, min(width / 2 / (characters.count * 6), height / 4 / 7))
        let labelWidth = characters.count * 6 * scale - scale
        let originX = max(0, (width - labelWidth) / 2), originY = max(0, (height - 7 * scale) / 2)
        for (index, character) in characters.enumerated() {
            guard let rows = glyphs[character] else { continue }
            for (row, bits) in rows.enumerated() {
                for column in 0..<5 where bits & (0x10 >> UInt8(column)) != 0 {
                    for dy in 0..<scale {
                        for dx in 0..<scale {
                            let x = originX + (index * 6 + column) * scale + dx
                            let y = originY + row * scale + dy
                            guard x < width, y < height else { continue }
                            let offset = (y * width + x) * 4
                            pixels[offset] = 255
                            pixels[offset + 1] = 255
                            pixels[offset + 2] = 255
                        }
                    }
                }
            }
        }
    }
}
