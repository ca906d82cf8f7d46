import CamoMedia
import CamoTestSupport
import CTurboJPEG
import Testing

@Suite("JPEG and scaling wrappers")
struct JPEGAndScalingTests {
    static func meanAbsoluteError(_ a: VideoFrame, _ b: VideoFrame) -> Double {
        var total = 0
        var count = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for c in 0..<3 {
                    total += abs(Int(a.data[y * a.bytesPerRow + x * 4 + c]) - Int(b.data[y * b.bytesPerRow + x * 4 + c]))
                    count += 1
                }
            }
        }
        return Double(total) / Double(count)
    }

    @Test func roundTripAtQuality85IsClose() throws {
        let frame = TestPattern.frame(number: 31, size: VideoSize(width: 640, height: 360), captureTime: 123)
        let jpeg = try JPEGEncoder().encode(frame, quality: 85)
        #expect(jpeg.starts(with: [0xFF, 0xD8]))
        #expect(jpeg.count < frame.data.count / 5)
        let decoded = try JPEGDecoder().decode(jpeg, captureTime: 456)
        #expect(decoded.width == 640 && decoded.height == 360 && decoded.bytesPerRow == 2560)
        #expect(decoded.pixelFormat == .bgra)
        #expect(decoded.captureTime == 456)
        try MediaContract.validate(decoded)
        let error = Self.meanAbsoluteError(frame, decoded)
        #expect(error < 4, "mean absolute error \(error)")
    }

    @Test("the encoder's JPEG (libyuv's J420, then turbojpeg) decodes like turbojpeg's own from BGRA, odd sizes too")
    func matchesTurboJPEGFromBGRA() throws {
        // One encoder across sizes (its planes are resized and reused), and a frame with padded rows.
        let encoder = try JPEGEncoder()
        for (size, padding) in [
            (VideoSize(width: 640, height: 360), 0), (VideoSize(width: 333, height: 101), 0),
            (VideoSize(width: 640, height: 360), 0), (VideoSize(width: 333, height: 101), 28),
        ] {
            let tight = TestPattern.frame(number: 5, size: size, captureTime: 0)
            var padded = [UInt8](repeating: 0, count: (size.width * 4 + padding) * size.height)
            for row in 0..<size.height {
                let from = row * tight.bytesPerRow, to = row * (size.width * 4 + padding)
                padded[to..<(to + size.width * 4)] = tight.data[from..<(from + size.width * 4)]
            }
            let frame = VideoFrame(
                width: size.width, height: size.height, bytesPerRow: size.width * 4 + padding, data: padded, captureTime: 0)
            let ours = try JPEGDecoder().decode(try encoder.encode(frame, quality: 90), captureTime: 0)
            let handle = try #require(tjInitCompress())
            defer { tjDestroy(handle) }
            var buffer: UnsafeMutablePointer<UInt8>?
            var length: UInt = 0
            let result = frame.data.withUnsafeBufferPointer { source in
                tjCompress2(
                    handle, source.baseAddress, Int32(size.width), Int32(frame.bytesPerRow), Int32(size.height),
                    Int32(TJPF_BGRA.rawValue), &buffer, &length, Int32(TJSAMP_420.rawValue), 90, 0)
            }
            defer { tjFree(buffer) }
            try #require(result == 0 && buffer != nil)
            let reference = try JPEGDecoder().decode(Array(UnsafeBufferPointer(start: buffer, count: Int(length))), captureTime: 0)
            // As faithful to the source as turbojpeg's own conversion, and close to its result on average (sharp
            // colour edges differ by more: the two round the chroma average differently before the DCT).
            let oursError = Self.meanAbsoluteError(frame, ours), referenceError = Self.meanAbsoluteError(frame, reference)
            #expect(oursError <= referenceError * 1.1 + 0.05, "\(size): mean error \(oursError) against turbojpeg's \(referenceError)")
            #expect(Self.meanAbsoluteError(ours, reference) < 1, "\(size): \(Self.meanAbsoluteError(ours, reference))")
            print("JPEGEncoder \(size): mean error against the source \(oursError), turbojpeg from BGRA \(referenceError)")
        }
    }

    @Test func lowerQualityMakesSmallerFiles() throws {
        let frame = TestPattern.frame(number: 31, size: VideoSize(width: 640, height: 360), captureTime: 0)
        let encoder = try JPEGEncoder()
        let small = try encoder.encode(frame, quality: 20)
        let large = try encoder.encode(frame, quality: 95)
        #expect(small.count < large.count)
    }

    @Test func encodesAPaddedStride() throws {
        let tight = TestPattern.frame(number: 3, size: VideoSize(width: 100, height: 50), captureTime: 0)
        var padded: [UInt8] = []
        for row in 0..<50 {
            padded.append(contentsOf: tight.data[(row * 400)..<((row + 1) * 400)])
            padded.append(contentsOf: [UInt8](repeating: 0, count: 48))
        }
        let frame = VideoFrame(width: 100, height: 50, bytesPerRow: 448, data: padded, captureTime: 0)
        let encoder = try JPEGEncoder()
        #expect(try encoder.encode(frame, quality: 90) == encoder.encode(tight, quality: 90))
    }

    @Test func encoderRefusesBadInput() throws {
        let encoder = try JPEGEncoder()
        let frame = TestPattern.frame(number: 3, size: VideoSize(width: 64, height: 64), captureTime: 0)
        #expect(throws: JPEGError.qualityOutOfRange(0)) { try encoder.encode(frame, quality: 0) }
        #expect(throws: JPEGError.qualityOutOfRange(101)) { try encoder.encode(frame, quality: 101) }
        var wrong = frame
        wrong.data.removeLast()
        #expect(throws: ContractError.bufferLength(expected: 64 * 64 * 4, actual: 64 * 64 * 4 - 1)) {
            try encoder.encode(wrong, quality: 80)
        }
    }

    @Test func truncatedJPEGThrows() throws {
        let frame = TestPattern.frame(number: 3, size: VideoSize(width: 320, height: 180), captureTime: 0)
        let jpeg = try JPEGEncoder().encode(frame, quality: 85)
        let decoder = try JPEGDecoder()
        for length in [jpeg.count - 1, jpeg.count * 3 / 4, jpeg.count / 2, 700, 200, 20, 2, 1] {
            #expect(throws: JPEGError.self, "length \(length)") { try decoder.decode(Array(jpeg.prefix(length))) }
        }
        // The decoder is still usable afterwards.
        #expect(try decoder.decode(jpeg).width == 320)
    }

    @Test func garbageAndEmptyInputThrow() throws {
        let decoder = try JPEGDecoder()
        #expect(throws: JPEGError.emptyInput) { try decoder.decode([]) }
        var generator = SeededGenerator(seed: 9)
        for _ in 0..<20 {
            let garbage = (0..<Int.random(in: 1...5000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(throws: JPEGError.self) { try decoder.decode(garbage) }
        }
    }

    @Test func corruptedBodyThrowsOrDecodesButNeverCrashes() throws {
        let frame = TestPattern.frame(number: 3, size: VideoSize(width: 320, height: 180), captureTime: 0)
        let jpeg = try JPEGEncoder().encode(frame, quality: 85)
        let decoder = try JPEGDecoder()
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<50 {
            var corrupt = jpeg
            for _ in 0..<8 {
                corrupt[Int.random(in: 2..<corrupt.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if let decoded = try? decoder.decode(corrupt) {
                #expect(decoded.data.count == decoded.bytesPerRow * decoded.height)
            }
        }
    }

    @Test func refusesJPEGsLargerThan4096() throws {
        // A valid 8x8 JPEG with the SOF0 height and width patched to 5000x8.
        let small = try JPEGEncoder().encode(TestPattern.frame(number: 1, size: VideoSize(width: 8, height: 8), captureTime: 0),
                                             quality: 80)
        var patched = small
        let sof = try #require((0..<(patched.count - 1)).first { patched[$0] == 0xFF && patched[$0 + 1] == 0xC0 })
        patched[sof + 7] = UInt8(5000 >> 8)
        patched[sof + 8] = UInt8(5000 & 0xFF)
        let decoder = try JPEGDecoder()
        #expect(try decoder.size(of: patched) == VideoSize(width: 5000, height: 8))
        #expect(throws: JPEGError.unsupportedSize(width: 5000, height: 8)) { try decoder.decode(patched) }
    }

    @Test func scalerHalvesAndKeepsTheCaptureTime() throws {
        let frame = TestPattern.frame(number: 4, size: .hd720, captureTime: 99)
        let half = FrameScaler.scale(frame, to: VideoSize(width: 640, height: 360))
        #expect(half.size == VideoSize(width: 640, height: 360))
        #expect(half.bytesPerRow == 2560)
        #expect(half.captureTime == 99)
        try MediaContract.validate(half)
        // A flat colour stays that colour under a box filter.
        let flat = VideoFrame(width: 8, height: 8, bytesPerRow: 32, data: Array([10, 20, 30, 255].repeated(64)), captureTime: 0)
        #expect(FrameScaler.scale(flat, to: VideoSize(width: 4, height: 2)).data == Array([10, 20, 30, 255].repeated(8)))
        // At a fractional ratio libyuv's box filter may round down by one.
        let scaled = FrameScaler.scale(flat, to: VideoSize(width: 3, height: 5))
        let expected = Array([10, 20, 30, 255].repeated(15))
        #expect(zip(scaled.data, expected).allSatisfy { abs(Int($0) - Int($1)) <= 2 })
    }

    @Test func checkedScaleRefusesInvalidInput() {
        let frame = TestPattern.frame(number: 4, size: VideoSize(width: 16, height: 16), captureTime: 0)
        #expect(throws: ContractError.invalidSize(width: 0, height: 4)) {
            try FrameScaler.checkedScale(frame, to: VideoSize(width: 0, height: 4))
        }
        var bad = frame
        bad.pixelFormat = .nv12
        #expect(throws: ContractError.notBGRA(.nv12)) { try FrameScaler.checkedScale(bad, to: VideoSize(width: 8, height: 8)) }
    }
}

extension Array {
    /// The array repeated `count` times.
    fileprivate func repeated(_ count: Int) -> [Element] {
        Array((0..<count).map { _ in self }.joined())
    }
}
