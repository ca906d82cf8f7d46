import CPixelKernels
import CamoMedia
import Testing

@testable import CamoCapture

/// Packed 4:2:2 straight to JPEG's planes: both builds of the loop against the integer arithmetic its header
/// documents (every sample, every row length and both row parities, so the 16-pixel block and the scalar tail
/// both run), against
/// the exact map in floating point, through a JPEG against the BGRA route, and its refusals.
@Suite("PixelJFIF420: packed 4:2:2 straight to JPEG's planes")
struct PixelJFIF420Tests {
    static let colorimetries = PixelPacked422Tests.colorimetries
    static let orders: [(uyvy: Bool, swapUV: Bool)] = [(false, false), (true, false), (false, true), (true, true)]

    /// The header's formulas, written out in Swift (16-bit saturation included).
    static func luma(_ k: camo_jfif_coefficients, y: Int, u: Int, v: Int) -> UInt8 {
        let value = min(32767, max(-32768, (y * Int(k.y_gain)) >> 1 - Int(k.y_offset) + (u * Int(k.y_cb) + v * Int(k.y_cr)) >> 2))
        return UInt8(min(255, max(0, value >> 6)))
    }
    static func chroma(own: Int, u: Int, v: Int, _ fromCb: Int16, _ fromCr: Int16) -> UInt8 {
        UInt8(min(255, max(0, own + (u * Int(fromCb) + v * Int(fromCr) + 128) >> 8 + 128)))
    }

    /// The three planes the header's arithmetic gives for a frame.
    static func expected(_ kernel: PixelJFIF420, uyvy: Bool, swapUV: Bool, source: [UInt8], stride: Int, width: Int, height: Int) -> [UInt8] {
        let at = PixelPacked422Tests.offsets(uyvy: uyvy, swapUV: swapUV)
        let k = kernel.coefficients
        var y = [UInt8](), cb = [UInt8](), cr = [UInt8]()
        for row in 0..<height {
            for pair in 0..<width / 2 {
                let p = row * stride + pair * 4
                let u = Int(source[p + at.cb]) - 128, v = Int(source[p + at.cr]) - 128
                y.append(luma(k, y: Int(source[p + at.y0]), u: u, v: v))
                y.append(luma(k, y: Int(source[p + at.y1]), u: u, v: v))
            }
        }
        for row in Swift.stride(from: 0, to: height, by: 2) {
            let next = min(row + 1, height - 1)
            for pair in 0..<width / 2 {
                let p0 = row * stride + pair * 4, p1 = next * stride + pair * 4
                let u = (Int(source[p0 + at.cb]) + Int(source[p1 + at.cb]) + 1) >> 1 - 128
                let v = (Int(source[p0 + at.cr]) + Int(source[p1 + at.cr]) + 1) >> 1 - 128
                cb.append(chroma(own: u, u: u, v: v, k.cb_cb, k.cb_cr))
                cr.append(chroma(own: v, u: u, v: v, k.cr_cb, k.cr_cr))
            }
        }
        return y + cb + cr
    }

