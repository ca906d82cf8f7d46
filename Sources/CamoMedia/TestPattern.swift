/// The synthetic picture: moving colour bars and a grey ramp, a machine-readable frame number,
/// the same number in digits, and a white flash once a second.
///
/// Layout, as fractions of the frame so it survives scaling:
/// - rows `[0, h/2)`: eight colour bars, shifted left by the frame number;
/// - rows `[h/2, 2h/3)` and `[11h/12, h)`: a grey ramp, shifted the same way;
/// - rows `[2h/3, 11h/12)`: a mid-grey code band holding
///   - rows `[17h/24, 19h/24)`: 44 black/white blocks, block `i` spanning columns
///     `[w(2+i)/48, w(3+i)/48)`: start guard (white, black), the frame number's low 32 bits
///     (most significant first, white = 1), a CRC-8 (polynomial 0x07) of those 4 big-endian bytes,
///     and a stop guard (black, white);
///   - from row `39h/48`: the frame number in decimal, black 5x7 digits scaled up.
/// - Every frame whose number is a multiple of 30 is a flash frame: white outside the code band.
///
/// Rendering copies precomputed rows (no per-pixel work over the whole frame), so it keeps up
/// with 30 fps at 1280x720 even in a debug build.
public enum TestPattern {
    /// Number of blocks in the code row.
    static let blockCount = 44
    /// The frame is divided into this many block columns (2 margin columns each side).
    static let blockColumns = 48
    /// Flash period in frames.
    public static let flashInterval: UInt64 = 30

    private static let grey: UInt32 = pixel(128, 128, 128)
    private static let white: UInt32 = pixel(255, 255, 255)
    private static let black: UInt32 = pixel(0, 0, 0)
    private static let bars: [UInt32] = [
        pixel(235, 235, 235), pixel(235, 235, 16), pixel(16, 235, 235), pixel(16, 235, 16),
        pixel(235, 16, 235), pixel(235, 16, 16), pixel(16, 16, 235), pixel(16, 16, 16),
    ]

