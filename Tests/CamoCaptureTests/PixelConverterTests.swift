import CamoCapture
import CamoMedia
import CamoTestSupport
import Foundation
import Synchronization
import Testing

/// One format under test: how to make a frame of it from bytes ffmpeg writes, and how its planes lie.
struct RawFormatCase: Sendable, CustomTestStringConvertible {
    /// The V4L2 format the converter reads.
    var fourcc: FourCC
    /// The ffmpeg pixel format whose tight bytes `derive` turns into `fourcc`'s tight bytes; ffmpeg's
    /// BGRA conversion of those bytes is the reference.
    var ffmpeg: String
    /// The tight planes of `fourcc` in order: bytes per row and rows, for a width and height.
    var planes: @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)]
    /// From ffmpeg's tight bytes to `fourcc`'s tight bytes (identity when ffmpeg has the format).
    var derive: @Sendable ([UInt8], Int, Int) -> [UInt8] = { bytes, _, _ in bytes }
    /// What ffmpeg converts for the reference, when not `ffmpeg`'s bytes themselves.
    var reference: (@Sendable ([UInt8], Int, Int) -> (bytes: [UInt8], pixelFormat: String))? = nil

    var testDescription: String { fourcc.description }

    static let packed: @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)] = { w, h in [(2 * w, h)] }
    static let semi420: @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)] = { w, h in [(w, h), (w, h / 2)] }
    static let semi422: @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)] = { w, h in [(w, h), (w, h)] }
    static let planar420: @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)] = { w, h in [(w, h), (w / 2, h / 2), (w / 2, h / 2)] }
    static let planar422: @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)] = { w, h in [(w, h), (w / 2, h), (w / 2, h)] }
    static func bytesPerPixel(_ n: Int) -> @Sendable (Int, Int) -> [(rowBytes: Int, rows: Int)] { { w, h in [(n * w, h)] } }

    /// Swaps bytes `a` and `b` of every `group`-byte group from `start` on.
    static func swapping(_ a: Int, _ b: Int, every group: Int, from start: @escaping @Sendable (Int, Int) -> Int = { _, _ in 0 })
        -> @Sendable ([UInt8], Int, Int) -> [UInt8]
    {
        { bytes, w, h in
            var out = bytes
            var i = start(w, h)
            while i + group <= out.count {
                out.swapAt(i + a, i + b)
                i += group
            }
            return out
        }
    }

    /// Swaps the two chroma planes of tight planar YUV (I420 → YV12).
    static func swappingChromaPlanes(halfHeight: Bool) -> @Sendable ([UInt8], Int, Int) -> [UInt8] {
        { bytes, w, h in
            let luma = w * h, chroma = (w / 2) * (halfHeight ? h / 2 : h)
            return Array(bytes[0..<luma] + bytes[(luma + chroma)..<(luma + 2 * chroma)] + bytes[luma..<(luma + chroma)])
        }
    }

    /// Interleaves the two chroma planes of tight I422 into one (NV16 order when `cbFirst`, else NV61).
    static func interleavingChroma(cbFirst: Bool) -> @Sendable ([UInt8], Int, Int) -> [UInt8] {
        { bytes, w, h in
            let luma = w * h, chroma = (w / 2) * h
            var out = Array(bytes[0..<luma])
            for i in 0..<chroma {
                let cb = bytes[luma + i], cr = bytes[luma + chroma + i]
                out += cbFirst ? [cb, cr] : [cr, cb]
            }
            return out
        }
    }

    /// Writes a varying value into byte `index` of every 4-byte pixel (alpha or padding the converter
    /// must replace with 255).
    static func scribbling(_ index: Int) -> @Sendable ([UInt8], Int, Int) -> [UInt8] {
        { bytes, _, _ in
            var out = bytes
            for pixel in 0..<(out.count / 4) { out[pixel * 4 + index] = UInt8(truncatingIfNeeded: pixel &* 37) }
            return out
        }
    }

    /// Every format ``PixelConverter`` claims except JPEG (tested in MJPEGTests).
    static let all: [RawFormatCase] = [
        RawFormatCase(fourcc: .yuyv, ffmpeg: "yuyv422", planes: packed),
        RawFormatCase(fourcc: .uyvy, ffmpeg: "uyvy422", planes: packed),
        RawFormatCase(fourcc: .yvyu, ffmpeg: "yvyu422", planes: packed),
        // ffmpeg has no VYUY: swap U and V of UYVY (U Y0 V Y1 → V Y0 U Y1).
        RawFormatCase(fourcc: .vyuy, ffmpeg: "uyvy422", planes: packed, derive: swapping(0, 2, every: 4)),
        RawFormatCase(fourcc: .nv12, ffmpeg: "nv12", planes: semi420),
        RawFormatCase(fourcc: .nv21, ffmpeg: "nv21", planes: semi420),
        // ffmpeg 5.1 neither reads nor writes NV16, and has no NV61: interleave I422's chroma planes.
        RawFormatCase(fourcc: .nv16, ffmpeg: "yuv422p", planes: semi422, derive: interleavingChroma(cbFirst: true)),
        RawFormatCase(fourcc: .nv61, ffmpeg: "yuv422p", planes: semi422, derive: interleavingChroma(cbFirst: false)),
        RawFormatCase(fourcc: .nv12m, ffmpeg: "nv12", planes: semi420),
        RawFormatCase(fourcc: .nv21m, ffmpeg: "nv21", planes: semi420),
        RawFormatCase(fourcc: .yu12, ffmpeg: "yuv420p", planes: planar420),
        RawFormatCase(fourcc: .yv12, ffmpeg: "yuv420p", planes: planar420, derive: swappingChromaPlanes(halfHeight: true)),
        RawFormatCase(fourcc: .yuv422p, ffmpeg: "yuv422p", planes: planar422),
        RawFormatCase(fourcc: .yu12m, ffmpeg: "yuv420p", planes: planar420),
        RawFormatCase(fourcc: .yv12m, ffmpeg: "yuv420p", planes: planar420, derive: swappingChromaPlanes(halfHeight: true)),
        RawFormatCase(fourcc: .yuv422m, ffmpeg: "yuv422p", planes: planar422),
        // swscale reads gray as full range whatever it is told: the reference is the same luma as I420
        // with neutral chroma, which swscale reads in the range asked for.
        RawFormatCase(
            fourcc: .grey, ffmpeg: "gray", planes: bytesPerPixel(1),
            reference: { bytes, w, h in (bytes + [UInt8](repeating: 128, count: 2 * (w / 2) * (h / 2)), "yuv420p") }),
        RawFormatCase(fourcc: .rgb24, ffmpeg: "rgb24", planes: bytesPerPixel(3)),
        RawFormatCase(fourcc: .bgr24, ffmpeg: "bgr24", planes: bytesPerPixel(3)),
        RawFormatCase(fourcc: .xrgb32LE, ffmpeg: "bgr0", planes: bytesPerPixel(4), derive: scribbling(3)),
        RawFormatCase(fourcc: .argb32LE, ffmpeg: "bgra", planes: bytesPerPixel(4), derive: scribbling(3)),
        RawFormatCase(fourcc: .xbgr32LE, ffmpeg: "rgb0", planes: bytesPerPixel(4), derive: scribbling(3)),
        RawFormatCase(fourcc: .abgr32LE, ffmpeg: "rgba", planes: bytesPerPixel(4), derive: scribbling(3)),
        RawFormatCase(fourcc: .rgbx32LE, ffmpeg: "0bgr", planes: bytesPerPixel(4), derive: scribbling(0)),
        RawFormatCase(fourcc: .rgba32LE, ffmpeg: "abgr", planes: bytesPerPixel(4), derive: scribbling(0)),
        RawFormatCase(fourcc: .bgrx32LE, ffmpeg: "0rgb", planes: bytesPerPixel(4), derive: scribbling(0)),
        RawFormatCase(fourcc: .bgra32LE, ffmpeg: "argb", planes: bytesPerPixel(4), derive: scribbling(0)),
        RawFormatCase(fourcc: .rgb565, ffmpeg: "rgb565le", planes: bytesPerPixel(2)),
    ]

    static func named(_ fourcc: FourCC) -> RawFormatCase { all.first { $0.fourcc == fourcc }! }
}

