import CamoMedia
import CamoTestSupport
import Testing

@Suite("TestPattern renders and reads back its frame number")
struct TestPatternTests {
    static let sizes = [VideoSize(width: 640, height: 360), .hd720, VideoSize(width: 320, height: 180),
                        VideoSize(width: 1920, height: 1080)]
    static let numbers: [UInt64] = [0, 1, 2, 29, 30, 31, 59, 60, 299, 1000, 12_345, 65_535, 1 << 20, 4_294_967_295]

    @Test(arguments: sizes)
    func readsBackTheFrameNumber(size: VideoSize) {
        for number in Self.numbers {
            let frame = TestPattern.frame(number: number, size: size, captureTime: 0)
            #expect(frame.data.count == size.width * size.height * 4)
            #expect(TestPattern.readFrameNumber(frame) == number, "frame \(number) at \(size)")
        }
    }

    @Test func theCodeCarriesTheLow32Bits() {
        let frame = TestPattern.frame(number: (1 << 32) + 7, size: .hd720, captureTime: 0)
        #expect(TestPattern.readFrameNumber(frame) == 7)
    }

    @Test(arguments: [50, 85])
    func readsBackThroughJPEG(quality: Int) throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        for size in Self.sizes {
            for number in Self.numbers {
                let jpeg = try encoder.encode(TestPattern.frame(number: number, size: size, captureTime: 0), quality: quality)
                let decoded = try decoder.decode(jpeg)
                #expect(TestPattern.readFrameNumber(decoded) == number, "frame \(number) at \(size), q\(quality)")
            }
        }
    }

    @Test func readsBackThroughScalingAndJPEG() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        let targets = [VideoSize(width: 640, height: 360), VideoSize(width: 320, height: 180), VideoSize(width: 1920, height: 1080),
                       VideoSize(width: 333, height: 201)]
        for number in Self.numbers {
            let source = TestPattern.frame(number: number, size: .hd720, captureTime: 0)
            for target in targets {
                let scaled = FrameScaler.scale(source, to: target)
                #expect(TestPattern.readFrameNumber(scaled) == number, "frame \(number) scaled to \(target)")
                let viaJPEG = try decoder.decode(try encoder.encode(scaled, quality: 50))
                #expect(TestPattern.readFrameNumber(viaJPEG) == number, "frame \(number) scaled to \(target), q50")
            }
        }
    }

    @Test(arguments: sizes)
    func flashesExactlyOnMultiplesOfThirty(size: VideoSize) {
        var buffer: [UInt8] = []
        for number in UInt64(0)..<95 {
            TestPattern.render(frameNumber: number, size: size, into: &buffer)
            let frame = VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: buffer, captureTime: 0)
            #expect(TestPattern.isFlash(frame) == (number % 30 == 0), "frame \(number) at \(size)")
        }
    }

    @Test func flashSurvivesJPEGAndScaling() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        for number: UInt64 in [30, 31] {
            let frame = FrameScaler.scale(TestPattern.frame(number: number, size: .hd720, captureTime: 0),
                                          to: VideoSize(width: 320, height: 180))
            let decoded = try decoder.decode(try encoder.encode(frame, quality: 50))
            #expect(TestPattern.isFlash(decoded) == (number == 30))
            #expect(TestPattern.readFrameNumber(decoded) == number)
        }
    }

    @Test func thePictureMovesFromFrameToFrame() {
        let a = TestPattern.frame(number: 1, size: .hd720, captureTime: 0)
        let b = TestPattern.frame(number: 2, size: .hd720, captureTime: 0)
        let topRow = 0..<(1280 * 4)
        #expect(a.data[topRow] != b.data[topRow])
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomNoiseReadsNil(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for size in Self.sizes {
            var data = [UInt8](repeating: 255, count: size.width * size.height * 4)
            for index in data.indices where index % 4 != 3 { data[index] = UInt8.random(in: 0...255, using: &generator) }
            let frame = VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: data, captureTime: 0)
            #expect(TestPattern.readFrameNumber(frame) == nil)
            #expect(!TestPattern.isFlash(frame))
        }
    }

    @Test func blankAndInvalidFramesReadNil() {
        for level: UInt8 in [0, 128, 255] {
            let frame = VideoFrame(width: 640, height: 360, bytesPerRow: 2560,
                                   data: [UInt8](repeating: level, count: 2560 * 360), captureTime: 0)
            #expect(TestPattern.readFrameNumber(frame) == nil)
        }
        var wrongFormat = TestPattern.frame(number: 5, size: .hd720, captureTime: 0)
        wrongFormat.pixelFormat = .rgba
        #expect(TestPattern.readFrameNumber(wrongFormat) == nil)
    }

    @Test func renderReusesTheBufferWhileTheSizeStaysTheSame() {
        var buffer: [UInt8] = []
        TestPattern.render(frameNumber: 0, size: VideoSize(width: 64, height: 36), into: &buffer)
        #expect(buffer.count == 64 * 36 * 4)
        TestPattern.render(frameNumber: 1, size: VideoSize(width: 32, height: 18), into: &buffer)
        #expect(buffer.count == 32 * 18 * 4)
        TestPattern.render(frameNumber: 1, size: VideoSize(width: 1, height: 1), into: &buffer)
        #expect(buffer.count == 4)
        TestPattern.render(frameNumber: 1, size: VideoSize(width: 0, height: 5), into: &buffer)
        #expect(buffer.isEmpty)
    }

    @Test func aCroppedOrPaddedStrideStillReads() {
        let frame = TestPattern.frame(number: 777, size: .hd720, captureTime: 0)
        var padded: [UInt8] = []
        for row in 0..<720 {
            padded.append(contentsOf: frame.data[(row * 5120)..<((row + 1) * 5120)])
            padded.append(contentsOf: [UInt8](repeating: 9, count: 64))
        }
        let paddedFrame = VideoFrame(width: 1280, height: 720, bytesPerRow: 5184, data: padded, captureTime: 0)
        #expect(TestPattern.readFrameNumber(paddedFrame) == 777)
    }
}
