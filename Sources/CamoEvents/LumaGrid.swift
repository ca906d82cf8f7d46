import CamoMedia

/// A picture's luma averaged over a grid of cells: the small picture motion is judged on.
///
/// Cell (c, r) covers the pixels whose column `x` has `x * columns / width == c` and whose row `y` has
/// `y * rows / height == r`, so cells tile the whole frame whatever its size.
public struct LumaGrid: Sendable, Equatable {
    /// Cells across.
    public let columns: Int
    /// Cells down.
    public let rows: Int
    /// Mean BT.601 full-range luma (0...255) of each cell, row by row from the top-left.
    public var values: [Float]
    /// The fraction (0...1) of each cell's samples with some colour channel at 250 or more: clipped white in that
    /// channel, so its luma no longer follows the exposure.
    public var whiteClipped: [Float]
    /// The fraction (0...1) of each cell's samples with some colour channel at 5 or less: clipped black.
    public var blackClipped: [Float]

    /// A grid from its values (`columns * rows` of them); clipping fractions default to none.
    public init(columns: Int, rows: Int, values: [Float], whiteClipped: [Float]? = nil, blackClipped: [Float]? = nil) {
        precondition(columns > 0 && rows > 0 && values.count == columns * rows, "LumaGrid: \(values.count) values for \(columns)x\(rows) cells")
        self.columns = columns
        self.rows = rows
        self.values = values
        self.whiteClipped = whiteClipped ?? [Float](repeating: 0, count: values.count)
        self.blackClipped = blackClipped ?? [Float](repeating: 0, count: values.count)
        precondition(self.whiteClipped.count == values.count && self.blackClipped.count == values.count, "LumaGrid: clipping fractions for \(values.count) cells")
    }

    /// The sampling step that `init(frame:columns:rows:)` picks: about 6 samples across the narrower side of a
    /// cell (36 or more per cell), so each cell's mean averages sensor noise down by 6 or more whatever the frame
    /// size (step 3 at 1280x720 on a 64x36 grid: 45 samples a cell; 5 at 1920x1080; 10 at 3840x2160). Sampling
    /// costs about 4 ns a sample, so this keeps a 720p frame under half a millisecond.
    public static func samplingStep(width: Int, height: Int, columns: Int, rows: Int) -> Int {
        max(1, min(width / max(columns, 1), height / max(rows, 1)) / 6)
    }

    /// The mean luma of each cell of `frame`, sampling every `step`th pixel of every `step`th row (half a step
    /// in), luma `(77 R + 150 G + 29 B) / 256`, and the fractions of clipped samples. Nil when the frame is not
    /// BGRA or RGBA, smaller than the grid, or its data is shorter than `bytesPerRow * height`.
    public init?(frame: VideoFrame, columns: Int, rows: Int, step: Int? = nil) {
        let redOffset: Int, blueOffset: Int
        switch frame.pixelFormat {
        case .bgra: (redOffset, blueOffset) = (2, 0)
        case .rgba: (redOffset, blueOffset) = (0, 2)
        default: return nil
        }
        let width = frame.width, height = frame.height, bytesPerRow = frame.bytesPerRow
        guard columns > 0, rows > 0, width >= columns, height >= rows, bytesPerRow >= 4 * width,
            frame.data.count >= bytesPerRow * (height - 1) + 4 * width
        else { return nil }
        let step = max(1, step ?? Self.samplingStep(width: width, height: height, columns: columns, rows: rows))
        // The byte offset in a row of each sampled pixel column, and for each cell column the range of sampled
        // columns it holds (contiguous: cells and samples both run left to right).
        var offsetOfSample: [Int] = []
        var firstSample = [Int](repeating: 0, count: columns + 1)
        var x = step / 2
        var column = 0
        while x < width {
            let cell = x * columns / width
            while column < cell {
                column += 1
                firstSample[column] = offsetOfSample.count
            }
            offsetOfSample.append(4 * x)
            x += step
        }
        while column < columns {
            column += 1
            firstSample[column] = offsetOfSample.count
        }
        // Per cell: luma sum, samples, samples clipped white, samples clipped black.
        var tallies = [UInt32](repeating: 0, count: 4 * columns * rows)
        frame.data.withUnsafeBufferPointer { buffer in
            // The guard above checked that every sampled byte lies inside the data; the buffer is not empty.
            let pixels = buffer.baseAddress!
            tallies.withUnsafeMutableBufferPointer { tallies in
                offsetOfSample.withUnsafeBufferPointer { offsetOfSample in
                    var y = step / 2
                    while y < height {
                        let rowBase = (y * rows / height) * columns
                        let row = y * bytesPerRow
                        for cell in 0..<columns {
                            var sum: UInt32 = 0, whites: UInt32 = 0, blacks: UInt32 = 0
                            for sample in firstSample[cell]..<firstSample[cell + 1] {
                                let offset = row + offsetOfSample[sample]
                                let red = pixels[offset + redOffset], green = pixels[offset + 1], blue = pixels[offset + blueOffset]
                                sum &+= 77 * UInt32(red) + 150 * UInt32(green) + 29 * UInt32(blue)
                                whites &+= max(max(red, green), blue) >= 250 ? 1 : 0
                                blacks &+= min(min(red, green), blue) <= 5 ? 1 : 0
                            }
                            let tally = 4 * (rowBase + cell)
                            tallies[tally] &+= sum
                            tallies[tally + 1] &+= UInt32(firstSample[cell + 1] - firstSample[cell])
                            tallies[tally + 2] &+= whites
                            tallies[tally + 3] &+= blacks
                        }
                        y += step
                    }
                }
            }
        }
        var values = [Float](repeating: 0, count: columns * rows)
        var whiteClipped = [Float](repeating: 0, count: columns * rows)
        var blackClipped = [Float](repeating: 0, count: columns * rows)
        for i in values.indices where tallies[4 * i + 1] > 0 {
            let count = Float(tallies[4 * i + 1])
            values[i] = Float(tallies[4 * i]) / count / 256
            whiteClipped[i] = Float(tallies[4 * i + 2]) / count
            blackClipped[i] = Float(tallies[4 * i + 3]) / count
        }
        self.columns = columns
        self.rows = rows
        self.values = values
        self.whiteClipped = whiteClipped
        self.blackClipped = blackClipped
    }
}