    /// A BGRA pixel as a `UInt32` whose memory bytes are B, G, R, A on any host.
    private static func pixel(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt32 {
        (UInt32(blue) | UInt32(green) << 8 | UInt32(red) << 16 | 0xFF00_0000).littleEndian
    }

    // MARK: Rendering

    /// Renders frame `frameNumber` at `size` into `buffer` as BGRA with `bytesPerRow = 4 * width`.
    ///
    /// `buffer` is reallocated only when its count does not match the size. A size with a
    /// non-positive side renders nothing and leaves `buffer` empty.
    public static func render(frameNumber: UInt64, size: VideoSize, into buffer: inout [UInt8]) {
        let width = size.width
        let height = size.height
        guard width > 0, height > 0 else {
            buffer = []
            return
        }
        let rowBytes = width * 4
        if buffer.count != rowBytes * height {
            buffer = [UInt8](repeating: 0, count: rowBytes * height)
        }
        let flash = frameNumber % flashInterval == 0
        let step = UInt64(max(1, width / 160))
        let shift = Int((frameNumber % UInt64(width)) * step % UInt64(width))

        // All source rows live in one array; `offsets` says where each starts (in pixels).
        var rows: [UInt32] = []
        rows.reserveCapacity(width * 14)
        let barsOffset = rows.count
        appendBarsRow(width: width, to: &rows)
        let rampOffset = rows.count
        appendRampRow(width: width, to: &rows)
        let whiteOffset = rows.count
        rows.append(contentsOf: repeatElement(white, count: width))
        let greyOffset = rows.count
        rows.append(contentsOf: repeatElement(grey, count: width))
        let codeOffset = rows.count
        appendCodeRow(value: UInt32(truncatingIfNeeded: frameNumber), width: width, to: &rows)
        let digitsOffset = rows.count
        let digitScale = appendDigitRows(text: String(frameNumber), width: width, height: height, to: &rows)

        let bandTop = height * 2 / 3
        let bandBottom = height * 11 / 12
        let codeTop = height * 17 / 24
        let codeBottom = height * 19 / 24
        let digitTop = height * 39 / 48
        let digitBottom = digitTop + 7 * digitScale

        rows.withUnsafeBytes { source in
            buffer.withUnsafeMutableBytes { destination in
                // Both buffers are non-empty (width, height > 0), so their base addresses exist.
                guard let from = source.baseAddress, let to = destination.baseAddress else { return }
                for y in 0..<height {
                    let pixelOffset: Int
                    if y >= bandTop && y < bandBottom {
                        if y >= codeTop && y < codeBottom {
                            pixelOffset = codeOffset
                        } else if y >= digitTop && y < digitBottom {
                            pixelOffset = digitsOffset + ((y - digitTop) / digitScale) * width
                        } else {
                            pixelOffset = greyOffset
                        }
                    } else if flash {
                        pixelOffset = whiteOffset
                    } else if y < height / 2 {
                        pixelOffset = barsOffset + shift
                    } else {
                        pixelOffset = rampOffset + shift
                    }
                    (to + y * rowBytes).copyMemory(from: from + pixelOffset * 4, byteCount: rowBytes)
                }
            }
        }
    }

    /// A whole frame: ``render(frameNumber:size:into:)`` into a new buffer.
    public static func frame(number frameNumber: UInt64, size: VideoSize, captureTime: UInt64) -> VideoFrame {
        var data: [UInt8] = []
        render(frameNumber: frameNumber, size: size, into: &data)
        return VideoFrame(
            width: size.width, height: size.height, bytesPerRow: size.width * 4, pixelFormat: .bgra,
            data: data, captureTime: captureTime, sourceSequence: frameNumber)
    }

    /// Two periods (2 x width) of the colour bars, so any shift is one contiguous copy.
    private static func appendBarsRow(width: Int, to rows: inout [UInt32]) {
        for _ in 0..<2 {
            for (index, colour) in bars.enumerated() {
                let start = width * index / bars.count
                let end = width * (index + 1) / bars.count
                rows.append(contentsOf: repeatElement(colour, count: end - start))
            }
        }
    }

    /// Two periods of a 32-step grey ramp, dark to light.
    private static func appendRampRow(width: Int, to rows: inout [UInt32]) {
        let steps = 32
        for _ in 0..<2 {
            for index in 0..<steps {
                let start = width * index / steps
                let end = width * (index + 1) / steps
                let level = UInt8(16 + index * (235 - 16) / (steps - 1))
                rows.append(contentsOf: repeatElement(pixel(level, level, level), count: end - start))
            }
        }
    }

    /// The block row: grey margins and 44 black/white blocks.
    private static func appendCodeRow(value: UInt32, width: Int, to rows: inout [UInt32]) {
        let start = rows.count
        rows.append(contentsOf: repeatElement(grey, count: width))
        for (index, bit) in codeBits(value).enumerated() {
            let left = width * (2 + index) / blockColumns
            let right = width * (3 + index) / blockColumns
            let colour = bit ? white : black
            for x in left..<right { rows[start + x] = colour }
        }
    }

    /// Seven rows of digits on grey; returns the scale (pixels per font pixel).
    private static func appendDigitRows(text: String, width: Int, height: Int, to rows: inout [UInt32]) -> Int {
        let scale = max(1, height / 84)
        let start = rows.count
        rows.append(contentsOf: repeatElement(grey, count: width * 7))
        let left = width * 2 / blockColumns
        for (position, character) in text.utf8.enumerated() {
            guard let glyph = DigitFont.glyph(character) else { continue }
            let glyphLeft = left + position * 6 * scale
            for (row, bits) in glyph.enumerated() {
                for column in 0..<5 where bits & (0x10 >> column) != 0 {
                    let x0 = glyphLeft + column * scale
                    let x1 = min(width, x0 + scale)
                    guard x0 < x1 else { continue }
                    for x in x0..<x1 { rows[start + row * width + x] = black }
                }
            }
        }
        return scale
    }

    /// The 44 block values (true = white) for `value`.
    static func codeBits(_ value: UInt32) -> [Bool] {
        var bits: [Bool] = [true, false]
        for shift in stride(from: 31, through: 0, by: -1) { bits.append(value >> UInt32(shift) & 1 == 1) }
        let checksum = crc8(value)
        for shift in stride(from: 7, through: 0, by: -1) { bits.append(checksum >> UInt8(shift) & 1 == 1) }
        bits.append(contentsOf: [false, true])
        return bits
    }

    /// CRC-8, polynomial x^8 + x^2 + x + 1 (0x07), initial value 0, over the 4 big-endian bytes of `value`.
    static func crc8(_ value: UInt32) -> UInt8 {
        var crc: UInt8 = 0
        for byteIndex in stride(from: 3, through: 0, by: -1) {
            crc ^= UInt8(truncatingIfNeeded: value >> UInt32(byteIndex * 8))
            for _ in 0..<8 {
                crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1
            }
        }
        return crc
    }

    // MARK: Reading back

    /// The frame number carried by the block row (its low 32 bits), or nil when the frame does not
    /// carry a valid code (wrong guards, a block that is neither clearly black nor clearly white,
    /// a bad checksum, or a frame that breaks the contract).
    ///
    /// Samples a small box at the centre of each block, so it reads frames that went through
    /// JPEG (quality 50 and up) and scaling, down to 320x180.
    public static func readFrameNumber(_ frame: VideoFrame) -> UInt64? {
        guard (try? MediaContract.validate(frame)) != nil else { return nil }
        guard frame.width >= blockColumns, frame.height >= 24 else { return nil }
        let sampler = LumaSampler(frame: frame)
        let blockWidth = Double(frame.width) / Double(blockColumns)
        let centreY = Double(frame.height) * 0.75
        let halfHeight = Double(frame.height) / 48
        var bits: [Bool] = []
        bits.reserveCapacity(blockCount)
        for index in 0..<blockCount {
            let centreX = (Double(2 + index) + 0.5) * blockWidth
            let level = sampler.mean(centreX: centreX, centreY: centreY, halfWidth: blockWidth / 4, halfHeight: halfHeight)
            if level < 80 {
                bits.append(false)
            } else if level > 175 {
                bits.append(true)
            } else {
                return nil
            }
        }
        guard bits[0], !bits[1], !bits[blockCount - 2], bits[blockCount - 1] else { return nil }
        var value: UInt32 = 0
        for bit in bits[2..<34] { value = value << 1 | (bit ? 1 : 0) }
        var checksum: UInt8 = 0
        for bit in bits[34..<42] { checksum = checksum << 1 | (bit ? 1 : 0) }
        guard checksum == crc8(value) else { return nil }
        return UInt64(value)
    }

    /// True for the white flash frame: the mean luma of sample rows outside the code band is over
    /// 90% of full scale.
    public static func isFlash(_ frame: VideoFrame) -> Bool {
        guard (try? MediaContract.validate(frame)) != nil else { return false }
        let sampler = LumaSampler(frame: frame)
        let rowFractions = [0.125, 0.25, 0.375, 7.0 / 12.0, 23.0 / 24.0]
        let columns = 32
        var total = 0.0
        for fraction in rowFractions {
            let y = Double(frame.height) * fraction
            for column in 0..<columns {
                total += sampler.luma(x: (Double(column) + 0.5) * Double(frame.width) / Double(columns), y: y)
            }
        }
        return total / Double(rowFractions.count * columns) > 0.9 * 255
    }
}

/// Reads BT.601 luma (0...255) from a BGRA frame at fractional positions (clamped to the frame).
private struct LumaSampler {
    let frame: VideoFrame

