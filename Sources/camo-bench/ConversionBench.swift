import CSwScale
import CTurboJPEG
import CYUV
import CamoCapture
import CamoMedia
import Foundation

/// Captured-frame → BGRA conversion: ``PixelConverter`` beside libyuv / turbojpeg called directly,
/// ffmpeg's libswscale, and a memcpy of the output, all on the same frames in the same run.
enum ConversionBench {
    struct Row {
        var format: String
        var size: VideoSize
        /// Milliseconds per frame, by method.
        var oursMs: Double
        var directMs: Double
        var directName: String
        var swscaleBicubicMs: Double?
        var swscalePointMs: Double?
        var memcpyMs: Double

        var oursOverDirect: Double { oursMs / directMs }
        var swscaleOverOurs: Double? { swscaleBicubicMs.map { $0 / oursMs } }

        var json: [String: Any] {
            var object: [String: Any] = [
                "format": format, "size": size.description, "oursMs": oursMs, "directMs": directMs,
                "direct": directName, "memcpyMs": memcpyMs, "oursOverDirect": oursOverDirect,
            ]
            if let swscaleBicubicMs { object["swscaleBicubicMs"] = swscaleBicubicMs }
            if let swscalePointMs { object["swscalePointMs"] = swscalePointMs }
            if let swscaleOverOurs { object["swscaleOverOurs"] = swscaleOverOurs }
            return object
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let sizes = [VideoSize(width: 1280, height: 720), VideoSize(width: 1920, height: 1080)]

    static func run(frames: Int, jpegQuality: Int) throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            let bgra = noisy(TestPattern.frame(number: 42, size: size, captureTime: 0).data)
            rows.append(try yuyv(size: size, bgra: bgra, frames: frames, colorimetry: .bt601Limited))
            rows.append(try yuyv(size: size, bgra: bgra, frames: frames, colorimetry: .bt709Limited))
            rows.append(try nv12(size: size, bgra: bgra, frames: frames, colorimetry: .bt601Limited))
            rows.append(try nv12(size: size, bgra: bgra, frames: frames, colorimetry: .bt709Limited))
            rows.append(try mjpeg(size: size, bgra: bgra, frames: frames, quality: jpegQuality))
        }
        return rows
    }

    /// Prints the table.
    static func print(_ rows: [Row], frames: Int, quality: Int) {
        Swift.print("BGRA conversion, ms per frame (\(frames) frames each, one thread; noisy test pattern; MJPEG 4:2:2 q\(quality), size in KiB):")
        Swift.print("  format         size        ours   direct  ours/direct  swscale bicubic  swscale point  swscale/ours  memcpy")
        for row in rows {
            let swscale = row.swscaleBicubicMs.map { String(format: "%15.3f", $0) } ?? String(repeating: " ", count: 14) + "-"
            let point = row.swscalePointMs.map { String(format: "%13.3f", $0) } ?? String(repeating: " ", count: 12) + "-"
            let ratio = row.swscaleOverOurs.map { String(format: "%12.1fx", $0) } ?? String(repeating: " ", count: 12) + "-"
            func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
            Swift.print(
                "  " + padded(row.format, 13) + " " + padded(row.size.description, 9)
                    + String(format: " %7.3f  %7.3f  %10.2fx", row.oursMs, row.directMs, row.oursOverDirect)
                    + "  " + swscale + "  " + point + " " + ratio + String(format: "  %6.3f", row.memcpyMs))
        }
        Swift.print("  direct: YUYV/NV12 BT.601 = libyuv YUY2ToARGB/NV12ToARGB; BT.709 = the two libyuv calls without Cb correction")
        Swift.print("          (YUY2ToI422 + H422ToARGB, NV12ToI420 + H420ToARGB); MJPEG = tjDecompress2 with the same flags.")
        Swift.print("  ours: YUYV BT.709 is PixelPacked422, one pass (its \(PixelConverter.packed422Build) loop here): libyuv has no")
        Swift.print("        one-pass YUYV call for BT.709; the BT.601 row's direct YUY2ToARGB is its one-pass speed.")
        Swift.print("  swscale: sws_scale to BGRA at the same size with the matching sws_setColorspaceDetails; bicubic is")
        Swift.print("           ffmpeg's default (-sws_flags), point is its cheapest.")
    }

    // MARK: Formats

