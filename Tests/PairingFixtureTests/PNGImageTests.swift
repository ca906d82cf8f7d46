import CamoMedia
import CamoQR
import CamoTestSupport
import Foundation
import Testing

/// Writes PNG files of any color type, bit depth and filter, independently of the decoder under test:
/// stored (uncompressed) deflate blocks, CRC-32 and Adler-32 computed here.
enum TestPNG {
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
    }

    /// A zlib stream of stored blocks (`blockSize` bytes at most each).
    static func zlibStored(_ data: [UInt8], blockSize: Int = 65_535) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(blockSize, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian(b << 16 | a)
    }

    /// Filters rows (packed samples, without filter bytes) with the given types (cycled), as an encoder would.
    static func filter(_ rows: [[UInt8]], types: [UInt8], step: Int) -> [UInt8] {
        var out: [UInt8] = []
        for (y, row) in rows.enumerated() {
            let type = types[y % types.count]
            let up = y > 0 ? rows[y - 1] : [UInt8](repeating: 0, count: row.count)
            out.append(type)
            for x in 0..<row.count {
                let left = x >= step ? Int(row[x - step]) : 0
                let above = Int(up[x])
                let upLeft = x >= step ? Int(up[x - step]) : 0
                let predictor: Int
                switch type {
                case 1: predictor = left
                case 2: predictor = above
                case 3: predictor = (left + above) / 2
                case 4:
                    let p = left + above - upLeft
                    let (pa, pb, pc) = (abs(p - left), abs(p - above), abs(p - upLeft))
                    predictor = pa <= pb && pa <= pc ? left : (pb <= pc ? above : upLeft)
                default: predictor = 0
                }
                out.append(row[x] &- UInt8(predictor & 0xFF))
            }
        }
        return out
    }

    static func header(width: Int, height: Int, depth: UInt8, colorType: UInt8, interlace: UInt8 = 0) -> [UInt8] {
        bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [depth, colorType, 0, 0, interlace]
    }

    /// A whole file: IHDR, `extra` chunks, the image data split into `idatCount` IDAT chunks, IEND.
    static func file(
        width: Int, height: Int, depth: UInt8, colorType: UInt8, rows: [[UInt8]], filters: [UInt8] = [0, 1, 2, 3, 4],
        step: Int, extra: [(String, [UInt8])] = [], idatCount: Int = 1, interlace: UInt8 = 0
    ) -> [UInt8] {
        let stream = zlibStored(filter(rows, types: filters, step: step), blockSize: 97)
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", header(width: width, height: height, depth: depth, colorType: colorType, interlace: interlace))
        for (type, data) in extra { out += chunk(type, data) }
        let piece = (stream.count + idatCount - 1) / idatCount
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + piece)
            out += chunk("IDAT", Array(stream[offset..<end]))
            offset = end
        }
        return out + chunk("IEND", [])
    }

    /// The seven Adam7 passes: first column, first row, column step, row step.
    static let adam7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

    /// An interlaced (Adam7) file of 8-bit samples, `step` bytes per pixel: each pass filtered on its own.
    static func interlacedFile(
        width: Int, height: Int, colorType: UInt8, rows: [[UInt8]], filters: [UInt8], step: Int
    ) -> [UInt8] {
        var filtered: [UInt8] = []
        for (left, top, columnStep, rowStep) in adam7 {
            let passRows = Swift.stride(from: top, to: height, by: rowStep).map { y in
                Swift.stride(from: left, to: width, by: columnStep).flatMap { x in rows[y][(x * step)..<((x + 1) * step)] }
            }
            guard let first = passRows.first, !first.isEmpty else { continue }
            filtered += filter(passRows, types: filters, step: step)
        }
        let stream = zlibStored(filtered, blockSize: 211)
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", header(width: width, height: height, depth: 8, colorType: colorType, interlace: 1))
        return out + chunk("IDAT", stream) + chunk("IEND", [])
    }

    /// Packs samples of `depth` bits (1, 2, 4) into bytes, most significant first.
    static func pack(_ samples: [Int], depth: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: (samples.count * depth + 7) / 8)
        for (index, sample) in samples.enumerated() {
            let bit = index * depth
            out[bit / 8] |= UInt8(sample << (8 - depth - bit % 8))
        }
        return out
    }

    static func onWhite(_ value: Int, _ alpha: Int) -> UInt8 { UInt8((value * alpha + 255 * (255 - alpha) + 127) / 255) }
}

