import CYUV
import CamoCapture
import CamoMedia
import Foundation

/// The image transform stage (rotation, flips, viewport) at 1080p BGRA: ``ImageTransform/apply(_:)`` beside the
/// same libyuv calls made directly into buffers allocated once, a memcpy of the frame (the floor), and the
/// YUYV → BGRA conversion that precedes the transform on a camera's frames.
enum TransformBench {
    struct Row {
        var operation: String
        /// Milliseconds per frame through ``ImageTransform``.
        var oursMs: Double
        /// Milliseconds per frame for libyuv called directly.
        var directMs: Double
        var directName: String

        var oursOverDirect: Double { oursMs / directMs }

        var json: [String: Any] {
            ["operation": operation, "oursMs": oursMs, "directMs": directMs, "direct": directName, "oursOverDirect": oursOverDirect]
        }
    }

    struct Result {
        var size: VideoSize
        var rows: [Row]
        /// memcpy of one BGRA frame.
        var memcpyMs: Double
        /// YUYV (BT.601) → BGRA through ``PixelConverter``, the capture path.
        var conversionMs: Double
        /// The same conversion with libyuv's YUY2ToARGB called directly.
        var conversionDirectMs: Double

        var json: [String: Any] {
            [
                "size": size.description, "rows": rows.map(\.json), "memcpyMs": memcpyMs,
                "yuyvToBGRAMs": conversionMs, "yuyvToBGRADirectMs": conversionDirectMs,
            ]
        }
    }

    static let size = VideoSize(width: 1920, height: 1080)

    static func run(frames: Int) throws -> Result {
        let (width, height) = (size.width, size.height)
        let (w, h) = (Int32(width), Int32(height))
        let frame = TestPattern.frame(number: 42, size: size, captureTime: 0)
        let source = frame.data
        let stride = Int32(frame.bytesPerRow)
        // The centre quarter: 960x540 from (480, 270).
        let viewport = Viewport(x1: 480, y1: 270, x2: 1440, y2: 810, space: size)
        let cropOffset = 270 * frame.bytesPerRow + 480 * 4
        let (cropW, cropH): (Int32, Int32) = (960, 540)

        var output = [UInt8](repeating: 0, count: width * height * 4)
        var turnedCrop = [UInt8](repeating: 0, count: Int(cropW * cropH) * 4)
        var rows: [Row] = []

        /// Ours and the direct calls, timed in alternating runs so both see the same machine (it is shared).
        func measure(
            _ operation: String, _ transform: ImageTransform, _ directName: String,
            _ body: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>) -> Int32
        ) {
            var sink: UInt8 = 0
            let (oursMs, directMs) = source.withUnsafeBufferPointer { s in
                output.withUnsafeMutableBufferPointer { d in
                    turnedCrop.withUnsafeMutableBufferPointer { t in
                        alternating(
                            frames,
                            {
                                let out = transform.apply(frame)
                                sink &+= out.data[out.data.count / 2]  // keep the result observable
                            },
                            { precondition(body(s.baseAddress!, d.baseAddress!, t.baseAddress!) == 0, "libyuv failed") })
                    }
                }
            }
            rows.append(Row(operation: operation, oursMs: oursMs, directMs: directMs, directName: directName))
        }

        measure("rotate 90", ImageTransform(rotation: .quarter), "ARGBRotate kRotate90") { from, to, _ in
            ARGBRotate(from, stride, to, h * 4, w, h, kRotate90)
        }
        measure("rotate 180", ImageTransform(rotation: .half), "ARGBRotate kRotate180") { from, to, _ in
            ARGBRotate(from, stride, to, w * 4, w, h, kRotate180)
        }
        measure("flip horizontal", ImageTransform(flipHorizontal: true), "ARGBMirror") { from, to, _ in
            ARGBMirror(from, stride, to, w * 4, w, h)
        }
        measure("flip vertical", ImageTransform(flipVertical: true), "ARGBCopy, height -1080") { from, to, _ in
            ARGBCopy(from, stride, to, w * 4, w, -h)
        }
        measure("viewport centre 1/4", ImageTransform(viewport: viewport), "ARGBScale bilinear 960x540->1080p") { from, to, _ in
            ARGBScale(from + cropOffset, stride, cropW, cropH, to, w * 4, w, h, kFilterBilinear)
        }
        measure(
            "viewport + rotate 90", ImageTransform(rotation: .quarter, viewport: viewport), "ARGBRotate crop + ARGBScale"
        ) { from, to, scratch in
            let turned = ARGBRotate(from + cropOffset, stride, scratch, cropH * 4, cropW, cropH, kRotate90)
            return turned | ARGBScale(scratch, cropH * 4, cropH, cropW, to, h * 4, h, w, kFilterBilinear)
        }