/// A frame in a format, laid out in buffers with row padding as a driver might, and ffmpeg's reference.
struct RawTestFrame {
    var layout: CaptureLayout
    var buffers: [[UInt8]]
    /// ffmpeg's tight bytes (in `RawFormatCase.ffmpeg`'s format).
    var ffmpegBytes: [UInt8]

    /// Makes `format` at `width` x `height` with `padding` extra bytes per row (V4L2 rules: chroma planes
    /// sharing the first buffer follow the luma plane, with the luma stride when interleaved and half of
    /// it when separate) and `slack` unused bytes at the end of each buffer.
    init(_ format: RawFormatCase, colorimetry: Colorimetry, padding: Int = 0, slack: Int = 0) throws {
        let width = PixelReferenceTable.width, height = PixelReferenceTable.height
        ffmpegBytes = try PixelReferenceTable.get().pictures[format.ffmpeg]!
        let tight = format.derive(ffmpegBytes, width, height)
        let planes = format.planes(width, height)
        precondition(tight.count == planes.reduce(0) { $0 + $1.rowBytes * $1.rows }, "\(format.fourcc): ffmpeg gave \(tight.count) bytes")

        // Rows of each tight plane.
        var planeRows: [[ArraySlice<UInt8>]] = []
        var offset = 0
        for plane in planes {
            planeRows.append((0..<plane.rows).map { row in tight[(offset + row * plane.rowBytes)..<(offset + (row + 1) * plane.rowBytes)] })
            offset += plane.rowBytes * plane.rows
        }
        func write(_ rows: [ArraySlice<UInt8>], stride: Int, into buffer: inout [UInt8]) {
            for row in rows {
                buffer += row
                buffer += [UInt8](repeating: 0xA5, count: stride - row.count)
            }
        }
        var layoutPlanes: [PlaneLayout] = []
        buffers = []
        if format.fourcc.bufferCount > 1 {
            for (index, plane) in planes.enumerated() {
                var buffer: [UInt8] = []
                let stride = plane.rowBytes + padding
                write(planeRows[index], stride: stride, into: &buffer)
                buffer += [UInt8](repeating: 0x5A, count: slack)
                buffers.append(buffer)
                layoutPlanes.append(PlaneLayout(bytesPerLine: stride, sizeImage: buffer.count))
            }
        } else {
            var buffer: [UInt8] = []
            let stride = planes[0].rowBytes + padding
            write(planeRows[0], stride: stride, into: &buffer)
            for index in planes.indices.dropFirst() {
                write(planeRows[index], stride: planes.count == 2 ? stride : stride / 2, into: &buffer)
            }
            buffer += [UInt8](repeating: 0x5A, count: slack)
            buffers = [buffer]
            layoutPlanes = [PlaneLayout(bytesPerLine: stride, sizeImage: buffer.count)]
        }
        layout = CaptureLayout(format: format.fourcc, width: width, height: height, planes: layoutPlanes, colorimetry: colorimetry)
    }

