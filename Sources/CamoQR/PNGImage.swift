import CZlib
import CamoMedia

/// Why a PNG file could not be read.
public struct PNGError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sentence for people: what is wrong with the file.
    public var detail: String

    /// Creates an error.
    public init(_ detail: String) {
        self.detail = detail
    }

    /// The ``detail`` sentence.
    public var description: String { detail }
}

/// A decoded PNG picture as BGRA pixels, and an encoder for 8-bit grayscale PNG files.
///
/// The decoder reads non-interlaced PNG files of every standard color type: gray (bit depth 1, 2, 4, 8, 16),
/// RGB (8, 16), palette (1, 2, 4, 8), gray with alpha (8, 16) and RGBA (8, 16), with the optional `tRNS`
/// transparency. Transparent pixels are composited onto white. 16-bit samples are cut to their high byte.
/// It refuses interlaced (Adam7) files, and anything damaged or hostile with a ``PNGError``: every length is
/// checked against the file, every chunk's CRC is checked, and the size is limited to ``maxDimension``.
public struct PNGImage: Sendable, Equatable {
    /// The widest and tallest picture the decoder accepts.
    public static let maxDimension = 8192

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Pixels as B, G, R, A bytes (A always 255), row by row, `width * 4` bytes per row.
    public let bgra: [UInt8]

    /// Bytes per row of ``bgra``: `width * 4`.
    public var bytesPerRow: Int { width * 4 }

    /// Creates a picture from BGRA pixels (`width * height * 4` bytes).
    public init(width: Int, height: Int, bgra: [UInt8]) {
        precondition(width >= 0 && height >= 0 && bgra.count == width * height * 4, "PNGImage: wrong pixel count")
        self.width = width
        self.height = height
        self.bgra = bgra
    }

    /// The picture as a BGRA ``VideoFrame``.
    public func videoFrame(captureTime: UInt64 = 0, sourceSequence: UInt64 = 0) -> VideoFrame {
        VideoFrame(
            width: width, height: height, bytesPerRow: bytesPerRow, pixelFormat: .bgra, data: bgra,
            captureTime: captureTime, sourceSequence: sourceSequence)
    }

    // MARK: Encoding

