import CPixelKernels
import CamoMedia
import Testing

@testable import CamoCapture

/// The one-pass packed 4:2:2 loop: both of its builds against the integer arithmetic its header documents
/// (every pixel, every row length, so the 32- and 16-pixel blocks and the scalar tail all run), against the
/// exact conversion in floating point, and its refusals. The converter tests compare it with ffmpeg.
@Suite("PixelPacked422: the one-pass packed 4:2:2 loop")
struct PixelPacked422Tests {
    static let colorimetries: [Colorimetry] = [
        .bt601Limited, .bt601Full, .bt709Limited, .bt709Full,
        Colorimetry(matrix: .bt2020, range: .limited), Colorimetry(matrix: .bt2020, range: .full),
    ]

    /// Byte offsets of Y0, Y1, Cb, Cr in a pair, by (uyvy, swapUV).
    static func offsets(uyvy: Bool, swapUV: Bool) -> (y0: Int, y1: Int, cb: Int, cr: Int) {
        let (y0, y1) = uyvy ? (1, 3) : (0, 2)
        let (first, second) = uyvy ? (0, 2) : (1, 3)
        return swapUV ? (y0, y1, second, first) : (y0, y1, first, second)
    }

    /// The header's formula, written out in Swift.
    static func expected(_ k: camo_yuv_coefficients, y: UInt8, cb: UInt8, cr: UInt8) -> [UInt8] {
        func clamp(_ value: Int) -> UInt8 { UInt8(min(255, max(0, value >> 6))) }
        let luma = (Int(y) * Int(k.y_gain)) >> 1 - Int(k.y_offset)
        let u = Int(cb) - 128, v = Int(cr) - 128
        return [
            clamp(luma + Int(k.cb_to_b) * u),
            clamp(luma - Int(k.cb_to_g) * u - Int(k.cr_to_g) * v),
            clamp(luma + Int(k.cr_to_r) * v),
            255,
        ]
    }

    /// Random packed bytes (full 0...255, so clamping is exercised) with `padding` extra bytes per row.
    static func randomFrame(width: Int, height: Int, padding: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<(width * 2 + padding) * height).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    typealias Convert = @Sendable (
        UnsafePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32,
        UnsafePointer<camo_yuv_coefficients>?, Int32
    ) -> Int32

    /// The loop this CPU runs (AVX2 where it has it) and the portable one.
    static let builds: [(name: String, convert: Convert)] = [
        (PixelPacked422.usesAVX2 ? "AVX2" : "dispatched (portable)", { camo_packed422_to_bgra($0, $1, $2, $3, $4, $5, $6, $7) }),
        ("portable", { camo_packed422_to_bgra_portable($0, $1, $2, $3, $4, $5, $6, $7) }),
    ]