    static func yuyv(size: VideoSize, bgra: [UInt8], frames: Int, colorimetry: Colorimetry) throws -> Row {
        let (w, h) = (Int32(size.width), Int32(size.height))
        var input = [UInt8](repeating: 0, count: size.width * size.height * 2)
        guard ARGBToYUY2(bgra, w * 4, &input, w * 2, w, h) == 0 else { throw Failure(description: "ARGBToYUY2 failed") }
        let layout = CaptureLayout(tightlyPacked: .yuyv, width: size.width, height: size.height, colorimetry: colorimetry)
        let ours = try oursMs(layout: layout, input: input, frames: frames)

        var output = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let direct: Double
        let directName: String
        if colorimetry == .bt601Limited {
            directName = "YUY2ToARGB"
            direct = time(frames) {
                precondition(YUY2ToARGB(input, w * 2, &output, w * 4, w, h) == 0)
            }
        } else {
            directName = "YUY2ToI422+H422ToARGB"
            var planes = [UInt8](repeating: 0, count: size.width * size.height * 2)
            let half = size.width / 2
            direct = time(frames) {
                planes.withUnsafeMutableBufferPointer { p in
                    let y = p.baseAddress!, u = y + size.width * size.height, v = u + half * size.height
                    precondition(YUY2ToI422(input, w * 2, y, w, u, Int32(half), v, Int32(half), w, h) == 0)
                    precondition(H422ToARGB(y, w, u, Int32(half), v, Int32(half), &output, w * 4, w, h) == 0)
                }
            }
        }
        let swscale = try swscaleMs(size: size, format: AV_PIX_FMT_YUYV422, planes: [input], strides: [w * 2], colorimetry: colorimetry, frames: frames)
        return Row(
            format: "YUYV \(colorimetry.matrix)", size: size, oursMs: ours, directMs: direct, directName: directName,
            swscaleBicubicMs: swscale.bicubic, swscalePointMs: swscale.point, memcpyMs: memcpyMs(size: size, frames: frames))
    }

    static func nv12(size: VideoSize, bgra: [UInt8], frames: Int, colorimetry: Colorimetry) throws -> Row {
        let (w, h) = (Int32(size.width), Int32(size.height))
        let lumaBytes = size.width * size.height
        var input = [UInt8](repeating: 0, count: lumaBytes * 3 / 2)
        input.withUnsafeMutableBufferPointer { p in
            let y = p.baseAddress!
            precondition(ARGBToNV12(bgra, w * 4, y, w, y + lumaBytes, w, w, h) == 0)
        }
        let layout = CaptureLayout(tightlyPacked: .nv12, width: size.width, height: size.height, colorimetry: colorimetry)
        let ours = try oursMs(layout: layout, input: input, frames: frames)

        var output = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let direct: Double
        let directName: String
        let luma = Array(input[..<lumaBytes]), chroma = Array(input[lumaBytes...])
        if colorimetry == .bt601Limited {
            directName = "NV12ToARGB"
            direct = time(frames) {
                precondition(NV12ToARGB(luma, w, chroma, w, &output, w * 4, w, h) == 0)
            }
        } else {
            directName = "NV12ToI420+H420ToARGB"
            let half = size.width / 2, quarter = half * (size.height / 2)
            var planes = [UInt8](repeating: 0, count: lumaBytes + 2 * quarter)
            direct = time(frames) {
                planes.withUnsafeMutableBufferPointer { p in
                    let y = p.baseAddress!, u = y + lumaBytes, v = u + quarter
                    precondition(NV12ToI420(luma, w, chroma, w, y, w, u, Int32(half), v, Int32(half), w, h) == 0)
                    precondition(H420ToARGB(y, w, u, Int32(half), v, Int32(half), &output, w * 4, w, h) == 0)
                }
            }
        }
        let swscale = try swscaleMs(
            size: size, format: AV_PIX_FMT_NV12, planes: [luma, chroma], strides: [w, w], colorimetry: colorimetry, frames: frames)
        return Row(
            format: "NV12 \(colorimetry.matrix)", size: size, oursMs: ours, directMs: direct, directName: directName,
            swscaleBicubicMs: swscale.bicubic, swscalePointMs: swscale.point, memcpyMs: memcpyMs(size: size, frames: frames))
    }