    func luma(x: Double, y: Double) -> Double {
        let column = min(frame.width - 1, max(0, Int(x)))
        let row = min(frame.height - 1, max(0, Int(y)))
        let offset = row * frame.bytesPerRow + column * 4
        let blue = Double(frame.data[offset])
        let green = Double(frame.data[offset + 1])
        let red = Double(frame.data[offset + 2])
        return 0.299 * red + 0.587 * green + 0.114 * blue
    }

    /// Mean luma over a 4x4 grid spread across the box.
    func mean(centreX: Double, centreY: Double, halfWidth: Double, halfHeight: Double) -> Double {
        let spread = [-0.75, -0.25, 0.25, 0.75]
        var total = 0.0
        for dy in spread {
            for dx in spread {
                total += luma(x: centreX + dx * halfWidth, y: centreY + dy * halfHeight)
            }
        }
        return total / Double(spread.count * spread.count)
    }
}

extension TestPattern {
    /// Random bytes the busy detail is cut from (4 MiB, fixed seed: the same on every machine).
    private static let detailSource: [UInt32] = {
        var state: UInt64 = 0x5EED_CA30_0000_0001
        return (0..<(1 << 20)).map { _ in
            // SplitMix64.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return UInt32(truncatingIfNeeded: z ^ (z >> 31)) | 0xFF00_0000
        }
    }()

    /// Paints the busy detail over a frame rendered by ``render(frameNumber:size:into:)``: rows `[h/8, 3h/8)` become
    /// noise that changes completely every frame, as a busy scene or a dark room's sensor noise does, so that an
    /// encoder needs all the bits it may use (the plain pattern needs about 1 Mb/s of H.264 at 1280x720). The code
    /// band and the digits are untouched, so frame numbers still read back. Flash frames stay white.
    public static func addDetail(frameNumber: UInt64, size: VideoSize, into buffer: inout [UInt8]) {
        let width = size.width
        let height = size.height
        guard width > 0, height > 0, buffer.count == width * height * 4, frameNumber % flashInterval != 0,
            width < detailSource.count
        else { return }
        let top = height / 8
        let bottom = height * 3 / 8
        let span = UInt64(detailSource.count - width)
        detailSource.withUnsafeBytes { source in
            buffer.withUnsafeMutableBytes { destination in
                guard let from = source.baseAddress, let to = destination.baseAddress else { return }
                for y in top..<bottom {
                    // A different, frame- and row-dependent place in the source for every row.
                    var z = frameNumber &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(y) &* 0xD1B5_4A32_D192_ED03
                    z = (z ^ (z >> 29)) &* 0xBF58_476D_1CE4_E5B9
                    let offset = Int((z ^ (z >> 32)) % span)
                    (to + y * width * 4).copyMemory(from: from + offset * 4, byteCount: width * 4)
                }
            }
        }
    }
}
