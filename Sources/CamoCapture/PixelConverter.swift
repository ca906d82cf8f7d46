import CYUV
import CamoMedia

/// Converts captured frames of one ``CaptureLayout`` into tightly packed BGRA (B, G, R, A in memory,
/// A = 255, `4 * width` bytes per row): the pipeline's only pixel format.
///
/// Y'CbCr and RGB formats go through libyuv, with the layout's ``Colorimetry`` for Y'CbCr (BT.601,
/// BT.709 or BT.2020, limited or full range); chroma is upsampled by repetition, as libyuv does. Packed
/// 4:2:2 that libyuv cannot convert in one pass (YUYV and UYVY in anything but BT.601 limited range, YVYU
/// and VYUY always) goes through ``PixelPacked422`` instead.
/// `MJPG`/`JPEG` go through libturbojpeg (JFIF's full-range BT.601). ``canConvert(_:)`` says which
/// formats; for the others use libv4lconvert.
///
/// A converter holds its scratch memory and JPEG decompressor, so converting a frame allocates nothing
/// once the output array has its size. It is not thread-safe: use one per capture thread.
public final class PixelConverter {
    /// The layout frames are read with.
    public let layout: CaptureLayout

    /// Bytes of one output frame: `width * height * 4`.
    public var outputByteCount: Int { layout.width * layout.height * 4 }

    private let route: Route
    /// Where each plane's rows are: `regions[0]` luma (or the packed/RGB pixels), `[1]`, `[2]` chroma.
    private let regions: [Region]
    /// The bytes each buffer must hold for a whole frame.
    private let requiredBytes: [Int]
    private let constants: OpaquePointer?
    private let jpeg: MJPEGDecoder?
    /// Rows of one strip: the corrected chroma rows of a semi-planar or planar frame; nil
    /// when the conversion needs no intermediate.
    private let strip: UnsafeMutablePointer<UInt8>?
    /// The Cb correction (see ``PixelChromaCorrection``) for semi-planar and planar frames, or nil when libyuv's
    /// matrix is exact enough (and always for packed 4:2:2, which libyuv either converts exactly or not at all).
    private let correction: PixelChromaCorrection?
    /// The one-pass loop for packed 4:2:2 that libyuv does not convert directly; nil for other routes.
    private let packed: PixelPacked422?
    /// Packed 4:2:2 straight to JPEG's planes (every packed 4:2:2 route); nil for other routes.
    private let jfif: PixelJFIF420?

    /// Rows per strip when a frame goes through an intermediate: small enough that the intermediate
    /// stays in L1/L2 cache (16 chroma rows of a 1920-pixel 4:2:2 frame: 30 KiB).
    static let stripRows = 16

    /// Which build of the one-pass packed 4:2:2 loop (``PixelPacked422``) this CPU runs: `AVX2` or `portable`.
    public static var packed422Build: String { PixelPacked422.usesAVX2 ? "AVX2" : "portable" }

    /// Whether `format` is converted here (by libyuv or libturbojpeg). False means: use libv4lconvert.
    public static func canConvert(_ format: FourCC) -> Bool {
        Route(format: format, colorimetry: .bt601Limited) != nil
    }