    /// ffmpeg's BGRA for this frame.
    func reference(_ format: RawFormatCase, colorimetry: Colorimetry) throws -> [UInt8] {
        try PixelReferenceTable.get().bgra[format.fourcc]![colorimetry]!
    }

    /// Converts with a new ``PixelConverter``.
    func convert() throws -> [UInt8] {
        let converter = try PixelConverter(layout: layout)
        var output: [UInt8] = []
        try Self.withPointers(buffers) { planes in try converter.convert(planes: planes, into: &output) }
        return output
    }

    static func withPointers<R>(_ buffers: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) throws -> R) throws -> R {
        func nest(_ index: Int, _ collected: [UnsafeRawBufferPointer]) throws -> R {
            if index == buffers.count { return try body(collected) }
            return try buffers[index].withUnsafeBytes { try nest(index + 1, collected + [$0]) }
        }
        return try nest(0, [])
    }
}

/// ffmpeg's test pictures and BGRA references for every format and colorimetry, made once for the whole
/// run (seven ffmpeg runs: one for the pictures, one per colorimetry).
struct PixelReferenceTable: Sendable {
    // Not a multiple of libyuv's SIMD widths, so the scalar tails run too.
    static let width = 70
    static let height = 46
    static let colorimetries: [Colorimetry] = [
        .bt601Limited, .bt601Full, .bt709Limited, .bt709Full,
        Colorimetry(matrix: .bt2020, range: .limited), Colorimetry(matrix: .bt2020, range: .full),
    ]

    /// Raw testsrc2 frames by ffmpeg pixel format.
    var pictures: [String: [UInt8]]
    /// ffmpeg's BGRA by format and colorimetry (RGB formats: BT.601 limited only, where it does not matter).
    var bgra: [FourCC: [Colorimetry: [UInt8]]] = [:]

