import CamoCapture
import CamoMedia
import CamoTestSupport
import Testing

@Suite("PixelConverter: MJPEG")
struct MJPEGTests {
    static let width = 96
    static let height = 64

    /// A JPEG of ffmpeg's test pattern, encoded by ffmpeg with the standard (Annex K) Huffman tables, as
    /// webcams encode.
    static func ffmpegJPEG(width: Int, height: Int, pixelFormat: String) throws -> [UInt8] {
        try FFmpeg.run([
            "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=1", "-frames:v", "1",
            "-pix_fmt", pixelFormat, "-c:v", "mjpeg", "-huffman", "default", "-q:v", "3", "-f", "mjpeg", "OUT",
        ])
    }

    /// ffmpeg's own decode of `jpeg` to BGRA (nearest-neighbour chroma, as our decoder upsamples).
    static func ffmpegDecode(_ jpeg: [UInt8]) throws -> [UInt8] {
        try FFmpeg.run([
            "-f", "mjpeg", "-i", "IN", "-vf", "scale=flags=\(FFmpeg.exactFlags)", "-pix_fmt", "bgra", "-f", "rawvideo", "OUT",
        ], input: jpeg)
    }

    /// `jpeg` without its DHT (Huffman table) segments, as many webcams send MJPEG.
    static func strippingHuffmanTables(_ jpeg: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1]
            if marker == 0xDA { break }  // SOS: entropy-coded data follows
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if marker != 0xC4 { out += jpeg[i..<(i + 2 + length)] }
            i += 2 + length
        }
        return out + jpeg[i...]
    }

    static func hasHuffmanTable(_ jpeg: [UInt8]) -> Bool {
        (0..<(jpeg.count - 1)).contains { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC4 }
    }

    static func decode(_ jpeg: [UInt8], width: Int = width, height: Int = height) throws -> [UInt8] {
        let converter = try PixelConverter(layout: CaptureLayout(tightlyPacked: .mjpeg, width: width, height: height))
        var output: [UInt8] = []
        try jpeg.withUnsafeBytes { try converter.convert($0, into: &output) }
        return output
    }

    @Test("4:2:0 and 4:2:2 JPEGs decode within ±3 of ffmpeg", arguments: ["yuvj420p", "yuvj422p", "yuvj444p"])
    func decodesLikeFFmpeg(_ pixelFormat: String) throws {
        let jpeg = try Self.ffmpegJPEG(width: Self.width, height: Self.height, pixelFormat: pixelFormat)
        let comparison = BGRAComparison(ours: try Self.decode(jpeg), reference: try Self.ffmpegDecode(jpeg))
        #expect(comparison.maxDifference <= 3 && comparison.opaque, "\(pixelFormat): \(comparison)")
    }

    @Test("a JPEG without Huffman tables decodes with the standard ones")
    func withoutHuffmanTables() throws {
        let jpeg = try Self.ffmpegJPEG(width: Self.width, height: Self.height, pixelFormat: "yuvj422p")
        let stripped = Self.strippingHuffmanTables(jpeg)
        #expect(Self.hasHuffmanTable(jpeg))
        #expect(!Self.hasHuffmanTable(stripped) && stripped.count < jpeg.count)
        let comparison = BGRAComparison(ours: try Self.decode(stripped), reference: try Self.ffmpegDecode(jpeg))
        #expect(comparison.maxDifference <= 3 && comparison.opaque, "\(comparison)")
    }

    @Test("trailing zero padding after the end marker is accepted")
    func zeroPadding() throws {
        let jpeg = try Self.ffmpegJPEG(width: Self.width, height: Self.height, pixelFormat: "yuvj420p")
        #expect(try Self.decode(jpeg + [UInt8](repeating: 0, count: 4000)) == Self.decode(jpeg))
    }

    @Test("damaged frames are refused with the right error")
    func damagedFrames() throws {
        let jpeg = try Self.ffmpegJPEG(width: Self.width, height: Self.height, pixelFormat: "yuvj422p")
        let endless = Array(jpeg.dropLast(2))
        #expect(throws: PixelConversionError.truncatedJPEG(bytes: jpeg.count / 2)) { try Self.decode(Array(jpeg[..<(jpeg.count / 2)])) }
        #expect(throws: PixelConversionError.truncatedJPEG(bytes: endless.count)) { try Self.decode(endless) }
        #expect(throws: PixelConversionError.truncatedJPEG(bytes: 10 + 64)) {
            try Self.decode(Array(jpeg[..<10]) + [UInt8](repeating: 0, count: 64))
        }
        #expect(throws: PixelConversionError.truncatedJPEG(bytes: 10)) { try Self.decode(Array(jpeg[..<10])) }
        #expect(throws: PixelConversionError.emptyFrame) { try Self.decode([]) }

        // Garbage: random bytes, and random bytes dressed with SOI and EOI markers.
        var random = SeededGenerator(seed: 42)
        let garbage = random.bytes(5000)
        #expect(throws: PixelConversionError.corruptJPEG("does not start with the JPEG start-of-image marker FFD8")) {
            try Self.decode(garbage)
        }
        do {
            _ = try Self.decode([0xFF, 0xD8] + garbage + [0xFF, 0xD9])
            Issue.record("garbage between SOI and EOI decoded")
        } catch let error as PixelConversionError {
            guard case .corruptJPEG = error else { Issue.record("expected corruptJPEG, got \(error)"); return }
        }
        // A 10-byte buffer with both markers.
        do {
            _ = try Self.decode([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xD9])
            Issue.record("a 10-byte JPEG decoded")
        } catch let error as PixelConversionError {
            guard case .corruptJPEG = error else { Issue.record("expected corruptJPEG, got \(error)"); return }
        }
    }

    /// Entropy-coded data cut short but closed with EOI: libjpeg warns ("Premature end of JPEG file"
    /// or corrupt data); a warning means a damaged frame.
    @Test("a warning from libjpeg is a corrupt frame")
    func warningIsCorrupt() throws {
        let jpeg = try Self.ffmpegJPEG(width: Self.width, height: Self.height, pixelFormat: "yuvj422p")
        let cut = Array(jpeg[..<(jpeg.count * 3 / 4)]) + [0xFF, 0xD9]
        do {
            _ = try Self.decode(cut)
            Issue.record("a cut JPEG closed with EOI decoded")
        } catch let error as PixelConversionError {
            guard case .corruptJPEG(let message) = error else { Issue.record("expected corruptJPEG, got \(error)"); return }
            #expect(message.contains("warning"), "\(message)")
        }
    }

    @Test("a JPEG of another size is refused")
    func sizeMismatch() throws {
        let jpeg = try Self.ffmpegJPEG(width: 64, height: 48, pixelFormat: "yuvj420p")
        #expect(throws: PixelConversionError.sizeMismatch(
            expected: VideoSize(width: Self.width, height: Self.height), got: VideoSize(width: 64, height: 48))
        ) { try Self.decode(jpeg) }
    }

    @Test("the converter keeps working after bad frames")
    func recoversAfterBadFrames() throws {
        let jpeg = try Self.ffmpegJPEG(width: Self.width, height: Self.height, pixelFormat: "yuvj420p")
        let converter = try PixelConverter(layout: CaptureLayout(tightlyPacked: .mjpeg, width: Self.width, height: Self.height))
        var good: [UInt8] = []
        try jpeg.withUnsafeBytes { try converter.convert($0, into: &good) }
        var output: [UInt8] = []
        let cut = Array(jpeg[..<(jpeg.count * 3 / 4)]) + [0xFF, 0xD9]
        #expect(throws: PixelConversionError.self) { try cut.withUnsafeBytes { try converter.convert($0, into: &output) } }
        try jpeg.withUnsafeBytes { try converter.convert($0, into: &output) }
        #expect(output == good)
    }
}