    /// Prepares to convert frames of `layout`, checking that the layout describes whole frames.
    ///
    /// - Throws: ``PixelConversionError/unsupportedFormat(_:)`` when ``canConvert(_:)`` is false,
    ///   ``PixelConversionError/invalidLayout(_:)`` for a size outside 1...4096, an odd width for chroma-
    ///   subsampled formats (or an odd height for 4:2:0), a plane count that does not fit the format, or a
    ///   `bytesPerLine`/`sizeImage` too small for the rows.
    public init(layout: CaptureLayout) throws(PixelConversionError) {
        guard let route = Route(format: layout.format, colorimetry: layout.colorimetry) else {
            throw .unsupportedFormat(layout.format)
        }
        let width = layout.width, height = layout.height
        let limit = 1...MediaContract.maxDimension
        guard limit.contains(width), limit.contains(height) else {
            throw .invalidLayout("size \(width)x\(height) is outside 1...\(MediaContract.maxDimension)")
        }
        let format = layout.format
        guard layout.planes.count == format.bufferCount else {
            throw .invalidLayout("\(format) comes in \(format.bufferCount) buffer(s), the layout has \(layout.planes.count)")
        }
        if route.chromaIsHalfWidth, width % 2 != 0 {
            throw .invalidLayout("\(format) needs an even width, got \(width)")
        }
        if route.chromaIsHalfHeight, height % 2 != 0 {
            throw .invalidLayout("\(format) needs an even height, got \(height)")
        }

        self.layout = layout
        self.route = route
        self.regions = try Self.regions(route: route, layout: layout)
        var required = [Int](repeating: 0, count: layout.planes.count)
        for region in regions {
            required[region.buffer] = max(required[region.buffer], region.end)
        }
        for (index, plane) in layout.planes.enumerated() where !route.isJPEG && plane.sizeImage < required[index] {
            throw .invalidLayout("plane \(index) sizeImage \(plane.sizeImage) is less than the \(required[index]) bytes its rows need")
        }
        self.requiredBytes = required

        var constants: OpaquePointer?
        switch route {
        case .semiPlanar, .planar, .grey:
            constants = PixelYUVConstants.pointer(for: layout.colorimetry)
        default:
            constants = nil
        }
        self.constants = constants
        var correction: PixelChromaCorrection?
        var packed: PixelPacked422?
        var jfif: PixelJFIF420?
        if case .packed422(let uyvy, let swapUV, let direct) = route {
            if !direct { packed = PixelPacked422(colorimetry: layout.colorimetry, uyvy: uyvy, swapUV: swapUV) }
            jfif = PixelJFIF420(colorimetry: layout.colorimetry, order: PixelPacked422.order(uyvy: uyvy, swapUV: swapUV))
        } else if route.chromaIsHalfWidth {
            correction = constants.flatMap { PixelChromaCorrection(layout.colorimetry, constants: $0) }
        }
        self.packed = packed
        self.jfif = jfif
        var stripBytes = 0
        switch route {
        case .semiPlanar, .planar:
            if correction != nil { stripBytes = Self.stripRows * width }  // corrected chroma rows
        default:
            break
        }
        if stripBytes > 0 {
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: stripBytes)
            buffer.initialize(repeating: 0, count: stripBytes)
            strip = buffer
        } else {
            strip = nil
        }
        self.correction = correction
        jpeg = route.isJPEG ? try MJPEGDecoder(size: layout.size) : nil
    }

    deinit {
        strip?.deallocate()
    }

    // MARK: Converting

    /// Converts one frame that arrived in a single buffer (every format except `NM12`, `NM21`, `YM12`,
    /// `YM21`, `YM16`): `frame` is the buffer's first `bytesused` bytes.
    ///
    /// `output` becomes the BGRA frame, `width * height * 4` bytes. It is replaced only when its count
    /// differs, so converting into the same array again allocates nothing, as long as nothing else holds
    /// its storage: an array still shared (say, with a frame sent downstream) is copied on write first,
    /// so rotate a few arrays and convert into one that is no longer shared.
    ///
    /// - Throws: a frame error (``PixelConversionError/shortBuffer(expected:got:)``,
    ///   ``PixelConversionError/emptyFrame``, the JPEG errors, ``PixelConversionError/wrongPlaneCount(expected:got:)``):
    ///   drop the frame. `output`'s contents are then unspecified.
    public func convert(_ frame: UnsafeRawBufferPointer, into output: inout [UInt8]) throws(PixelConversionError) {
        guard requiredBytes.count == 1 else { throw .wrongPlaneCount(expected: requiredBytes.count, got: 1) }
        try convert(frame, nil, nil, count: 1, into: &output)
    }

    /// Converts one frame given as one buffer per plane (`bytesused` bytes each, from the plane's
    /// `data_offset` on), as the multi-planar API delivers it. Works for single-buffer formats too (one
    /// element). Otherwise as ``convert(_:into:)``.
    public func convert(planes: [UnsafeRawBufferPointer], into output: inout [UInt8]) throws(PixelConversionError) {
        guard planes.count == requiredBytes.count, (1...3).contains(planes.count) else {
            throw .wrongPlaneCount(expected: requiredBytes.count, got: planes.count)
        }
        try convert(
            planes[0], planes.count > 1 ? planes[1] : nil, planes.count > 2 ? planes[2] : nil,
            count: planes.count, into: &output)
    }

    /// Whether ``jpegPlanes(planes:into:)`` can make JPEG's planes from this layout's frames: packed 4:2:2
    /// (YUYV, UYVY, YVYU, VYUY) in any colorimetry. For other formats, encoders convert the BGRA frame.
    public var makesJPEGPlanes: Bool { jfif != nil }

    /// Makes JPEG's planes (full-range BT.601 4:2:0, ``JPEGPlanes``) straight from a packed 4:2:2 frame, given as
    /// for ``convert(planes:into:)``, into `storage` (resized if needed and shared with the result; rotate a few,
    /// as for BGRA). Nil when ``makesJPEGPlanes`` is false.
    ///
    /// - Throws: the frame errors of ``convert(planes:into:)``: drop the planes (the BGRA conversion of the same
    ///   frame throws them too).
    public func jpegPlanes(planes: [UnsafeRawBufferPointer], into storage: inout [UInt8]) throws(PixelConversionError) -> JPEGPlanes? {
        guard let jfif else { return nil }
        guard planes.count == 1 else { throw .wrongPlaneCount(expected: 1, got: planes.count) }
        try check((planes[0], UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0)), count: 1)
        let width = layout.width, height = layout.height
        let count = JPEGPlanes.byteCount(width: width, height: height)
        if storage.count != count { storage = [UInt8](repeating: 0, count: count) }
        let region = regions[0]
        let result = storage.withUnsafeMutableBufferPointer { destination in
            jfif.convert(
                planes[0].baseAddress!.assumingMemoryBound(to: UInt8.self) + region.offset, stride: region.stride,
                into: destination.baseAddress!, width: width, height: height)
        }
        // The loop refuses only bad arguments, which init and the buffer check rule out.
        precondition(result == 0, "the \(layout.format) \(width)x\(height) JPEG-plane conversion was refused (\(result))")
        return JPEGPlanes(width: width, height: height, data: storage)
    }

    /// Throws the frame error of buffers too short for the layout (or an empty first buffer).
    private func check(
        _ buffers: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer), count: Int
    ) throws(PixelConversionError) {
        for index in 0..<count {
            let got = index == 0 ? buffers.0.count : index == 1 ? buffers.1.count : buffers.2.count
            if index == 0, got == 0 { throw .emptyFrame }
            guard got >= requiredBytes[index] else { throw .shortBuffer(expected: requiredBytes[index], got: got) }
        }
    }

    private func convert(
        _ b0: UnsafeRawBufferPointer, _ b1: UnsafeRawBufferPointer?, _ b2: UnsafeRawBufferPointer?, count: Int,
        into output: inout [UInt8]
    ) throws(PixelConversionError) {
        let buffers = (b0, b1 ?? UnsafeRawBufferPointer(start: nil, count: 0), b2 ?? UnsafeRawBufferPointer(start: nil, count: 0))
        if route.isJPEG {
            // Checked before the output is touched: a refused frame costs nothing.
            _ = try MJPEGDecoder.checkedLength(b0)
        } else {
            try check(buffers, count: count)
        }
        let needed = outputByteCount
        if output.count != needed {
            output = [UInt8](repeating: 0, count: needed)
        }
        var failure: PixelConversionError?
        output.withUnsafeMutableBytes { destination in
            do throws(PixelConversionError) {
                try write(buffers, into: destination)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Converts into `destination` (at least ``outputByteCount`` bytes); buffers are already checked.
    private func write(
        _ buffers: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer),
        into destination: UnsafeMutableRawBufferPointer
    ) throws(PixelConversionError) {
        let width = layout.width, height = layout.height
        let dst = destination.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let dstStride = Int32(width * 4)
        func base(_ region: Region) -> UnsafePointer<UInt8> {
            let buffer = region.buffer == 0 ? buffers.0 : region.buffer == 1 ? buffers.1 : buffers.2
            return buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + region.offset
        }
        let w = Int32(width), h = Int32(height)
        var result: Int32 = 0
        switch route {
        case .jpeg:
            try jpeg!.decode(buffers.0, into: destination)

        case .packed422(let uyvy, _, let direct):
            let source = base(regions[0])
            let stride = regions[0].stride
            if direct {
                result = uyvy
                    ? UYVYToARGB(source, Int32(stride), dst, dstStride, w, h)
                    : YUY2ToARGB(source, Int32(stride), dst, dstStride, w, h)
                break
            }
            // Safe: set in init for every packed route that is not direct.
            result = packed!.convert(source, stride: stride, into: dst, destinationStride: width * 4, width: width, height: height)

        case .semiPlanar(let vu, let halfHeight):
            let luma = regions[0], chroma = regions[1]
            let convert = vu ? NV21ToARGBMatrix : NV12ToARGBMatrix
            if correction == nil, halfHeight {
                result = convert(base(luma), Int32(luma.stride), base(chroma), Int32(chroma.stride), dst, dstStride, constants, w, h)
                break
            }
            // Strips of rows; each strip's chroma rows are copied with Cb corrected when libyuv needs it.
            // 4:2:2 goes row by row inside the strip: libyuv's NV12 reads one chroma row per two luma rows.
            let y = base(luma), c = base(chroma)
            let chromaBytes = chroma.rowBytes
            var row = 0
            while row < height && result == 0 {
                let rows = min(Self.stripRows, height - row)
                let chromaRow = halfHeight ? row / 2 : row
                let chromaRows = halfHeight ? (rows + 1) / 2 : rows
                var stripChroma = c + chromaRow * chroma.stride
                var stripStride = chroma.stride
                if let correction, let strip {
                    for r in 0..<chromaRows {
                        correction.applyInterleaved(
                            from: stripChroma + r * chroma.stride, to: strip + r * chromaBytes, pairs: chromaBytes / 2, cbFirst: !vu)
                    }
                    stripChroma = UnsafePointer(strip)
                    stripStride = chromaBytes
                }
                if halfHeight {
                    result = convert(
                        y + row * luma.stride, Int32(luma.stride), stripChroma, Int32(stripStride),
                        dst + row * width * 4, dstStride, constants, w, Int32(rows))
                } else {
                    for r in 0..<rows where result == 0 {
                        result = convert(
                            y + (row + r) * luma.stride, 0, stripChroma + r * stripStride, 0,
                            dst + (row + r) * width * 4, dstStride, constants, w, 1)
                    }
                }
                row += rows
            }

        case .planar(let swapUV, let halfHeight):
            let luma = regions[0]
            let (u, v) = swapUV ? (regions[2], regions[1]) : (regions[1], regions[2])
            let convert = halfHeight ? I420ToARGBMatrix : I422ToARGBMatrix
            guard let correction, let strip else {
                result = convert(
                    base(luma), Int32(luma.stride), base(u), Int32(u.stride), base(v), Int32(v.stride), dst, dstStride,
                    constants, w, h)
                break
            }
            // Strips of rows, each with its Cb rows corrected into the strip buffer.
            let half = width / 2
            var row = 0
            while row < height && result == 0 {
                let rows = min(Self.stripRows, height - row)
                let chromaRow = halfHeight ? row / 2 : row
                let chromaRows = halfHeight ? (rows + 1) / 2 : rows
                for r in 0..<chromaRows {
                    correction.apply(from: base(u) + (chromaRow + r) * u.stride, to: strip + r * half, count: half)
                }
                result = convert(
                    base(luma) + row * luma.stride, Int32(luma.stride), strip, Int32(half),
                    base(v) + chromaRow * v.stride, Int32(v.stride), dst + row * width * 4, dstStride, constants, w,
                    Int32(rows))
                row += rows
            }

        case .grey:
            result = I400ToARGBMatrix(base(regions[0]), Int32(regions[0].stride), dst, dstStride, constants, w, h)

        case .rgb24(let redFirst):
            let source = base(regions[0]), stride = Int32(regions[0].stride)
            result = redFirst
                ? RAWToARGB(source, stride, dst, dstStride, w, h)
                : RGB24ToARGB(source, stride, dst, dstStride, w, h)

        case .rgb565:
            result = RGB565ToARGB(base(regions[0]), Int32(regions[0].stride), dst, dstStride, w, h)

        case .rgb32(let order):
            Self.convert32(
                UnsafeRawPointer(base(regions[0])), stride: regions[0].stride, order: order,
                into: UnsafeMutableRawPointer(dst), width: width, height: height)
        }
        // libyuv and PixelPacked422 refuse only bad arguments, which init and the buffer checks rule out.
        precondition(result == 0, "the \(layout.format) \(width)x\(height) conversion was refused (\(result))")
    }

    /// 32-bit RGB to BGRA with A = 255: one load, a byte permutation and an OR per pixel (vectorized).
    private static func convert32(
        _ source: UnsafeRawPointer, stride: Int, order: Order32, into destination: UnsafeMutableRawPointer,
        width: Int, height: Int
    ) {
        let opaque: UInt32 = 0xFF00_0000
        for row in 0..<height {
            let src = source + row * stride
            let dst = (destination + row * width * 4).assumingMemoryBound(to: UInt32.self)
            switch order {
            case .bgrx:
                for x in 0..<width {
                    dst[x] = UInt32(littleEndian: src.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)) | opaque
                }
            case .rgbx:
                for x in 0..<width {
                    let p = UInt32(littleEndian: src.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self))
                    dst[x] = ((p & 0xFF) << 16 | (p & 0xFF00) | (p >> 16) & 0xFF | opaque).littleEndian
                }
            case .xbgr:
                for x in 0..<width {
                    let p = UInt32(littleEndian: src.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self))
                    dst[x] = (p >> 8 | opaque).littleEndian
                }
            case .xrgb:
                for x in 0..<width {
                    let p = UInt32(littleEndian: src.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self))
                    dst[x] = (p.byteSwapped | opaque).littleEndian
                }
            }
        }
    }

    // MARK: Plans

    /// The byte order in memory of a 32-bit RGB format (X is alpha or padding).
    enum Order32 {
        case bgrx, rgbx, xbgr, xrgb
    }

    /// How a format is converted.
    enum Route {
        /// YUYV/YVYU (`uyvy` false) or UYVY/VYUY; `swapUV` for YVYU/VYUY; `direct` when libyuv's own
        /// YUY2/UYVYToARGB (fixed BT.601 limited) gives the answer, else ``PixelPacked422`` converts.
        case packed422(uyvy: Bool, swapUV: Bool, direct: Bool)
        /// NV12/NV21/NV16/NV61 (and the M variants); `vu` for Cr-first; `halfHeight` for 4:2:0.
        case semiPlanar(vu: Bool, halfHeight: Bool)
        /// YU12/YV12/422P (and the M variants); `swapUV` when Cr comes first; `halfHeight` for 4:2:0.
        case planar(swapUV: Bool, halfHeight: Bool)
        case grey
        /// RGB3 (`redFirst`) or BGR3.
        case rgb24(redFirst: Bool)
        case rgb32(Order32)
        case rgb565
        case jpeg

        init?(format: FourCC, colorimetry: Colorimetry) {
            switch format {
            case .yuyv: self = .packed422(uyvy: false, swapUV: false, direct: colorimetry == .bt601Limited)
            case .uyvy: self = .packed422(uyvy: true, swapUV: false, direct: colorimetry == .bt601Limited)
            case .yvyu: self = .packed422(uyvy: false, swapUV: true, direct: false)
            case .vyuy: self = .packed422(uyvy: true, swapUV: true, direct: false)
            case .nv12, .nv12m: self = .semiPlanar(vu: false, halfHeight: true)
            case .nv21, .nv21m: self = .semiPlanar(vu: true, halfHeight: true)
            case .nv16: self = .semiPlanar(vu: false, halfHeight: false)
            case .nv61: self = .semiPlanar(vu: true, halfHeight: false)
            case .yu12, .yu12m: self = .planar(swapUV: false, halfHeight: true)
            case .yv12, .yv12m: self = .planar(swapUV: true, halfHeight: true)
            case .yuv422p, .yuv422m: self = .planar(swapUV: false, halfHeight: false)
            case .grey: self = .grey
            case .rgb24: self = .rgb24(redFirst: true)
            case .bgr24: self = .rgb24(redFirst: false)
            case .xrgb32LE, .argb32LE: self = .rgb32(.bgrx)
            case .xbgr32LE, .abgr32LE: self = .rgb32(.rgbx)
            case .rgbx32LE, .rgba32LE: self = .rgb32(.xbgr)
            case .bgrx32LE, .bgra32LE: self = .rgb32(.xrgb)
            case .rgb565: self = .rgb565
            case .mjpeg, .jpeg: self = .jpeg
            default: return nil
            }
        }

        var isJPEG: Bool {
            if case .jpeg = self { return true }
            return false
        }

        var chromaIsHalfWidth: Bool {
            switch self {
            case .packed422, .semiPlanar, .planar: return true
            default: return false
            }
        }

        var chromaIsHalfHeight: Bool {
            switch self {
            case .semiPlanar(_, let half), .planar(_, let half): return half
            default: return false
            }
        }

        /// Bytes per pixel of the single packed plane (packed YUV, grey, RGB).
        var packedBytesPerPixel: Int {
            switch self {
            case .packed422, .rgb565: return 2
            case .rgb24: return 3
            case .rgb32: return 4
            default: return 1
            }
        }
    }

    /// Rows of one plane inside one of a frame's buffers.
    struct Region {
        var buffer: Int
        var offset: Int
        var stride: Int
        var rowBytes: Int
        var rows: Int
        /// One past the last byte the rows use.
        var end: Int { offset + stride * (rows - 1) + rowBytes }
    }

    /// Where each plane lies, with V4L2's rules for planes that share the first buffer: chroma follows
    /// the luma plane (`bytesPerLine * height` bytes on) with the same stride for interleaved chroma and
    /// half the stride for separate Cb and Cr planes.
    private static func regions(route: Route, layout: CaptureLayout) throws(PixelConversionError) -> [Region] {
        let width = layout.width, height = layout.height
        let stride0 = layout.planes[0].bytesPerLine
        if route.isJPEG { return [] }
        let lumaBytes = width * route.packedBytesPerPixel
        guard stride0 >= lumaBytes else {
            throw .invalidLayout("bytesPerLine \(stride0) is less than the \(lumaBytes) bytes of a \(width)-pixel \(layout.format) row")
        }
        let luma = Region(buffer: 0, offset: 0, stride: stride0, rowBytes: lumaBytes, rows: height)
        let chromaRows = route.chromaIsHalfHeight ? height / 2 : height
        let half = width / 2
        let separate = layout.planes.count > 1
        func stride(_ plane: Int, atLeast bytes: Int) throws(PixelConversionError) -> Int {
            let value = layout.planes[plane].bytesPerLine
            guard value >= bytes else {
                throw .invalidLayout("plane \(plane) bytesPerLine \(value) is less than the \(bytes) bytes of its rows")
            }
            return value
        }
        switch route {
        case .semiPlanar:
            if separate {
                return [luma, Region(buffer: 1, offset: 0, stride: try stride(1, atLeast: 2 * half), rowBytes: 2 * half, rows: chromaRows)]
            }
            return [luma, Region(buffer: 0, offset: stride0 * height, stride: stride0, rowBytes: 2 * half, rows: chromaRows)]
        case .planar:
            if separate {
                return [
                    luma,
                    Region(buffer: 1, offset: 0, stride: try stride(1, atLeast: half), rowBytes: half, rows: chromaRows),
                    Region(buffer: 2, offset: 0, stride: try stride(2, atLeast: half), rowBytes: half, rows: chromaRows),
                ]
            }
            let chromaStride = stride0 / 2
            let first = stride0 * height
            return [
                luma,
                Region(buffer: 0, offset: first, stride: chromaStride, rowBytes: half, rows: chromaRows),
                Region(buffer: 0, offset: first + chromaStride * chromaRows, stride: chromaStride, rowBytes: half, rows: chromaRows),
            ]
        default:
            return [luma]
        }
    }
}
