import CamoMedia
import Testing

@Suite("JPEG planes made ahead of the encoder")
struct JPEGPlanesTests {
    static func frame(_ size: VideoSize, number: UInt64, padding: Int = 0) -> VideoFrame {
        let tight = TestPattern.frame(number: number, size: size, captureTime: 0)
        let stride = size.width * 4 + padding
        var data = [UInt8](repeating: 0x5A, count: stride * size.height)
        for row in 0..<size.height {
            data[(row * stride)..<(row * stride + size.width * 4)] = tight.data[(row * tight.bytesPerRow)..<(row * tight.bytesPerRow + size.width * 4)]
        }
        return VideoFrame(width: size.width, height: size.height, bytesPerRow: stride, data: data, captureTime: 0)
    }

    @Test("a frame with its planes attached encodes to the same bytes as one without, odd sizes and padded rows too")
    func attachedPlanesGiveTheSameJPEG() throws {
        let encoder = try JPEGEncoder()
        var storage: [UInt8] = []
        for (size, padding) in [(VideoSize(width: 640, height: 360), 0), (VideoSize(width: 333, height: 101), 12)] {
            let plain = Self.frame(size, number: 9, padding: padding)
            var attached = plain
            attached.jpegPlanes = try JPEGPlanes.converting(plain, into: &storage)
            let planes = try #require(attached.jpegPlanes)
            #expect(planes.width == size.width && planes.height == size.height)
            #expect(planes.data.count == size.width * size.height + 2 * ((size.width + 1) / 2) * ((size.height + 1) / 2))
            #expect(try encoder.encode(attached, quality: 85) == encoder.encode(plain, quality: 85), "\(size)")
        }
    }

    @Test("planes are really used: planes of another picture (same size) change the JPEG; planes of another size are ignored")
    func theEncoderUsesPlanesThatFitAndIgnoresOthers() throws {
        let encoder = try JPEGEncoder()
        var storage: [UInt8] = []
        let size = VideoSize(width: 160, height: 90)
        let frame = Self.frame(size, number: 1)
        let other = Self.frame(size, number: 2)  // another frame number: other digits, another flash state
        var swapped = frame
        swapped.jpegPlanes = try JPEGPlanes.converting(other, into: &storage)
        #expect(try encoder.encode(swapped, quality: 90) == encoder.encode(other, quality: 90))
        #expect(try encoder.encode(swapped, quality: 90) != encoder.encode(frame, quality: 90))

        var misfit = frame
        misfit.jpegPlanes = try JPEGPlanes.converting(Self.frame(VideoSize(width: 162, height: 90), number: 2), into: &storage)
        #expect(try encoder.encode(misfit, quality: 90) == encoder.encode(frame, quality: 90))
    }

    @Test("changing a frame's pixels, size or layout drops its planes, so they never describe other pixels")
    func changingTheFrameDropsItsPlanes() throws {
        var storage: [UInt8] = []
        let base = Self.frame(VideoSize(width: 16, height: 8), number: 0)
        let planes = try JPEGPlanes.converting(base, into: &storage)
        let changes: [(String, (inout VideoFrame) -> Void)] = [
            ("data replaced", { $0.data = [UInt8](repeating: 0, count: $0.data.count) }),
            ("data changed in place", { $0.data[0] = 1 }),
            ("width", { $0.width = 15 }),
            ("height", { $0.height = 7 }),
            ("bytesPerRow", { $0.bytesPerRow = 68 }),
            ("pixelFormat", { $0.pixelFormat = .bgra }),
        ]
        for (name, change) in changes {
            var frame = base
            frame.jpegPlanes = planes
            change(&frame)
            #expect(frame.jpegPlanes == nil, "\(name)")
        }
        var kept = base
        kept.jpegPlanes = planes
        kept.captureTime = 5
        kept.sourceSequence = 6
        #expect(kept.jpegPlanes != nil, "the times and the sequence are not the picture")
    }

    @Test("the storage is reused once the previous planes are released, and a frame that breaks the contract is refused")
    func storageIsReusedAndBadFramesRefused() throws {
        var storage: [UInt8] = []
        let frame = Self.frame(VideoSize(width: 64, height: 32), number: 3)
        _ = try JPEGPlanes.converting(frame, into: &storage)
        let address = storage.withUnsafeBufferPointer { $0.baseAddress }
        _ = try JPEGPlanes.converting(Self.frame(VideoSize(width: 64, height: 32), number: 4), into: &storage)
        #expect(storage.withUnsafeBufferPointer { $0.baseAddress } == address)

        let short = VideoFrame(width: 64, height: 32, bytesPerRow: 256, data: [UInt8](repeating: 0, count: 100), captureTime: 0)
        var other = storage
        #expect(throws: ContractError.self) { _ = try JPEGPlanes.converting(short, into: &other) }
    }
}