    @Test("both builds equal the documented arithmetic on every pixel, widths 2...68", arguments: colorimetries)
    func everyPixel(_ colorimetry: Colorimetry) throws {
        if colorimetry == .bt601Limited {
            // Without AVX2 both entries run the portable loop: say which one this host checked.
            print("PixelPacked422: the dispatched loop here is \(PixelPacked422.usesAVX2 ? "AVX2" : "the portable one (no AVX2)")")
        }
        let height = 3, padding = 6
        for (uyvy, swapUV) in [(false, false), (true, false), (false, true), (true, true)] {
            let kernel = PixelPacked422(colorimetry: colorimetry, uyvy: uyvy, swapUV: swapUV)
            let at = Self.offsets(uyvy: uyvy, swapUV: swapUV)
            for width in stride(from: 2, through: 68, by: 2) {
                let stride = width * 2 + padding
                let source = Self.randomFrame(width: width, height: height, padding: padding, seed: UInt64(width))
                var expected = [UInt8]()
                for row in 0..<height {
                    for pair in 0..<width / 2 {
                        let p = row * stride + pair * 4
                        for y in [source[p + at.y0], source[p + at.y1]] {
                            expected += Self.expected(kernel.coefficients, y: y, cb: source[p + at.cb], cr: source[p + at.cr])
                        }
                    }
                }
                // Destination rows padded by 12 bytes, which must stay untouched (a row that ran over would show).
                let outStride = width * 4 + 12
                for build in Self.builds {
                    var output = [UInt8](repeating: 7, count: outStride * height)
                    let result = withUnsafePointer(to: kernel.coefficients) { k in
                        build.convert(source, Int32(stride), &output, Int32(outStride), Int32(width), Int32(height), k, Int32(kernel.order.rawValue))
                    }
                    try #require(result == 0, "\(build.name) refused \(width)x\(height)")
                    let rows = (0..<height).map { output[($0 * outStride)..<($0 * outStride + width * 4)] }
                    let padding = (0..<height).flatMap { output[($0 * outStride + width * 4)..<(($0 + 1) * outStride)] }
                    #expect(padding.allSatisfy { $0 == 7 }, "\(build.name) width \(width): wrote past a row")
                    let wrong = zip(rows.joined(), expected).enumerated().first { $0.element.0 != $0.element.1 }
                    #expect(
                        wrong == nil,
                        "\(build.name) \(colorimetry) uyvy \(uyvy) swapUV \(swapUV) width \(width): byte \(wrong?.offset ?? 0) is \(wrong?.element.0 ?? 0), not \(wrong?.element.1 ?? 0)")
                }
            }
        }
    }

    @Test("within ±2 of the exact conversion in floating point (±1 for BT.601 and BT.709)", arguments: colorimetries)
    func accuracy(_ colorimetry: Colorimetry) {
        let kernel = PixelPacked422(colorimetry: colorimetry, uyvy: false, swapUV: false)
        let (kr, kb): (Double, Double) =
            switch colorimetry.matrix {
            case .bt601: (0.299, 0.114)
            case .bt709: (0.2126, 0.0722)
            case .bt2020: (0.2627, 0.0593)
            }
        let kg = 1 - kr - kb
        let limited = colorimetry.range == .limited
        var worst = 0
        // Every Cb and Cr in steps of 3 (both ends included), and luma across its range.
        let chroma = Array(stride(from: 0, through: 255, by: 3)).map(UInt8.init)
        for y in stride(from: 0, through: 255, by: 5).map(UInt8.init) {
            for cb in chroma {
                for cr in chroma {
                    let got = Self.expected(kernel.coefficients, y: y, cb: cb, cr: cr)
                    let luma = limited ? (Double(y) - 16) * 255 / 219 : Double(y)
                    let scale = limited ? 255.0 / 224 : 1
                    let u = (Double(cb) - 128) * scale, v = (Double(cr) - 128) * scale
                    let exact = [
                        luma + 2 * (1 - kb) * u,
                        luma - 2 * (1 - kb) * kb / kg * u - 2 * (1 - kr) * kr / kg * v,
                        luma + 2 * (1 - kr) * v,
                    ]
                    for channel in 0..<3 {
                        let want = Int(min(255, max(0, exact[channel])).rounded())
                        worst = max(worst, abs(Int(got[channel]) - want))
                    }
                }
            }
        }
        // Coefficients in 1/64 units (as libyuv's) are off by up to 1/128 each, up to a level at the chroma
        // extremes (G takes two such errors), plus the final rounding. The bounds are what this sweep finds:
        // ±1, except BT.2020's larger Cb→B rounding error, which reaches 2. The loop itself computes exactly
        // this arithmetic (checked on every pixel above).
        let bound = colorimetry.matrix == .bt2020 ? 2 : 1
        #expect(worst <= bound, "\(colorimetry): worst difference \(worst)")
    }

    @Test("BT.709 keeps its real Cb→B coefficient, and bad arguments are refused without a write")
    func refusals() {
        let kernel = PixelPacked422(colorimetry: .bt709Limited, uyvy: false, swapUV: false)
        #expect(kernel.coefficients.y_gain == 149 && kernel.coefficients.y_offset == 1160)
        #expect(kernel.coefficients.cb_to_b == 135, "BT.709 Cb→B is 2.112 x 64, not libyuv's clamped 128")
        let source = [UInt8](repeating: 128, count: 64)
        var output = [UInt8](repeating: 7, count: 128)
        func call(width: Int32 = 8, height: Int32 = 2, stride: Int32 = 16, outStride: Int32 = 32, order: Int32 = 0,
                  _ change: (inout camo_yuv_coefficients) -> Void = { _ in }) -> Int32 {
            var k = kernel.coefficients
            change(&k)
            return camo_packed422_to_bgra(source, stride, &output, outStride, width, height, &k, order)
        }
        #expect(call() == 0)
        output = [UInt8](repeating: 7, count: 128)
        #expect(call(width: 7) == -1, "odd width")
        #expect(call(width: 0) == -1 && call(height: 0) == -1, "empty")
        #expect(call(stride: 15) == -1 && call(outStride: 31) == -1, "short rows")
        #expect(call(order: 4) == -1 && call(order: -1) == -1, "unknown order")
        #expect(call { $0.cb_to_b = 256 } == -1 && call { $0.cr_to_r = -1 } == -1 && call { $0.y_gain = 256 } == -1)
        #expect(call { $0.cb_to_g = 200; $0.cr_to_g = 56 } == -1, "G's coefficients together above 255")
        #expect(call { $0.y_offset = 8193 } == -1 && call { $0.y_offset = -65 } == -1)
        #expect(output.allSatisfy { $0 == 7 }, "a refused call writes nothing")
        var k = kernel.coefficients
        #expect(camo_packed422_to_bgra(nil, 16, &output, 32, 8, 2, &k, 0) == -1)
        #expect(camo_packed422_to_bgra_portable(source, 16, &output, 32, 7, 2, &k, 0) == -1)
    }
}