    /// An 8-bit grayscale PNG file (color type 0, not interlaced) of `pixels`, row by row.
    ///
    /// The output is deterministic: rows use the Up filter (the first row None) and zlib compresses at level 9.
    /// - Precondition: `width` and `height` are 1...``maxDimension`` and `pixels.count == width * height`.
    public static func encodeGray(width: Int, height: Int, pixels: [UInt8]) -> [UInt8] {
        precondition(
            (1...maxDimension).contains(width) && (1...maxDimension).contains(height)
                && pixels.count == width * height,
            "PNGImage.encodeGray: the size must be 1...\(maxDimension) and pixels.count width * height")
        var filtered = [UInt8](repeating: 0, count: height * (width + 1))
        for y in 0..<height {
            let out = y * (width + 1)
            let row = y * width
            if y == 0 {
                filtered[out] = 0
                for x in 0..<width { filtered[out + 1 + x] = pixels[row + x] }
            } else {
                filtered[out] = 2
                for x in 0..<width { filtered[out + 1 + x] = pixels[row + x] &- pixels[row - width + x] }
            }
        }
        var header: [UInt8] = []
        appendBigEndian(UInt32(width), to: &header)
        appendBigEndian(UInt32(height), to: &header)
        header += [8, 0, 0, 0, 0]  // depth 8, gray, deflate, adaptive filtering, no interlace
        var file = signature
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", compress(filtered), to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private static func compress(_ data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(compressBound(uLong(data.count))))
        var outputLength = uLongf(output.count)
        let status = output.withUnsafeMutableBufferPointer { out in
            data.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &outputLength, input.baseAddress, uLong(input.count), 9)
            }
        }
        // compress2 fails only when memory runs out (the buffer has compressBound's size).
        precondition(status == Z_OK, "PNGImage.encodeGray: zlib failed (\(status)), out of memory")
        output.removeSubrange(Int(outputLength)...)
        return output
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        appendBigEndian(UInt32(data.count), to: &file)
        file += typeBytes
        file += data
        appendBigEndian(crc(typeBytes[...], data[...]), to: &file)
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
                  UInt8(truncatingIfNeeded: value)]
    }

    /// The CRC-32 of a chunk's type and data.
    private static func crc(_ type: ArraySlice<UInt8>, _ data: ArraySlice<UInt8>) -> UInt32 {
        var value = crc32(0, nil, 0)
        for part in [type, data] where !part.isEmpty {
            value = part.withUnsafeBufferPointer { crc32(value, $0.baseAddress, uInt($0.count)) }
        }
        return UInt32(truncatingIfNeeded: value)
    }

    // MARK: Decoding

    /// Decodes a PNG file.
    ///
    /// - Throws: ``PNGError`` for a file that is not a PNG, is truncated or damaged (bad CRC, bad zlib stream,
    ///   too little or too much image data, a palette index out of range), is larger than ``maxDimension`` on
    ///   a side, or uses interlacing.
    public static func decode(_ bytes: [UInt8]) throws(PNGError) -> PNGImage {
        guard bytes.count >= 8, bytes[0..<8].elementsEqual(signature) else {
            throw PNGError("This is not a PNG file (it does not start with the PNG signature).")
        }
        var header: Header?
        var palette: [UInt8] = []  // RGBA entries
        var transparency: [UInt8]?
        var compressed: [UInt8] = []
        var idatState = 0  // 0 none yet, 1 in the IDAT run, 2 after it
        var position = 8
        var sawEnd = false
        while !sawEnd {
            guard bytes.count - position >= 12 else {
                throw PNGError("The PNG file is truncated (it ends before its IEND chunk).")
            }
            let length = Int(readBigEndian(bytes[...], at: position))
            guard length <= 0x7FFF_FFFF else { throw PNGError("The PNG file has a chunk length over 2^31 - 1.") }
            guard length <= bytes.count - position - 12 else {
                throw PNGError("The PNG file is truncated (a chunk of \(length) bytes runs past its end).")
            }
            let typeBytes = bytes[(position + 4)..<(position + 8)]
            guard typeBytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw PNGError("The PNG file has a chunk whose type is not four letters (the file is damaged).")
            }
            let type = String(decoding: typeBytes, as: UTF8.self)
            let data = bytes[(position + 8)..<(position + 8 + length)]
            let storedCRC = readBigEndian(bytes[...], at: position + 8 + length)
            guard crc(typeBytes, data) == storedCRC else {
                throw PNGError("The PNG file's \(type) chunk has a wrong CRC (the file is damaged).")
            }
            position += 12 + length
            guard header != nil || type == "IHDR" else {
                throw PNGError("The PNG file does not start with an IHDR chunk.")
            }
            if idatState == 1 && type != "IDAT" { idatState = 2 }
            switch type {
            case "IHDR":
                guard header == nil else { throw PNGError("The PNG file has two IHDR chunks.") }
                header = try Header(data)
            case "PLTE":
                guard idatState == 0, palette.isEmpty else {
                    throw PNGError("The PNG file has a PLTE chunk after the image data or twice.")
                }
                guard data.count % 3 == 0, (3...768).contains(data.count) else {
                    throw PNGError("The PNG file's palette has \(data.count) bytes (it must be 1 to 256 RGB entries).")
                }
                // Safe: the IHDR check above ran before any other chunk.
                guard header!.colorType != 0 && header!.colorType != 4 else {
                    throw PNGError("The PNG file has a palette in a grayscale image.")
                }
                var index = data.startIndex
                while index < data.endIndex {
                    palette += [data[index], data[index + 1], data[index + 2], 255]
                    index += 3
                }
            case "tRNS":
                guard idatState == 0, transparency == nil else {
                    throw PNGError("The PNG file has a tRNS chunk after the image data or twice.")
                }
                transparency = Array(data)
            case "IDAT":
                guard idatState != 2 else {
                    throw PNGError("The PNG file's IDAT chunks are not consecutive (the file is damaged).")
                }
                idatState = 1
                compressed += data
            case "IEND":
                sawEnd = true
            default:
                // Bit 5 of the first letter clear (upper case) marks a critical chunk we must understand.
                guard typeBytes[typeBytes.startIndex] & 0x20 != 0 else {
                    throw PNGError("The PNG file has a critical chunk \(type) that this reader does not know.")
                }
            }
        }
        // Safe: the loop only ends at IEND, and any chunk before it required the IHDR.
        let image = header!
        if image.colorType == 3 && palette.isEmpty {
            throw PNGError("The PNG file is a palette image without a PLTE chunk.")
        }
        if let transparency {
            try applyTransparency(transparency, to: &palette, image: image)
        }
        guard !compressed.isEmpty else { throw PNGError("The PNG file has no image data (no IDAT chunk).") }
        var raw = try inflate(compressed, expected: image.height * (1 + image.rowBytes))
        try unfilter(&raw, image: image)
        let pixels = try convert(raw, image: image, palette: palette, transparency: transparency)
        return PNGImage(width: image.width, height: image.height, bgra: pixels)
    }

    struct Header {
        var width: Int
        var height: Int
        var bitDepth: Int
        var colorType: Int
        var channels: Int
        /// Bytes per complete pixel, at least 1: the distance the Sub, Average and Paeth filters look back.
        var filterStep: Int { max(1, channels * bitDepth / 8) }
        /// Bytes per row, without the filter byte.
        var rowBytes: Int { (width * channels * bitDepth + 7) / 8 }

        init(_ data: ArraySlice<UInt8>) throws(PNGError) {
            guard data.count == 13 else { throw PNGError("The PNG file's IHDR chunk has \(data.count) bytes, not 13.") }
            let base = data.startIndex
            let rawWidth = PNGImage.readBigEndian(data, at: base)
            let rawHeight = PNGImage.readBigEndian(data, at: base + 4)
            guard rawWidth >= 1, rawHeight >= 1 else { throw PNGError("The PNG file says its picture is empty.") }
            guard rawWidth <= PNGImage.maxDimension, rawHeight <= PNGImage.maxDimension else {
                throw PNGError(
                    "The PNG picture is \(rawWidth)x\(rawHeight); at most \(PNGImage.maxDimension) pixels on a side "
                        + "are accepted.")
            }
            width = Int(rawWidth)
            height = Int(rawHeight)
            bitDepth = Int(data[base + 8])
            colorType = Int(data[base + 9])
            let allowedDepths: [Int]
            switch colorType {
            case 0: (channels, allowedDepths) = (1, [1, 2, 4, 8, 16])
            case 2: (channels, allowedDepths) = (3, [8, 16])
            case 3: (channels, allowedDepths) = (1, [1, 2, 4, 8])
            case 4: (channels, allowedDepths) = (2, [8, 16])
            case 6: (channels, allowedDepths) = (4, [8, 16])
            default: throw PNGError("The PNG file has an unknown color type \(colorType).")
            }
            guard allowedDepths.contains(bitDepth) else {
                throw PNGError("The PNG file has bit depth \(bitDepth), which color type \(colorType) does not allow.")
            }
            guard data[base + 10] == 0, data[base + 11] == 0 else {
                throw PNGError("The PNG file uses an unknown compression or filter method.")
            }
            switch data[base + 12] {
            case 0: break
            case 1: throw PNGError("Interlaced (Adam7) PNG files are not supported; save the picture without interlacing.")
            default: throw PNGError("The PNG file has an unknown interlace method \(data[base + 12]).")
            }
        }
    }

    /// The `u32` at `index` (an index of `bytes`, which the caller has checked holds 4 bytes there).
    private static func readBigEndian(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        bytes[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func applyTransparency(_ data: [UInt8], to palette: inout [UInt8], image: Header) throws(PNGError) {
        switch image.colorType {
        case 0:
            guard data.count == 2 else { throw PNGError("The PNG file's tRNS chunk has \(data.count) bytes, not 2.") }
        case 2:
            guard data.count == 6 else { throw PNGError("The PNG file's tRNS chunk has \(data.count) bytes, not 6.") }
        case 3:
            guard data.count <= palette.count / 4 else {
                throw PNGError("The PNG file's tRNS chunk has more entries than its palette.")
            }
            for (index, alpha) in data.enumerated() { palette[index * 4 + 3] = alpha }
        default:
            throw PNGError("The PNG file has a tRNS chunk in an image that already has an alpha channel.")
        }
    }

    /// Inflates the zlib stream into exactly `expected` bytes, growing the output only as data arrives.
    private static func inflate(_ compressed: [UInt8], expected: Int) throws(PNGError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(min(expected, 1 << 20))
        var piece = [UInt8](repeating: 0, count: 1 << 16)
        var stream = z_stream()
        guard inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw PNGError("zlib could not start (out of memory).")
        }
        defer { inflateEnd(&stream) }
        var input = compressed
        let result: Result<Void, PNGError> = input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            while true {
                let status = piece.withUnsafeMutableBufferPointer { pieceBuffer in
                    stream.next_out = pieceBuffer.baseAddress
                    stream.avail_out = uInt(pieceBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                stream.next_out = nil
                let produced = piece.count - Int(stream.avail_out)
                guard produced <= expected - output.count else {
                    return .failure(PNGError("The PNG file has more image data than its size needs (it is damaged)."))
                }
                output += piece[0..<produced]
                switch status {
                case Z_STREAM_END:
                    return .success(())
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    return .failure(PNGError("The PNG file's image data is truncated."))
                case Z_MEM_ERROR:
                    return .failure(PNGError("zlib ran out of memory reading the PNG file."))
                default:
                    return .failure(PNGError("The PNG file's image data is damaged (zlib error \(status))."))
                }
            }
        }
        stream.next_in = nil
        try result.get()
        guard output.count == expected else {
            throw PNGError(
                "The PNG file's image data is too short: \(output.count) of \(expected) bytes (the file is damaged).")
        }
        return output
    }

    /// Undoes the five PNG filters in place; the filter byte of each row stays in `raw`.
    private static func unfilter(_ raw: inout [UInt8], image: Header) throws(PNGError) {
        let rowBytes = image.rowBytes
        let step = image.filterStep
        let stride = rowBytes + 1
        var badFilter: UInt8?
        raw.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<image.height {
                let row = y * stride + 1
                let previous = row - stride  // only read when y > 0
                let filter = buffer[row - 1]
                switch filter {
                case 0:
                    break
                case 1:
                    for x in step..<max(step, rowBytes) { buffer[row + x] &+= buffer[row + x - step] }
                case 2:
                    guard y > 0 else { break }
                    for x in 0..<rowBytes { buffer[row + x] &+= buffer[previous + x] }
                case 3:
                    for x in 0..<rowBytes {
                        let left = x >= step ? Int(buffer[row + x - step]) : 0
                        let up = y > 0 ? Int(buffer[previous + x]) : 0
                        buffer[row + x] &+= UInt8((left + up) / 2)
                    }
                case 4:
                    for x in 0..<rowBytes {
                        let left = x >= step ? Int(buffer[row + x - step]) : 0
                        let up = y > 0 ? Int(buffer[previous + x]) : 0
                        let upLeft = x >= step && y > 0 ? Int(buffer[previous + x - step]) : 0
                        buffer[row + x] &+= paeth(left, up, upLeft)
                    }
                default:
                    badFilter = filter
                    return
                }
            }
        }
        if let badFilter {
            throw PNGError("The PNG file has a row with an unknown filter type \(badFilter) (the file is damaged).")
        }
    }

    private static func paeth(_ left: Int, _ up: Int, _ upLeft: Int) -> UInt8 {
        let estimate = left + up - upLeft
        let toLeft = abs(estimate - left)
        let toUp = abs(estimate - up)
        let toUpLeft = abs(estimate - upLeft)
        if toLeft <= toUp && toLeft <= toUpLeft { return UInt8(left) }
        return toUp <= toUpLeft ? UInt8(up) : UInt8(upLeft)
    }

    /// Unfiltered rows to BGRA, transparency composited onto white.
    private static func convert(
        _ raw: [UInt8], image: Header, palette: [UInt8], transparency: [UInt8]?
    ) throws(PNGError) -> [UInt8] {
        let width = image.width
        let depth = image.bitDepth
        let stride = image.rowBytes + 1
        let maxSample = (1 << depth) - 1
        let key: [Int]? = transparency.flatMap { data in
            guard image.colorType == 0 || image.colorType == 2 else { return nil }
            return (0..<(data.count / 2)).map { Int(data[2 * $0]) << 8 | Int(data[2 * $0 + 1]) }
        }
        let paletteCount = palette.count / 4
        var pixels = [UInt8](repeating: 255, count: width * image.height * 4)
        var badIndex: Int?
        raw.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { out in
                /// Sample `index` of the row starting at `row`, at the image's bit depth (16-bit: the whole value).
                func sample(_ row: Int, _ index: Int) -> Int {
                    switch depth {
                    case 8: return Int(source[row + index])
                    case 16: return Int(source[row + 2 * index]) << 8 | Int(source[row + 2 * index + 1])
                    default:
                        let bit = index * depth
                        let byte = Int(source[row + bit / 8])
                        return (byte >> (8 - depth - bit % 8)) & maxSample
                    }
                }
                /// A sample scaled to 0...255.
                func scaled(_ value: Int) -> Int {
                    switch depth {
                    case 8: return value
                    case 16: return value >> 8
                    default: return value * 255 / maxSample
                    }
                }
                for y in 0..<image.height {
                    let row = y * stride + 1
                    for x in 0..<width {
                        var red = 0, green = 0, blue = 0, alpha = 255
                        switch image.colorType {
                        case 0:
                            let gray = sample(row, x)
                            (red, green, blue) = (scaled(gray), scaled(gray), scaled(gray))
                            if let key, key.count == 1, key[0] == gray { alpha = 0 }
                        case 2:
                            let values = (sample(row, 3 * x), sample(row, 3 * x + 1), sample(row, 3 * x + 2))
                            (red, green, blue) = (scaled(values.0), scaled(values.1), scaled(values.2))
                            if let key, key.count == 3, key[0] == values.0, key[1] == values.1, key[2] == values.2 {
                                alpha = 0
                            }
                        case 3:
                            let index = sample(row, x)
                            guard index < paletteCount else {
                                badIndex = index
                                return
                            }
                            (red, green, blue, alpha) = (
                                Int(palette[4 * index]), Int(palette[4 * index + 1]), Int(palette[4 * index + 2]),
                                Int(palette[4 * index + 3])
                            )
                        case 4:
                            let gray = scaled(sample(row, 2 * x))
                            (red, green, blue, alpha) = (gray, gray, gray, scaled(sample(row, 2 * x + 1)))
                        default:
                            (red, green, blue, alpha) = (
                                scaled(sample(row, 4 * x)), scaled(sample(row, 4 * x + 1)),
                                scaled(sample(row, 4 * x + 2)), scaled(sample(row, 4 * x + 3))
                            )
                        }
                        let target = (y * width + x) * 4
                        out[target] = onWhite(blue, alpha)
                        out[target + 1] = onWhite(green, alpha)
                        out[target + 2] = onWhite(red, alpha)
                    }
                }
            }
        }
        if let badIndex {
            throw PNGError(
                "The PNG file uses palette entry \(badIndex) but its palette has \(paletteCount) entries (it is damaged).")
        }
        return pixels
    }

    /// `value` with opacity `alpha` over white, rounded.
    private static func onWhite(_ value: Int, _ alpha: Int) -> UInt8 {
        UInt8((value * alpha + 255 * (255 - alpha) + 127) / 255)
    }
}