@Suite("PNG files")
struct PNGImageTests {
    static func pixel(_ image: PNGImage, _ x: Int, _ y: Int) -> [UInt8] {
        let index = (y * image.width + x) * 4
        return Array(image.bgra[index..<(index + 4)])
    }

    @Test func grayRoundTripsThroughOurEncoder() throws {
        var rng = SeededGenerator(seed: 11)
        for (width, height) in [(1, 1), (7, 3), (64, 65), (333, 2)] {
            let pixels = rng.bytes(width * height)
            let file = PNGImage.encodeGray(width: width, height: height, pixels: pixels)
            #expect(file == PNGImage.encodeGray(width: width, height: height, pixels: pixels), "deterministic")
            // An 8-bit grayscale, non-interlaced file: IHDR first, as the signature says.
            #expect(Array(file.prefix(8)) == PNGImage.signature && String(decoding: file[12..<16], as: UTF8.self) == "IHDR")
            #expect(Array(file[16..<29]) == TestPNG.header(width: width, height: height, depth: 8, colorType: 0))
            let image = try PNGImage.decode(file)
            #expect(image.width == width && image.height == height && image.bytesPerRow == width * 4)
            #expect(image.bgra == pixels.flatMap { [$0, $0, $0, 255] })
            let frame = image.videoFrame(captureTime: 5)
            #expect(frame.width == width && frame.bytesPerRow == width * 4 && frame.data == image.bgra)
        }
    }