        // The conversion a YUYV camera's frames go through before the transform.
        var yuyv = [UInt8](repeating: 0, count: width * height * 2)
        guard ARGBToYUY2(source, stride, &yuyv, w * 2, w, h) == 0 else {
            throw ConversionBench.Failure(description: "ARGBToYUY2 failed")
        }
        let converter = try PixelConverter(
            layout: CaptureLayout(tightlyPacked: .yuyv, width: width, height: height, colorimetry: .bt601Limited))
        var converted: [UInt8] = []
        var failure: PixelConversionError?
        let (conversion, conversionDirect) = yuyv.withUnsafeBytes { raw in
            alternating(
                frames,
                {
                    do throws(PixelConversionError) {
                        try converter.convert(raw, into: &converted)
                    } catch {
                        failure = error
                    }
                },
                { precondition(YUY2ToARGB(yuyv, w * 2, &output, w * 4, w, h) == 0) })
        }
        if let failure { throw ConversionBench.Failure(description: "PixelConverter failed: \(failure)") }
        return Result(
            size: size, rows: rows, memcpyMs: ConversionBench.memcpyMs(size: size, frames: frames), conversionMs: conversion,
            conversionDirectMs: conversionDirect)
    }

    /// Milliseconds per call of `first` and of `second`: the best of five runs of `frames` calls each, the runs
    /// alternating between the two, after two warm-up calls of each.
    static func alternating(_ frames: Int, _ first: () -> Void, _ second: () -> Void) -> (Double, Double) {
        first()
        first()
        second()
        second()
        var best = (Double.infinity, Double.infinity)
        for _ in 0..<5 {
            var start = seconds()
            for _ in 0..<frames { first() }
            best.0 = min(best.0, (seconds() - start) / Double(frames) * 1000)
            start = seconds()
            for _ in 0..<frames { second() }
            best.1 = min(best.1, (seconds() - start) / Double(frames) * 1000)
        }
        return best
    }

    /// Prints the table.
    static func print(_ result: Result, frames: Int) {
        func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        Swift.print("Image transform, \(result.size) BGRA, ms per frame (best of 5 runs of \(frames) frames, ours and direct alternating; one thread; test pattern):")
        Swift.print("  operation               ours   direct  ours/direct  ours/memcpy  ours/YUYV->BGRA  direct call")
        for row in result.rows {
            Swift.print(
                "  " + padded(row.operation, 20)
                    + String(
                        format: " %7.3f  %7.3f  %10.2fx  %10.2fx  %14.2fx", row.oursMs, row.directMs, row.oursOverDirect,
                        row.oursMs / result.memcpyMs, row.oursMs / result.conversionMs)
                    + "  " + row.directName)
        }
        Swift.print(String(format: "  memcpy of the frame     %7.3f  (the floor: one read and one write of 8 MB)", result.memcpyMs))
        Swift.print(
            String(
                format: "  YUYV->BGRA BT.601       %7.3f  %7.3f  (PixelConverter, and YUY2ToARGB direct: the conversion before the transform)",
                result.conversionMs, result.conversionDirectMs))
        Swift.print("  ours: ImageTransform.apply, a new output array per frame (as the capture path gets it); direct: the")
        Swift.print("        libyuv calls into buffers allocated once. Rotate 180 is ARGBMirror with the rows read bottom-up")
        Swift.print("        (one mirror per row; ARGBRotate kRotate180 mirrors into a row buffer and copies it). Viewport:")
        Swift.print("        the centre 960x540 read in place, bilinear back to 1080p; with rotate 90, the crop is turned first.")
    }
}