    private static let shared = Result { try PixelReferenceTable() }

    /// The table, or the error that made it impossible (e.g. "install ffmpeg").
    static func get() throws -> PixelReferenceTable { try shared.get() }

    private init() throws {
        let (width, height) = (Self.width, Self.height)
        pictures = try FFmpeg.testPictures(width: width, height: height, pixelFormats: Set(RawFormatCase.all.map(\.ffmpeg)).sorted())
        for colorimetry in Self.colorimetries {
            let cases = RawFormatCase.all.filter { colorimetry == .bt601Limited || $0.fourcc.isYUV }
            let inputs = cases.map { format in
                let bytes = pictures[format.ffmpeg]!
                return format.reference?(bytes, width, height) ?? (bytes, format.ffmpeg)
            }
            let outputs = try FFmpeg.referenceBGRA(inputs, width: width, height: height, colorimetry: colorimetry)
            for (format, output) in zip(cases, outputs) {
                bgra[format.fourcc, default: [:]][colorimetry] = output
            }
        }
    }
}

@Suite("PixelConverter: every format against ffmpeg")
struct PixelConverterFormatTests {
    @Test("each format, BT.601 limited, padded rows, within ±3 of ffmpeg", arguments: RawFormatCase.all)
    func everyFormat(_ format: RawFormatCase) throws {
        let frame = try RawTestFrame(format, colorimetry: .bt601Limited, padding: 18, slack: 7)
        let comparison = BGRAComparison(ours: try frame.convert(), reference: try frame.reference(format, colorimetry: .bt601Limited))
        #expect(comparison.maxDifference <= 3 && comparison.opaque, "\(format.fourcc): \(comparison)")
    }

    @Test(
        "YUV formats in every matrix and range, within ±3 of ffmpeg",
        arguments: [FourCC.yuyv, .uyvy, .yvyu, .nv12, .nv21, .nv12m, .nv16, .nv61, .yu12, .yv12, .yu12m, .yuv422p], PixelReferenceTable.colorimetries)
    func colorimetry(_ fourcc: FourCC, _ colorimetry: Colorimetry) throws {
        let format = RawFormatCase.named(fourcc)
        let frame = try RawTestFrame(format, colorimetry: colorimetry)
        let comparison = BGRAComparison(ours: try frame.convert(), reference: try frame.reference(format, colorimetry: colorimetry))
        #expect(comparison.maxDifference <= 3 && comparison.opaque, "\(fourcc) \(colorimetry): \(comparison)")
    }

    @Test("grey in both ranges, within ±3 of ffmpeg", arguments: [Colorimetry.bt601Limited, .bt601Full])
    func grey(_ colorimetry: Colorimetry) throws {
        let format = RawFormatCase.named(.grey)
        let frame = try RawTestFrame(format, colorimetry: colorimetry)
        let comparison = BGRAComparison(ours: try frame.convert(), reference: try frame.reference(format, colorimetry: colorimetry))
        #expect(comparison.maxDifference <= 3 && comparison.opaque, "GREY \(colorimetry): \(comparison)")
    }

    /// The reference itself must depend on the colorimetry, or the tests above prove nothing.
    @Test("ffmpeg's reference honours the matrix and the range")
    func referenceDependsOnColorimetry() throws {
        let references = try #require(PixelReferenceTable.get().bgra[.yuyv])
        let limited601 = try #require(references[.bt601Limited])
        #expect(BGRAComparison(ours: limited601, reference: try #require(references[.bt709Limited])).maxDifference > 20)
        #expect(BGRAComparison(ours: limited601, reference: try #require(references[.bt601Full])).maxDifference > 10)
        // And so must ours: the same bytes read as BT.709 differ.
        let frame601 = try RawTestFrame(.named(.yuyv), colorimetry: .bt601Limited)
        let frame709 = try RawTestFrame(.named(.yuyv), colorimetry: .bt709Limited)
        #expect(BGRAComparison(ours: try frame601.convert(), reference: try frame709.convert()).maxDifference > 20)
    }
}