    @Test(arguments: [UInt8(0), 1, 2, 3, 4])
    func everyFilterForEveryColorType(filter: UInt8) throws {
        var rng = SeededGenerator(seed: 100 + UInt64(filter))
        let width = 13, height = 5
        // Gray.
        let gray = (0..<height).map { _ in rng.bytes(width) }
        var image = try PNGImage.decode(TestPNG.file(width: width, height: height, depth: 8, colorType: 0, rows: gray,
                                                     filters: [filter], step: 1))
        #expect(image.bgra == gray.flatMap { $0.flatMap { [$0, $0, $0, 255] } })
        // RGB.
        let rgb = (0..<height).map { _ in rng.bytes(width * 3) }
        image = try PNGImage.decode(TestPNG.file(width: width, height: height, depth: 8, colorType: 2, rows: rgb,
                                                 filters: [filter], step: 3))
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = (rgb[y][3 * x], rgb[y][3 * x + 1], rgb[y][3 * x + 2])
                #expect(Self.pixel(image, x, y) == [b, g, r, 255])
            }
        }
        // Gray + alpha, composited onto white.
        let grayAlpha = (0..<height).map { _ in rng.bytes(width * 2) }
        image = try PNGImage.decode(TestPNG.file(width: width, height: height, depth: 8, colorType: 4, rows: grayAlpha,
                                                 filters: [filter], step: 2))
        for y in 0..<height {
            for x in 0..<width {
                let value = TestPNG.onWhite(Int(grayAlpha[y][2 * x]), Int(grayAlpha[y][2 * x + 1]))
                #expect(Self.pixel(image, x, y) == [value, value, value, 255])
            }
        }
        // RGBA, composited onto white.
        let rgba = (0..<height).map { _ in rng.bytes(width * 4) }
        image = try PNGImage.decode(TestPNG.file(width: width, height: height, depth: 8, colorType: 6, rows: rgba,
                                                 filters: [filter], step: 4, idatCount: 3))
        for y in 0..<height {
            for x in 0..<width {
                let p = rgba[y][(4 * x)..<(4 * x + 4)].map(Int.init)
                #expect(Self.pixel(image, x, y) == [TestPNG.onWhite(p[2], p[3]), TestPNG.onWhite(p[1], p[3]),
                                                    TestPNG.onWhite(p[0], p[3]), 255])
            }
        }
    }

    /// Pixels from a tiny range make the predictors tie often: the ties must break as the PNG spec says.
    @Test(arguments: [UInt8(3), 4])
    func predictorTies(filter: UInt8) throws {
        var rng = SeededGenerator(seed: 77)
        let rows = (0..<16).map { _ in (0..<48).map { _ in UInt8.random(in: 0...3, using: &rng) * 85 } }
        for (colorType, step) in [(UInt8(0), 1), (2, 3)] {
            let width = 48 / step
            let image = try PNGImage.decode(TestPNG.file(width: width, height: 16, depth: 8, colorType: colorType,
                                                         rows: rows, filters: [filter], step: step))
            for y in 0..<16 {
                for x in 0..<width {
                    let rgb = colorType == 0 ? [rows[y][x], rows[y][x], rows[y][x]] : Array(rows[y][(3 * x)..<(3 * x + 3)])
                    #expect(Self.pixel(image, x, y) == [rgb[2], rgb[1], rgb[0], 255])
                }
            }
        }
    }

    @Test(arguments: [1, 2, 4, 8])
    func paletteAtEveryDepth(depth: Int) throws {
        var rng = SeededGenerator(seed: UInt64(depth))
        let entries = 1 << depth
        let palette = rng.bytes(entries * 3)
        let alphas = rng.bytes(entries / 2)  // tRNS may be shorter than the palette
        let width = 11, height = 4
        let indices = (0..<height).map { _ in (0..<width).map { _ in Int.random(in: 0..<entries, using: &rng) } }
        let rows = indices.map { depth == 8 ? $0.map(UInt8.init) : TestPNG.pack($0, depth: depth) }
        let file = TestPNG.file(width: width, height: height, depth: UInt8(depth), colorType: 3, rows: rows, step: 1,
                                extra: [("PLTE", palette), ("tRNS", alphas)])
        let image = try PNGImage.decode(file)
        for y in 0..<height {
            for x in 0..<width {
                let index = indices[y][x]
                let alpha = index < alphas.count ? Int(alphas[index]) : 255
                let rgb = palette[(3 * index)..<(3 * index + 3)].map { TestPNG.onWhite(Int($0), alpha) }
                #expect(Self.pixel(image, x, y) == [rgb[2], rgb[1], rgb[0], 255])
            }
        }
    }

    @Test(arguments: [1, 2, 4])
    func lowDepthGrayIsScaled(depth: Int) throws {
        let maxValue = (1 << depth) - 1
        let width = 9
        let samples = (0..<width).map { $0 % (maxValue + 1) }
        let file = TestPNG.file(width: width, height: 2, depth: UInt8(depth), colorType: 0,
                                rows: [TestPNG.pack(samples, depth: depth), TestPNG.pack(samples.reversed(), depth: depth)],
                                step: 1, extra: [("tRNS", [0, UInt8(maxValue)])])
        let image = try PNGImage.decode(file)
        for x in 0..<width {
            let sample = samples[x]
            // The tRNS key (the brightest value) is transparent: white.
            let value = sample == maxValue ? 255 : UInt8(sample * 255 / maxValue)
            #expect(Self.pixel(image, x, 0) == [value, value, value, 255])
        }
    }

    /// 16-bit samples are scaled to 8 bits (value / 257, rounded), as sRGB: no gamma change without a gAMA chunk.
    @Test func sixteenBitSamplesAreScaled() throws {
        let rows: [[UInt8]] = [[0x12, 0x34, 0xAB, 0xCD, 0xFF, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03]]
        let image = try PNGImage.decode(TestPNG.file(
            width: 2, height: 1, depth: 16, colorType: 2, rows: rows, step: 6, extra: [("tRNS", [0, 1, 0, 2, 0, 3])]))
        #expect(Self.pixel(image, 0, 0) == [0xFE, 0xAB, 0x12, 255])
        #expect(Self.pixel(image, 1, 0) == [255, 255, 255, 255], "the tRNS key compares all 16 bits")
    }

    /// Adam7 files decode to the same pixels as the plain file of the same rows, for every filter.
    @Test(arguments: [UInt8(0), 1, 2, 3, 4])
    func interlacedFilesDecode(filter: UInt8) throws {
        var rng = SeededGenerator(seed: 300 + UInt64(filter))
        for (width, height) in [(1, 1), (3, 2), (9, 13), (17, 8)] {
            let rgb = (0..<height).map { _ in rng.bytes(width * 3) }
            let interlaced = try PNGImage.decode(TestPNG.interlacedFile(
                width: width, height: height, colorType: 2, rows: rgb, filters: [filter], step: 3))
            let plain = try PNGImage.decode(TestPNG.file(width: width, height: height, depth: 8, colorType: 2, rows: rgb,
                                                         filters: [filter], step: 3))
            #expect(interlaced == plain, "\(width)x\(height)")
            #expect(Self.pixel(interlaced, width - 1, height - 1)
                    == [rgb[height - 1][3 * width - 1], rgb[height - 1][3 * width - 2], rgb[height - 1][3 * width - 3], 255])
        }
    }

    @Test func ancillaryChunksAreSkipped() throws {
        let file = TestPNG.file(width: 2, height: 1, depth: 8, colorType: 0, rows: [[10, 20]], step: 1,
                                extra: [("gAMA", [0, 0, 0xB1, 0x8F]), ("tEXt", Array("Comment\u{0}hi".utf8))])
        #expect(try PNGImage.decode(file).bgra == [10, 10, 10, 255, 20, 20, 20, 255])
    }

    static func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try PNGImage.decode(bytes)
            return nil
        } catch {
            return error.detail
        }
    }

    @Test func refusesWhatItCannotRead() throws {
        let rows: [[UInt8]] = [[1, 2, 3], [4, 5, 6]]
        let valid = TestPNG.file(width: 3, height: 2, depth: 8, colorType: 0, rows: rows, step: 1)
        #expect(Self.refusal(valid) == nil)
        #expect(Self.refusal([]).map { $0.contains("not a PNG") } == true)
        #expect(Self.refusal(Array("GIF89a".utf8)).map { $0.contains("not a PNG") } == true)
        #expect(Self.refusal(Array(valid.prefix(7))).map { $0.contains("not a PNG") } == true)
        // Every truncation before the end of the image data is refused; one that loses only the IEND chunk
        // still has the whole picture (libpng reads no further than it needs).
        let iend = valid.count - 12
        for length in 8..<iend {
            #expect(Self.refusal(Array(valid.prefix(length))) != nil, "truncated to \(length)")
        }
        for length in iend..<valid.count {
            #expect(try PNGImage.decode(Array(valid.prefix(length))).bgra == rows.joined().flatMap { [$0, $0, $0, 255] })
        }
        #expect(Self.refusal(Array(valid.prefix(40))).map { $0.contains("truncated") } == true)
        // A flipped bit in the header: the CRC catches it; in the image data: zlib's checks, the filter type or
        // the CRC.
        var damaged = valid
        damaged[17] ^= 0x10
        #expect(Self.refusal(damaged).map { $0.contains("CRC") } == true)
        for offset in 41..<(iend - 4) {
            damaged = valid
            damaged[offset] ^= 0x10
            #expect(Self.refusal(damaged) != nil, "bit flipped at \(offset)")
        }
        // Too big, bad depth, unknown critical chunk, no palette, bad filter.
        let huge = TestPNG.file(width: 8193, height: 1, depth: 8, colorType: 0, rows: [[]], step: 1)
        #expect(Self.refusal(huge).map { $0.contains("8192") } == true)
        let badDepth = TestPNG.file(width: 1, height: 1, depth: 4, colorType: 2, rows: [[0]], step: 1)
        #expect(Self.refusal(badDepth).map { $0.contains("IHDR") } == true)
        let critical = TestPNG.file(width: 1, height: 1, depth: 8, colorType: 0, rows: [[0]], step: 1,
                                    extra: [("ZZZZ", [])])
        #expect(Self.refusal(critical).map { $0.contains("ZZZZ") } == true)
        let noPalette = TestPNG.file(width: 1, height: 1, depth: 8, colorType: 3, rows: [[0]], step: 1)
        #expect(Self.refusal(noPalette).map { $0.contains("PLTE") } == true)
        let badFilter = TestPNG.file(width: 1, height: 1, depth: 8, colorType: 0, rows: [[0]], filters: [5], step: 1)
        #expect(Self.refusal(badFilter).map { $0.contains("filter") } == true)
        // Too little image data for the size, and IDAT chunks that are not consecutive.
        let short = TestPNG.file(width: 3, height: 3, depth: 8, colorType: 0, rows: rows, step: 1)
        #expect(Self.refusal(short).map { $0.contains("image data") } == true)
        var split = Array(valid.prefix(33))
        let stream = TestPNG.zlibStored(TestPNG.filter(rows, types: [0], step: 1))
        split += TestPNG.chunk("IDAT", Array(stream.prefix(4))) + TestPNG.chunk("tEXt", Array("a\u{0}b".utf8))
        split += TestPNG.chunk("IDAT", Array(stream.dropFirst(4))) + TestPNG.chunk("IEND", [])
        #expect(Self.refusal(split).map { $0.contains("image data") } == true)
    }

    /// What libpng only warns about is decoded: image data beyond the picture is ignored, and a palette index
    /// past the palette's end is black.
    @Test func toleratesHarmlessDamage() throws {
        let long = TestPNG.file(width: 3, height: 1, depth: 8, colorType: 0, rows: [[1, 2, 3], [4, 5, 6]], step: 1)
        #expect(try PNGImage.decode(long).bgra == [1, 1, 1, 255, 2, 2, 2, 255, 3, 3, 3, 255])
        let badIndex = TestPNG.file(width: 2, height: 1, depth: 8, colorType: 3, rows: [[0, 2]], step: 1,
                                    extra: [("PLTE", [1, 2, 3, 4, 5, 6])])
        #expect(try PNGImage.decode(badIndex).bgra == [3, 2, 1, 255, 0, 0, 0, 255])
    }

    /// PNG files written by ffmpeg's encoder (every filter, chosen per row), from raw pixels of each layout.
    @Test(arguments: ["gray", "ya8", "rgb24", "rgba", "monob", "gray16be", "rgb48be", "rgba64be"])
    func readsFilesWrittenByFFmpeg(layout: String) throws {
        guard let ffmpeg = Tool.find("ffmpeg") else {
            Issue.record("ffmpeg is missing: apt-get install ffmpeg")
            return
        }
        let (width, height) = (37, 11)
        let bytesPerPixel = ["gray": 1, "ya8": 2, "rgb24": 3, "rgba": 4, "gray16be": 2, "rgb48be": 6, "rgba64be": 8]
        var rng = SeededGenerator(seed: UInt64(layout.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude))
        let rowBytes = layout == "monob" ? (width + 7) / 8 : width * bytesPerPixel[layout]!
        let raw = rng.bytes(rowBytes * height)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camo-png-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.raw"), output = directory.appendingPathComponent("out.png")
        try Data(raw).write(to: input)
        let (_, status) = try Tool.run(ffmpeg, [
            "-v", "error", "-f", "rawvideo", "-pix_fmt", layout, "-s", "\(width)x\(height)", "-i", input.path,
            "-frames:v", "1", "-pix_fmt", layout, "-pred", "mixed", output.path,
        ])
        #expect(status == 0, "ffmpeg exited with \(status)")
        let image = try PNGImage.decode([UInt8](Data(contentsOf: output)))
        #expect(image.width == width && image.height == height)
        /// Sample `index` of row `y` scaled to 8 bits (16-bit: value / 257, rounded).
        func sample(_ y: Int, _ index: Int) -> Int {
            switch layout {
            case "monob": return Int(raw[y * rowBytes + index / 8] >> (7 - index % 8) & 1) * 255
            case "gray16be", "rgb48be", "rgba64be":
                let value = Int(raw[y * rowBytes + 2 * index]) << 8 | Int(raw[y * rowBytes + 2 * index + 1])
                return (value + 128) / 257
            default: return Int(raw[y * rowBytes + index])
            }
        }
        for y in 0..<height {
            for x in 0..<width {
                let expected: [UInt8]
                switch layout {
                case "gray", "monob", "gray16be":
                    let value = UInt8(sample(y, x))
                    expected = [value, value, value, 255]
                case "ya8":
                    let value = TestPNG.onWhite(sample(y, 2 * x), sample(y, 2 * x + 1))
                    expected = [value, value, value, 255]
                case "rgb24", "rgb48be":
                    expected = [UInt8(sample(y, 3 * x + 2)), UInt8(sample(y, 3 * x + 1)), UInt8(sample(y, 3 * x)), 255]
                default:
                    let alpha = sample(y, 4 * x + 3)
                    expected = [TestPNG.onWhite(sample(y, 4 * x + 2), alpha), TestPNG.onWhite(sample(y, 4 * x + 1), alpha),
                                TestPNG.onWhite(sample(y, 4 * x), alpha), 255]
                }
                #expect(Self.pixel(image, x, y) == expected, "\(layout) at (\(x), \(y))")
            }
        }
    }

    /// 2000 mutations of a valid file (half of them with the CRCs repaired, so they reach the inner parsing):
    /// each is decoded or refused, never a crash.
    @Test func fuzzedFilesNeverCrash() throws {
        var rng = SeededGenerator(seed: 0x5EED)
        let qr = try QRCode("camo-pair:fuzz").pngData(moduleSize: 1, quietZone: 1)
        let palette = TestPNG.file(width: 5, height: 3, depth: 2, colorType: 3, rows: [[1, 2], [3, 0], [2, 1]], step: 1,
                                   extra: [("PLTE", rng.bytes(12)), ("tRNS", [0, 128])])
        let rgba = TestPNG.file(width: 4, height: 4, depth: 8, colorType: 6, rows: (0..<4).map { _ in rng.bytes(16) },
                                step: 4)
        let seeds = [qr, palette, rgba]
        var decoded = 0, refused = 0
        for iteration in 0..<2_000 {
            var bytes = seeds[iteration % seeds.count]
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            case 1:
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                }
            case 2:
                let at = Int.random(in: 8..<bytes.count, using: &rng)
                bytes.replaceSubrange(at..<min(bytes.count, at + 4), with: rng.bytes(4))
            default:
                bytes += rng.bytes(Int.random(in: 1...64, using: &rng))
            }
            if iteration % 2 == 0 { bytes = Self.repairingCRCs(bytes) }
            do {
                let image = try PNGImage.decode(bytes)
                #expect(image.bgra.count == image.width * image.height * 4)
                decoded += 1
            } catch {
                #expect(!error.detail.isEmpty)
                refused += 1
            }
        }
        #expect(decoded + refused == 2_000)
        #expect(refused > 500)
    }

    /// Recomputes each complete chunk's CRC so that mutated data gets past the CRC check.
    static func repairingCRCs(_ file: [UInt8]) -> [UInt8] {
        var bytes = file
        var position = 8
        while position + 12 <= bytes.count {
            let length = bytes[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length <= bytes.count - position - 12 else { break }
            let crc = TestPNG.bigEndian(TestPNG.crc32(Array(bytes[(position + 4)..<(position + 8 + length)])))
            bytes.replaceSubrange((position + 8 + length)..<(position + 12 + length), with: crc)
            position += 12 + length
        }
        return bytes
    }
}