    static func mjpeg(size: VideoSize, bgra: [UInt8], frames: Int, quality: Int) throws -> Row {
        let jpeg = try compress(bgra, size: size, quality: quality)
        let layout = CaptureLayout(tightlyPacked: .mjpeg, width: size.width, height: size.height)
        let ours = try oursMs(layout: layout, input: jpeg, frames: frames)

        guard let handle = tjInitDecompress() else { throw Failure(description: "tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        var output = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_FASTUPSAMPLE
        let direct = time(frames) {
            let result = tjDecompress2(
                handle, jpeg, UInt(jpeg.count), &output, Int32(size.width), Int32(size.width * 4), Int32(size.height),
                Int32(TJPF_BGRA.rawValue), flags)
            precondition(result == 0, "tjDecompress2 failed")
        }
        return Row(
            format: "MJPEG \(jpeg.count / 1024)K", size: size, oursMs: ours, directMs: direct, directName: "tjDecompress2",
            swscaleBicubicMs: nil, swscalePointMs: nil, memcpyMs: memcpyMs(size: size, frames: frames))
    }

    /// The test pattern with ±8 of per-pixel noise, as a camera sensor adds: without it the pattern's flat
    /// areas make JPEGs far smaller and quicker to decode than a camera's.
    static func noisy(_ bgra: [UInt8]) -> [UInt8] {
        var state: UInt32 = 12345
        var out = bgra
        for i in out.indices where i % 4 != 3 {
            state = state &* 1_664_525 &+ 1_013_904_223
            out[i] = UInt8(clamping: Int(out[i]) + Int(state >> 28) - 8)
        }
        return out
    }

    /// A webcam-like JPEG: 4:2:2, the given quality, made in-process with turbojpeg.
    static func compress(_ bgra: [UInt8], size: VideoSize, quality: Int) throws -> [UInt8] {
        guard let handle = tjInitCompress() else { throw Failure(description: "tjInitCompress failed") }
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        let result = tjCompress2(
            handle, bgra, Int32(size.width), Int32(size.width * 4), Int32(size.height), Int32(TJPF_BGRA.rawValue),
            &buffer, &length, Int32(TJSAMP_422.rawValue), Int32(quality), 0)
        defer { tjFree(buffer) }
        guard result == 0, let buffer else { throw Failure(description: "tjCompress2 failed") }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    // MARK: Methods

    static func oursMs(layout: CaptureLayout, input: [UInt8], frames: Int) throws -> Double {
        let converter = try PixelConverter(layout: layout)
        var output: [UInt8] = []
        var failure: PixelConversionError?
        let ms = input.withUnsafeBytes { raw in
            time(frames) {
                do throws(PixelConversionError) {
                    try converter.convert(raw, into: &output)
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw Failure(description: "PixelConverter failed: \(failure)") }
        return ms
    }

    /// libswscale at the same size, bicubic (ffmpeg's default flags) and point.
    static func swscaleMs(
        size: VideoSize, format: AVPixelFormat, planes: [[UInt8]], strides: [Int32], colorimetry: Colorimetry, frames: Int
    ) throws -> (bicubic: Double, point: Double) {
        func measure(_ flags: Int32) throws -> Double {
            guard let context = sws_getContext(
                Int32(size.width), Int32(size.height), format, Int32(size.width), Int32(size.height), AV_PIX_FMT_BGRA,
                flags, nil, nil, nil)
            else { throw Failure(description: "sws_getContext failed") }
            defer { sws_freeContext(context) }
            let table = sws_getCoefficients(colorimetry.matrix == .bt709 ? SWS_CS_ITU709 : SWS_CS_ITU601)
            let sourceFull: Int32 = colorimetry.range == .full ? 1 : 0
            // brightness 0, contrast and saturation 1.0 in 16.16 fixed point.
            guard sws_setColorspaceDetails(context, table, sourceFull, sws_getCoefficients(SWS_CS_ITU601), 1, 0, 1 << 16, 1 << 16) >= 0 else {
                throw Failure(description: "sws_setColorspaceDetails refused \(colorimetry)")
            }
            var output = [UInt8](repeating: 0, count: size.width * size.height * 4)
            let sources = planes.map { UnsafeMutableBufferPointer<UInt8>.allocate(capacity: $0.count) }
            defer { sources.forEach { $0.deallocate() } }
            for (buffer, plane) in zip(sources, planes) { _ = buffer.initialize(from: plane) }
            var sourcePointers: [UnsafePointer<UInt8>?] = sources.map { UnsafePointer($0.baseAddress) } + [nil, nil]
            var sourceStrides: [Int32] = strides + [0, 0]
            var destinationStride: [Int32] = [Int32(size.width * 4), 0, 0, 0]
            return output.withUnsafeMutableBufferPointer { out in
                var destinations: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
                return time(frames) {
                    let rows = sws_scale(context, &sourcePointers, &sourceStrides, 0, Int32(size.height), &destinations, &destinationStride)
                    precondition(rows == Int32(size.height), "sws_scale returned \(rows)")
                }
            }
        }
        return (try measure(SWS_BICUBIC), try measure(SWS_POINT))
    }

    static func memcpyMs(size: VideoSize, frames: Int) -> Double {
        let source = [UInt8](repeating: 7, count: size.width * size.height * 4)
        var destination = [UInt8](repeating: 0, count: source.count)
        var round: UInt8 = 0
        return time(frames) {
            destination.withUnsafeMutableBytes { d in source.withUnsafeBytes { s in d.copyMemory(from: s) } }
            round &+= destination[round == 0 ? 1 : 0]  // keep the copy observable
        }
    }

    /// Milliseconds per call of `body`, the best of three runs of `frames` calls after two warm-up calls.
    static func time(_ frames: Int, _ body: () -> Void) -> Double {
        body()
        body()
        var best = Double.infinity
        for _ in 0..<3 {
            let start = seconds()
            for _ in 0..<frames { body() }
            best = min(best, (seconds() - start) / Double(frames) * 1000)
        }
        return best
    }
}