@Suite("PixelConverter: known colours, layouts, errors, steady state")
struct PixelConverterTests {
    /// Converts a one-buffer frame.
    static func convert(_ bytes: [UInt8], _ layout: CaptureLayout) throws -> [UInt8] {
        let converter = try PixelConverter(layout: layout)
        var output: [UInt8] = []
        try bytes.withUnsafeBytes { try converter.convert($0, into: &output) }
        return output
    }

    /// Pure red, green and blue 2x2 blocks in each RGB byte order come out as B, G, R, 255.
    @Test("RGB byte orders with known colours", arguments: [
        (FourCC.rgb24, [2, 1, 0, -1]), (.bgr24, [0, 1, 2, -1]),
        (.xrgb32LE, [0, 1, 2, 3]), (.argb32LE, [0, 1, 2, 3]), (.xbgr32LE, [2, 1, 0, 3]), (.abgr32LE, [2, 1, 0, 3]),
        (.rgbx32LE, [1, 2, 3, 0]), (.rgba32LE, [1, 2, 3, 0]), (.bgrx32LE, [3, 2, 1, 0]), (.bgra32LE, [3, 2, 1, 0]),
    ])
    func rgbKnownColours(_ fourcc: FourCC, _ positions: [Int]) throws {
        // positions: where B, G, R (and X) sit in memory.
        let colours: [(b: UInt8, g: UInt8, r: UInt8)] = [(0, 0, 255), (0, 255, 0), (255, 0, 0), (10, 20, 30)]
        let bytesPerPixel = positions[3] < 0 ? 3 : 4
        var bytes: [UInt8] = []
        for colour in colours {
            var pixel = [UInt8](repeating: 0x11, count: bytesPerPixel)  // X/alpha = 0x11, not 255
            pixel[positions[0]] = colour.b
            pixel[positions[1]] = colour.g
            pixel[positions[2]] = colour.r
            bytes += pixel
        }
        let out = try Self.convert(bytes, CaptureLayout(tightlyPacked: fourcc, width: 4, height: 1))
        #expect(out == [0, 0, 255, 255, 0, 255, 0, 255, 255, 0, 0, 255, 10, 20, 30, 255])
    }

    @Test("RGB565 known colours")
    func rgb565KnownColours() throws {
        // Little-endian words: red 0xF800, green 0x07E0, blue 0x001F, white 0xFFFF.
        let bytes: [UInt8] = [0x00, 0xF8, 0xE0, 0x07, 0x1F, 0x00, 0xFF, 0xFF]
        let out = try Self.convert(bytes, CaptureLayout(tightlyPacked: .rgb565, width: 4, height: 1))
        #expect(out == [0, 0, 255, 255, 0, 255, 0, 255, 255, 0, 0, 255, 255, 255, 255, 255])
    }

    /// BT.601 limited red is Y 81, Cb 90, Cr 240; BT.709 limited red is Y 63, Cb 102, Cr 240.
    @Test("YUYV and NV12 known colours in BT.601 and BT.709")
    func yuvKnownColours() throws {
        func check(_ colorimetry: Colorimetry, y: UInt8, cb: UInt8, cr: UInt8) throws {
            let yuyv = try Self.convert([y, cb, y, cr], CaptureLayout(tightlyPacked: .yuyv, width: 2, height: 1, colorimetry: colorimetry))
            let nv12 = try Self.convert([y, y, y, y, cb, cr], CaptureLayout(tightlyPacked: .nv12, width: 2, height: 2, colorimetry: colorimetry))
            for out in [yuyv, nv12] {
                for pixel in stride(from: 0, to: out.count, by: 4) {
                    #expect(out[pixel] <= 3 && out[pixel + 1] <= 3 && out[pixel + 2] >= 252 && out[pixel + 3] == 255, "\(colorimetry): \(out)")
                }
            }
        }
        try check(.bt601Limited, y: 81, cb: 90, cr: 240)
        try check(.bt709Limited, y: 63, cb: 102, cr: 240)
        try check(.bt601Full, y: 76, cb: 85, cr: 255)
    }