    static func convert(
        _ kernel: PixelJFIF420, _ source: [UInt8], stride: Int, width: Int, height: Int, portable: Bool = false
    ) -> (Int32, [UInt8]) {
        var out = [UInt8](repeating: 0xA5, count: JPEGPlanes.byteCount(width: width, height: height))
        let result = source.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer {
                kernel.convert(s.baseAddress!, stride: stride, into: $0.baseAddress!, width: width, height: height, portable: portable)
            }
        }
        return (result, out)
    }

    @Test("both builds equal the documented arithmetic on every sample, widths 2...68, odd and even heights", arguments: colorimetries)
    func everySample(_ colorimetry: Colorimetry) throws {
        for (uyvy, swapUV) in Self.orders {
            let kernel = try #require(PixelJFIF420(colorimetry: colorimetry, order: PixelPacked422.order(uyvy: uyvy, swapUV: swapUV)))
            for height in [1, 2, 3, 4] {
                for width in stride(from: 2, through: 68, by: 2) {
                    let padding = 6, stride = width * 2 + padding
                    let source = PixelPacked422Tests.randomFrame(width: width, height: height, padding: padding, seed: UInt64(width * 7 + height))
                    let want = Self.expected(kernel, uyvy: uyvy, swapUV: swapUV, source: source, stride: stride, width: width, height: height)
                    // The dispatched loop (AVX2 where the CPU has it) and the portable one.
                    for portable in [false, true] {
                        let (result, got) = Self.convert(kernel, source, stride: stride, width: width, height: height, portable: portable)
                        try #require(result == 0)
                        #expect(got == want, "\(colorimetry) uyvy \(uyvy) swapUV \(swapUV) \(width)x\(height) portable \(portable)")
                    }
                }
            }
        }
    }

    @Test("at the documented coefficient bounds (where the luma sum saturates) both builds still equal the arithmetic")
    func theBoundsAgree() throws {
        let extremes: [camo_jfif_coefficients] = [
            camo_jfif_coefficients(y_gain: 255, y_offset: -64, y_cb: 127, y_cr: 127, cb_cb: 127, cb_cr: 127, cr_cb: 127, cr_cr: 127),
            camo_jfif_coefficients(y_gain: 255, y_offset: 8192, y_cb: -127, y_cr: -127, cb_cb: -127, cb_cr: -127, cr_cb: -127, cr_cr: -127),
            camo_jfif_coefficients(y_gain: 0, y_offset: -64, y_cb: 127, y_cr: -127, cb_cb: -127, cb_cr: 127, cr_cb: 127, cr_cr: -127),
        ]
        for k in extremes {
            let kernel = PixelJFIF420(coefficients: k, order: CAMO_PACKED422_YUYV)
            let width = 36, height = 3, stride = width * 2
            let source = PixelPacked422Tests.randomFrame(width: width, height: height, padding: 0, seed: UInt64(bitPattern: Int64(k.y_offset)) &+ 99)
            let want = Self.expected(kernel, uyvy: false, swapUV: false, source: source, stride: stride, width: width, height: height)
            for portable in [false, true] {
                let (result, got) = Self.convert(kernel, source, stride: stride, width: width, height: height, portable: portable)
                try #require(result == 0)
                #expect(got == want, "\(k) portable \(portable)")
            }
        }
        // Saturated luma really happens here (255 x 255 / 2 + 64 + the largest cross terms is past 16 bits).
        #expect((255 * 255) >> 1 + 64 + (128 * 127 * 2) >> 2 > Int(Int16.max))
    }

    @Test("within ±1 of the exact map to full-range BT.601 (luma per sample, chroma from the two rows' average)", arguments: colorimetries)
    func closeToTheExactMap(_ colorimetry: Colorimetry) throws {
        let limited = colorimetry.range == .limited
        let lumaScale = limited ? 219.0 : 255, chromaScale = limited ? 224.0 : 255, black = limited ? 16.0 : 0
        let map = PixelJFIF420.toBT601(from: colorimetry.matrix.lumaCoefficients)
        let kernel = try #require(PixelJFIF420(colorimetry: colorimetry, order: CAMO_PACKED422_YUYV))
        // Samples from the legal range (limited: 16...235 and 16...240), every luma level against a grid of chroma.
        let lumaLevels = limited ? Array(16...235) : Array(0...255)
        let chromaLevels = stride(from: limited ? 16 : 0, through: limited ? 240 : 255, by: 8).map { $0 }
        var worst = (luma: 0.0, chroma: 0.0)
        for cb in chromaLevels {
            for cr in chromaLevels {
                // One row of 2-pixel pairs: Y0 = Y1 = level, this (Cb, Cr); two identical rows (so the average is exact).
                var row = [UInt8]()
                for level in lumaLevels { row += [UInt8(level), UInt8(cb), UInt8(level), UInt8(cr)] }
                let width = 2 * lumaLevels.count
                let (result, planes) = Self.convert(kernel, row + row, stride: row.count, width: width, height: 2)
                try #require(result == 0)
                let pb = (Double(cb) - 128) / chromaScale, pr = (Double(cr) - 128) / chromaScale
                for (i, level) in lumaLevels.enumerated() {
                    let y = (Double(level) - black) / lumaScale
                    let exact = min(255, max(0, 255 * (map[0][0] * y + map[0][1] * pb + map[0][2] * pr)))
                    worst.luma = max(worst.luma, abs(Double(planes[2 * i]) - exact))
                }
                let exactCb = min(255, max(0, 128 + 255 * (map[1][1] * pb + map[1][2] * pr)))
                let exactCr = min(255, max(0, 128 + 255 * (map[2][1] * pb + map[2][2] * pr)))
                worst.chroma = max(worst.chroma, abs(Double(planes[2 * width]) - exactCb), abs(Double(planes[2 * width + width / 2]) - exactCr))
            }
        }
        print("PixelJFIF420 \(colorimetry): worst luma \(worst.luma), chroma \(worst.chroma), k \(kernel.coefficients)")
        #expect(worst.luma <= 1 && worst.chroma <= 1, "\(colorimetry): worst luma \(worst.luma), chroma \(worst.chroma)")
        #expect(abs(map[0][0] - 1) < 1e-12 && abs(map[1][0]) < 1e-12 && abs(map[2][0]) < 1e-12, "grey stays grey")
        if colorimetry == .bt601Full {
            // JFIF's own space: the identity (luma gain 1, no offset but the rounding half, chroma unchanged).
            let k = kernel.coefficients
            #expect([Int(k.y_gain), Int(k.y_offset), Int(k.y_cb), Int(k.y_cr), Int(k.cb_cb), Int(k.cb_cr), Int(k.cr_cb), Int(k.cr_cr)]
                    == [128, -32, 0, 0, 0, 0, 0, 0])
        }
    }

    @Test("a JPEG from planes made from YUYV decodes like one from the BGRA route (ARGBToJ420), odd heights too")
    func jpegFromTheCamerasBytesMatchesTheBGRARoute() throws {
        let encoder = try JPEGEncoder()
        for colorimetry in [Colorimetry.bt601Limited, .bt709Limited, .bt709Full] {
            for size in [VideoSize(width: 320, height: 180), VideoSize(width: 66, height: 37)] {
                // A smooth YUYV picture (gradients in Y, Cb and Cr), as a camera gives, with padded rows.
                let stride = size.width * 2 + 8
                var yuyv = [UInt8](repeating: 0, count: stride * size.height)
                for row in 0..<size.height {
                    for pair in 0..<size.width / 2 {
                        let p = row * stride + pair * 4
                        yuyv[p] = UInt8(30 + (pair * 2 * 180) / size.width)
                        yuyv[p + 2] = UInt8(30 + ((pair * 2 + 1) * 180) / size.width)
                        yuyv[p + 1] = UInt8(60 + (row * 130) / size.height)
                        yuyv[p + 3] = UInt8(190 - (pair * 2 * 120) / size.width)
                    }
                }
                let layout = CaptureLayout(
                    format: .yuyv, width: size.width, height: size.height,
                    planes: [.init(bytesPerLine: stride, sizeImage: stride * size.height)], colorimetry: colorimetry)
                let converter = try PixelConverter(layout: layout)
                #expect(converter.makesJPEGPlanes)
                var bgra = [UInt8](), storage = [UInt8]()
                let planes: JPEGPlanes? = try yuyv.withUnsafeBytes { raw in
                    try converter.convert(planes: [raw], into: &bgra)
                    return try converter.jpegPlanes(planes: [raw], into: &storage)
                }
                var frame = VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: bgra, captureTime: 0)
                try #require(planes != nil)
                let viaBGRA = try JPEGDecoder().decode(try encoder.encode(frame, quality: 90), captureTime: 0)
                frame.jpegPlanes = planes
                let direct = try JPEGDecoder().decode(try encoder.encode(frame, quality: 90), captureTime: 0)
                // Both against the BGRA frame (the ±1 conversion of the camera's bytes): the direct route is as faithful
                // (it skips a rounding step, so it is usually closer), and the two are close to each other.
                let source = VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: bgra, captureTime: 0)
                let directError = JPEGPlanesMeanError.of(source, direct), bgraError = JPEGPlanesMeanError.of(source, viaBGRA)
                let between = JPEGPlanesMeanError.of(viaBGRA, direct)
                print("PixelJFIF420 JPEG \(colorimetry) \(size): mean error against the BGRA \(directError) direct, \(bgraError) via BGRA; between \(between)")
                #expect(directError <= bgraError * 1.1 + 0.05, "\(colorimetry) \(size): \(directError) against \(bgraError)")
                #expect(between < 1.5, "\(colorimetry) \(size): mean difference \(between)")
            }
        }
    }

    @Test("bad arguments are refused and nothing is written; other formats make no planes")
    func refusals() throws {
        let kernel = try #require(PixelJFIF420(colorimetry: .bt709Limited, order: CAMO_PACKED422_YUYV))
        let source = [UInt8](repeating: 100, count: 64)
        var k = kernel.coefficients
        var out = [UInt8](repeating: 0xA5, count: 64)
        func call(_ width: Int32, _ height: Int32, srcStride: Int32 = 16, yStride: Int32 = 8, chromaStride: Int32 = 4, order: Int32 = 0) -> Int32 {
            source.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    camo_packed422_to_jfif420(s.baseAddress, srcStride, o.baseAddress, yStride, o.baseAddress! + 32, o.baseAddress! + 48, chromaStride, width, height, &k, order)
                }
            }
        }
        #expect(call(8, 2) == 0)
        out = [UInt8](repeating: 0xA5, count: 64)
        #expect(call(7, 2) == -1, "odd width")
        #expect(call(0, 2) == -1 && call(8, 0) == -1)
        #expect(call(8, 2, srcStride: 15) == -1 && call(8, 2, yStride: 7) == -1 && call(8, 2, chromaStride: 3) == -1)
        #expect(call(8, 2, order: 4) == -1)
        k.y_cb = 128
        #expect(call(8, 2) == -1, "a luma cross term of 0.5 or more")
        k = kernel.coefficients
        k.y_gain = 256
        #expect(call(8, 2) == -1, "a luma gain of 2 or more")
        k = kernel.coefficients
        k.y_offset = 8193
        #expect(call(8, 2) == -1)
        k.y_offset = -65
        #expect(call(8, 2) == -1)
        k = kernel.coefficients
        k.cr_cr = -128
        #expect(call(8, 2) == -1)
        #expect(out.allSatisfy { $0 == 0xA5 }, "refused calls write nothing")

        let nv12 = CaptureLayout(format: .nv12, width: 8, height: 2, planes: [.init(bytesPerLine: 8, sizeImage: 24)], colorimetry: .bt601Limited)
        let converter = try PixelConverter(layout: nv12)
        var storage = [UInt8]()
        #expect(!converter.makesJPEGPlanes)
        let none = try [UInt8](repeating: 0, count: 24).withUnsafeBytes { try converter.jpegPlanes(planes: [$0], into: &storage) }
        #expect(none == nil)
    }
}

enum JPEGPlanesMeanError {
    /// Mean absolute difference over B, G, R of two frames of the same size.
    static func of(_ a: VideoFrame, _ b: VideoFrame) -> Double {
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for c in 0..<3 {
                    total += abs(Int(a.data[y * a.bytesPerRow + x * 4 + c]) - Int(b.data[y * b.bytesPerRow + x * 4 + c]))
                }
            }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }
}