    @Test("canConvert: the libyuv and turbojpeg formats, not the others")
    func canConvert() {
        for format in RawFormatCase.all.map(\.fourcc) + [.mjpeg, .jpeg] {
            #expect(PixelConverter.canConvert(format), "\(format)")
        }
        for name in ["BA81", "S920", "Y16 ", "H264", "P010", "YUV9"] {
            #expect(!PixelConverter.canConvert(FourCC(name)!), "\(name)")
        }
        #expect(throws: PixelConversionError.unsupportedFormat(FourCC("H264")!)) {
            try PixelConverter(layout: CaptureLayout(tightlyPacked: FourCC("H264")!, width: 64, height: 48))
        }
    }

    @Test("FourCC spells, parses and classifies")
    func fourCC() {
        #expect(FourCC.yuyv.rawValue == 0x5659_5559)
        #expect(FourCC("YUYV") == .yuyv && FourCC("YM12") == .yu12m && FourCC("422P") == .yuv422p)
        #expect(FourCC("XR24") == .xrgb32LE && FourCC("AB24") == .abgr32LE && FourCC("RGBP") == .rgb565)
        #expect(FourCC.mjpeg.description == "MJPG")
        #expect(FourCC(rawValue: 0x0102_0304).description == "0x1020304")
        #expect(FourCC("YUY") == nil && FourCC("YUYV2") == nil)
        #expect(FourCC.nv12.isYUV && FourCC.grey.isYUV && !FourCC.rgb24.isYUV && !FourCC.mjpeg.isYUV)
        #expect(FourCC.rgb24.isRGB && !FourCC.yuyv.isRGB && FourCC.jpeg.isJPEG)
        #expect(FourCC.nv12m.bufferCount == 2 && FourCC.yu12m.bufferCount == 3 && FourCC.nv12.bufferCount == 1)
    }

    @Test("Colorimetry follows the kernel's default rules")
    func colorimetryDefaults() {
        // colorspace: SMPTE170M 1, REC709 3, JPEG 7, SRGB 8, BT2020 10, DCI_P3 12, SMPTE240M 2, DEFAULT 0
        // encoding: DEFAULT 0, 601 1, 709 2, XV709 4; quantization: DEFAULT 0, FULL 1, LIM 2
        #expect(Colorimetry(v4l2Colorspace: 8, ycbcrEnc: 0, quantization: 0, isYUV: true) == .bt601Limited)  // uvcvideo
        #expect(Colorimetry(v4l2Colorspace: 3, ycbcrEnc: 0, quantization: 0, isYUV: true) == .bt709Limited)
        #expect(Colorimetry(v4l2Colorspace: 12, ycbcrEnc: 0, quantization: 0, isYUV: true) == .bt709Limited)
        #expect(Colorimetry(v4l2Colorspace: 7, ycbcrEnc: 0, quantization: 0, isYUV: true) == .bt601Full)
        #expect(Colorimetry(v4l2Colorspace: 1, ycbcrEnc: 0, quantization: 0, isYUV: true) == .bt601Limited)
        #expect(Colorimetry(v4l2Colorspace: 0, ycbcrEnc: 0, quantization: 0, isYUV: true) == .bt601Limited)
        #expect(Colorimetry(v4l2Colorspace: 10, ycbcrEnc: 0, quantization: 0, isYUV: true) == Colorimetry(matrix: .bt2020, range: .limited))
        #expect(Colorimetry(v4l2Colorspace: 2, ycbcrEnc: 0, quantization: 0, isYUV: true).matrix == .bt709)
        #expect(Colorimetry(v4l2Colorspace: 8, ycbcrEnc: 0, quantization: 0, isYUV: false).range == .full)
        #expect(Colorimetry(v4l2Colorspace: 8, ycbcrEnc: 2, quantization: 1, isYUV: true) == .bt709Full)
        #expect(Colorimetry(v4l2Colorspace: 3, ycbcrEnc: 1, quantization: 2, isYUV: true) == .bt601Limited)
        #expect(Colorimetry(v4l2Colorspace: 8, ycbcrEnc: 4, quantization: 0, isYUV: true) == .bt709Limited)
        #expect(Colorimetry(v4l2Colorspace: 7, ycbcrEnc: 0, quantization: 2, isYUV: true) == .bt601Limited)
    }

    @Test("layout errors are refused at init")
    func layoutErrors() {
        func refused(_ layout: CaptureLayout) -> Bool {
            do {
                _ = try PixelConverter(layout: layout)
                return false
            } catch {
                guard case .invalidLayout = error else { return false }
                return true
            }
        }
        #expect(refused(CaptureLayout(tightlyPacked: .yuyv, width: 0, height: 48)))
        #expect(refused(CaptureLayout(tightlyPacked: .yuyv, width: 4098, height: 48)))
        #expect(refused(CaptureLayout(tightlyPacked: .yuyv, width: 63, height: 48)))
        #expect(refused(CaptureLayout(tightlyPacked: .nv12, width: 64, height: 47)))
        #expect(refused(CaptureLayout(
            format: .yuyv, width: 64, height: 48, planes: [PlaneLayout(bytesPerLine: 100, sizeImage: 100 * 48)], colorimetry: .bt601Limited)))
        #expect(refused(CaptureLayout(
            format: .yuyv, width: 64, height: 48, planes: [PlaneLayout(bytesPerLine: 128, sizeImage: 128 * 47)], colorimetry: .bt601Limited)))
        #expect(refused(CaptureLayout(
            format: .nv12m, width: 64, height: 48, planes: [PlaneLayout(bytesPerLine: 64, sizeImage: 64 * 72)], colorimetry: .bt601Limited)))
        #expect(!refused(CaptureLayout(tightlyPacked: .yuyv, width: 64, height: 47)))  // 4:2:2 may have an odd height
    }

    @Test("short, empty and missing buffers are refused as bad frames")
    func frameErrors() throws {
        let layout = CaptureLayout(tightlyPacked: .yuyv, width: 64, height: 48)
        let converter = try PixelConverter(layout: layout)
        var output: [UInt8] = []
        let short = [UInt8](repeating: 128, count: 64 * 2 * 48 - 1)
        #expect(throws: PixelConversionError.shortBuffer(expected: 64 * 2 * 48, got: 64 * 2 * 48 - 1)) {
            try short.withUnsafeBytes { try converter.convert($0, into: &output) }
        }
        #expect(throws: PixelConversionError.emptyFrame) {
            try converter.convert(UnsafeRawBufferPointer(start: nil, count: 0), into: &output)
        }
        #expect(throws: PixelConversionError.wrongPlaneCount(expected: 1, got: 2)) {
            try short.withUnsafeBytes { try converter.convert(planes: [$0, $0], into: &output) }
        }
        let multi = try PixelConverter(layout: CaptureLayout(tightlyPacked: .nv12m, width: 64, height: 48))
        let luma = [UInt8](repeating: 16, count: 64 * 48), chroma = [UInt8](repeating: 128, count: 64 * 24 - 2)
        #expect(throws: PixelConversionError.shortBuffer(expected: 64 * 24, got: 64 * 24 - 2)) {
            try RawTestFrame.withPointers([luma, chroma]) { try multi.convert(planes: $0, into: &output) }
        }
        #expect(throws: PixelConversionError.wrongPlaneCount(expected: 2, got: 1)) {
            try luma.withUnsafeBytes { try multi.convert($0, into: &output) }
        }
        // Every message says what to do.
        #expect(PixelConversionError.shortBuffer(expected: 2, got: 1).description.contains("dropping"))
        #expect(PixelConversionError.unsupportedFormat(.mjpeg).description.contains("libv4lconvert"))
    }

    @Test("100 frames into one array: the buffer is never reallocated", arguments: [FourCC.yuyv, .nv12, .yvyu, .mjpeg])
    func steadyState(_ fourcc: FourCC) throws {
        let width = 64, height = 48
        let layout = CaptureLayout(tightlyPacked: fourcc, width: width, height: height, colorimetry: .bt709Limited)
        let frame: [UInt8]
        if fourcc == .mjpeg {
            frame = try MJPEGTests.ffmpegJPEG(width: width, height: height, pixelFormat: "yuvj422p")
        } else {
            var random = SeededGenerator(seed: 7)
            frame = random.bytes(layout.planes[0].sizeImage)
        }
        let converter = try PixelConverter(layout: layout)
        var output: [UInt8] = []
        try frame.withUnsafeBytes { try converter.convert($0, into: &output) }
        let first = output.withUnsafeBufferPointer { $0.baseAddress }
        for _ in 0..<100 {
            try frame.withUnsafeBytes { try converter.convert($0, into: &output) }
            #expect(output.withUnsafeBufferPointer { $0.baseAddress } == first)
        }
        #expect(output.count == width * height * 4)
        // A wrong-sized array is resized once, then kept.
        var small = [UInt8](repeating: 0, count: 16)
        try frame.withUnsafeBytes { try converter.convert($0, into: &small) }
        #expect(small.count == width * height * 4)
    }
}
