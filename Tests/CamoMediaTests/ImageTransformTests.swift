@testable import CamoMedia
import Foundation
import Testing

@Suite("ImageTransform: rotation, flips and viewport on BGRA frames")
struct ImageTransformTests {
    // MARK: Synthetic frames

    /// A BGRA colour.
    struct Colour: Equatable, CustomStringConvertible {
        var b: UInt8, g: UInt8, r: UInt8, a: UInt8 = 255
        var bytes: [UInt8] { [b, g, r, a] }
        var description: String { "BGRA(\(b),\(g),\(r),\(a))" }
    }

    static let background = Colour(b: 200, g: 40, r: 30)
    static let marker = Colour(b: 20, g: 230, r: 240)

    /// A frame of `background` with `marker` over the rectangle `markerX` x `markerY`; rows padded by `padding`
    /// bytes of 0x05 (a value no blend of the two colours makes, so it must never show up in the output).
    static func frame(
        _ width: Int, _ height: Int, markerX: Range<Int>, markerY: Range<Int>, padding: Int = 0,
        captureTime: UInt64 = 1_000, sequence: UInt64 = 7
    ) -> VideoFrame {
        let bytesPerRow = width * 4 + padding
        let plain = (0..<width).flatMap { _ in background.bytes } + [UInt8](repeating: 0x05, count: padding)
        let marked = (0..<width).flatMap { markerX.contains($0) ? marker.bytes : background.bytes }
            + [UInt8](repeating: 0x05, count: padding)
        var data: [UInt8] = []
        data.reserveCapacity(bytesPerRow * height)
        for y in 0..<height { data += markerY.contains(y) ? marked : plain }
        return VideoFrame(
            width: width, height: height, bytesPerRow: bytesPerRow, data: data, captureTime: captureTime,
            sourceSequence: sequence)
    }

    /// A frame whose every pixel tells where it came from: blue = x, green = y, red = 0x5A.
    static func coordinateFrame(_ width: Int, _ height: Int, padding: Int) -> VideoFrame {
        let bytesPerRow = width * 4 + padding
        var data = [UInt8](repeating: 0xEE, count: bytesPerRow * height)
        for y in 0..<height {
            for x in 0..<width {
                data.replaceSubrange(
                    (y * bytesPerRow + x * 4)..<(y * bytesPerRow + x * 4 + 4), with: [UInt8(x), UInt8(y), 0x5A, 0xFF])
            }
        }
        return VideoFrame(width: width, height: height, bytesPerRow: bytesPerRow, data: data, captureTime: 5)
    }

    /// Whether `colour` is within 2 levels below `expected` in every channel, alpha included: libyuv's bilinear
    /// filter (x86, this version and upstream) weighs two neighbours by 127/128 in all and truncates, so a zoomed flat
    /// colour comes out up to 2 levels lower (255 becomes 253) but never higher.
    static func near(_ colour: Colour, _ expected: Colour) -> Bool {
        zip(colour.bytes, expected.bytes).allSatisfy { (Int($1) - 2...Int($1)).contains(Int($0)) }
    }

    static func pixel(_ frame: VideoFrame, _ x: Int, _ y: Int) -> Colour {
        let i = y * frame.bytesPerRow + x * 4
        return Colour(b: frame.data[i], g: frame.data[i + 1], r: frame.data[i + 2], a: frame.data[i + 3])
    }

    /// The bounding box (x and y ranges) of the pixels nearer the marker's colour than the background's, and
    /// how many there are.
    static func markerBox(_ frame: VideoFrame) -> (x: ClosedRange<Int>, y: ClosedRange<Int>, count: Int)? {
        var (minX, minY, maxX, maxY, count) = (Int.max, Int.max, Int.min, Int.min, 0)
        let data = frame.data
        for y in 0..<frame.height {
            let row = y * frame.bytesPerRow + 1  // green
            for x in 0..<frame.width where data[row + x * 4] > 135 {
                (minX, minY, maxX, maxY) = (min(minX, x), min(minY, y), max(maxX, x), max(maxY, y))
                count += 1
            }
        }
        return count == 0 ? nil : (minX...maxX, minY...maxY, count)
    }

    /// The source pixel that the transform's definition puts at output (`x`, `y`): undo the flips (in the output's
    /// orientation), then the clockwise rotation.
    static func referenceSource(
        _ transform: ImageTransform, x: Int, y: Int, input: VideoSize
    ) -> (x: Int, y: Int) {
        let output = transform.outputSize(for: input)
        let fx = transform.flipHorizontal ? output.width - 1 - x : x
        let fy = transform.flipVertical ? output.height - 1 - y : y
        switch transform.rotation {
        case .none: return (fx, fy)
        case .quarter: return (fy, input.height - 1 - fx)
        case .half: return (input.width - 1 - fx, input.height - 1 - fy)
        case .threeQuarters: return (input.width - 1 - fy, fx)
        }
    }

    static let allOrientations: [ImageTransform] = ImageRotation.allCases.flatMap { rotation in
        [(false, false), (true, false), (false, true), (true, true)].map {
            ImageTransform(rotation: rotation, flipHorizontal: $0.0, flipVertical: $0.1)
        }
    }

    // The 64x36 frame's marker: 8 wide, 4 high, 4 pixels from the left and 2 from the top.
    static let small = frame(64, 36, markerX: 4..<12, markerY: 2..<6)

    static func expectMarker(
        _ transform: ImageTransform, size: VideoSize, x: ClosedRange<Int>, y: ClosedRange<Int>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let out = transform.apply(small)
        #expect(out.size == size, sourceLocation: sourceLocation)
        #expect(out.bytesPerRow == size.width * 4, sourceLocation: sourceLocation)
        #expect(out.data.count == size.width * 4 * size.height, sourceLocation: sourceLocation)
        let box = markerBox(out)
        #expect(box?.x == x && box?.y == y, "marker at \(String(describing: box))", sourceLocation: sourceLocation)
        #expect(box?.count == 32, sourceLocation: sourceLocation)
        // Exact colours, inside the marker and outside it.
        #expect(pixel(out, x.lowerBound, y.lowerBound) == marker, sourceLocation: sourceLocation)
        #expect(pixel(out, x.upperBound, y.upperBound) == marker, sourceLocation: sourceLocation)
        #expect(pixel(out, size.width / 2, size.height / 2) == background, sourceLocation: sourceLocation)
    }

    // MARK: Rotation and flips

    @Test("a quarter turn makes 64x36 into 36x64 with the top-left marker near the top-right corner")
    func quarterTurn() {
        Self.expectMarker(ImageTransform(rotation: .quarter), size: VideoSize(width: 36, height: 64), x: 30...33, y: 4...11)
    }

    @Test("a half turn puts the top-left marker near the bottom-right corner")
    func halfTurn() {
        Self.expectMarker(ImageTransform(rotation: .half), size: VideoSize(width: 64, height: 36), x: 52...59, y: 30...33)
    }

    @Test("three quarter turns make 64x36 into 36x64 with the marker near the bottom-left corner")
    func threeQuarterTurn() {
        Self.expectMarker(
            ImageTransform(rotation: .threeQuarters), size: VideoSize(width: 36, height: 64), x: 2...5, y: 52...59)
    }

    @Test("a horizontal flip moves the marker to the top-right corner")
    func horizontalFlip() {
        Self.expectMarker(ImageTransform(flipHorizontal: true), size: VideoSize(width: 64, height: 36), x: 52...59, y: 2...5)
    }

    @Test("a vertical flip moves the marker to the bottom-left corner")
    func verticalFlip() {
        Self.expectMarker(ImageTransform(flipVertical: true), size: VideoSize(width: 64, height: 36), x: 4...11, y: 30...33)
    }

    @Test("both flips are a half turn, pixel for pixel")
    func bothFlips() {
        let both = ImageTransform(flipHorizontal: true, flipVertical: true)
        Self.expectMarker(both, size: VideoSize(width: 64, height: 36), x: 52...59, y: 30...33)
        #expect(both.apply(Self.small).data == ImageTransform(rotation: .half).apply(Self.small).data)
    }

    @Test("a quarter turn and a horizontal flip (in the turned picture) transpose the picture")
    func quarterTurnAndHorizontalFlip() {
        Self.expectMarker(
            ImageTransform(rotation: .quarter, flipHorizontal: true), size: VideoSize(width: 36, height: 64),
            x: 2...5, y: 4...11)
    }

    @Test(
        "every rotation and flip combination moves every pixel where the definition says, odd sizes and padded rows too",
        arguments: [(7, 5, 0), (13, 6, 12), (1, 1, 4), (2, 9, 0)])
    func everyPixelOfEveryOrientation(width: Int, height: Int, padding: Int) {
        let input = Self.coordinateFrame(width, height, padding: padding)
        for transform in Self.allOrientations {
            let out = transform.apply(input)
            let size = transform.outputSize(for: input.size)
            #expect(out.size == size)
            if transform.isIdentity {
                // No rotation and no flip, or a half turn and both flips: the frame itself, padding and all.
                #expect(out.bytesPerRow == input.bytesPerRow && out.data == input.data)
            } else {
                #expect(out.bytesPerRow == size.width * 4 && out.data.count == size.width * 4 * size.height)
            }
            guard out.size == size, out.data.count == out.bytesPerRow * size.height else { continue }
            var wrong = 0
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let source = Self.referenceSource(transform, x: x, y: y, input: input.size)
                    if Self.pixel(out, x, y) != Colour(b: UInt8(source.x), g: UInt8(source.y), r: 0x5A) { wrong += 1 }
                }
            }
            #expect(wrong == 0, "\(transform.rotation) h=\(transform.flipHorizontal) v=\(transform.flipVertical): \(wrong) wrong pixels")
        }
    }

    @Test("output sizes: quarter turns swap width and height, a viewport keeps the frame's size")
    func outputSizes() {
        let size = VideoSize(width: 1279, height: 721)
        let swapped = VideoSize(width: 721, height: 1279)
        #expect(ImageTransform().outputSize(for: size) == size)
        #expect(ImageTransform(rotation: .quarter, flipVertical: true).outputSize(for: size) == swapped)
        #expect(ImageTransform(rotation: .half, flipHorizontal: true).outputSize(for: size) == size)
        #expect(ImageTransform(rotation: .threeQuarters).outputSize(for: size) == swapped)
        let zoomed = ImageTransform(viewport: Viewport(x1: 10, y1: 10, x2: 100, y2: 100, space: .hd720))
        #expect(zoomed.outputSize(for: size) == size)
    }

    // MARK: Viewport

    // 1280x720 with a 40x20 marker centred on (640, 360).
    static let hd = frame(1280, 720, markerX: 620..<660, markerY: 350..<370)
    static let centreQuarter = Viewport(x1: 320, y1: 180, x2: 960, y2: 540, space: .hd720)

    @Test("the centre-quarter viewport of 1280x720 doubles a centred marker and keeps 1280x720")
    func centreQuarterZoom() throws {
        let out = ImageTransform(viewport: Self.centreQuarter).apply(Self.hd)
        #expect(out.size == .hd720 && out.bytesPerRow == 1280 * 4)
        let box = try #require(Self.markerBox(out))
        // 80x40 centred: x 600..<680, y 340..<380, give or take a pixel of bilinear edge.
        #expect((599...601).contains(box.x.lowerBound) && (678...680).contains(box.x.upperBound), "x \(box.x)")
        #expect((339...341).contains(box.y.lowerBound) && (378...380).contains(box.y.upperBound), "y \(box.y)")
        #expect(abs(box.count - 80 * 40) <= 2 * (80 + 40), "\(box.count) marker pixels")
        #expect(Self.near(Self.pixel(out, 640, 360), Self.marker), "\(Self.pixel(out, 640, 360))")
        #expect(Self.near(Self.pixel(out, 601, 341), Self.marker), "\(Self.pixel(out, 601, 341))")
        #expect(Self.near(Self.pixel(out, 678, 378), Self.marker), "\(Self.pixel(out, 678, 378))")
        #expect(Self.near(Self.pixel(out, 597, 360), Self.background), "\(Self.pixel(out, 597, 360))")
        #expect(Self.near(Self.pixel(out, 640, 337), Self.background), "\(Self.pixel(out, 640, 337))")
        #expect(Self.near(Self.pixel(out, 0, 0), Self.background) && Self.near(Self.pixel(out, 1279, 719), Self.background))
    }

    @Test("a viewport set in 1280x720 applies proportionally to a 640x360 frame")
    func viewportInAnotherSpace() throws {
        #expect(Self.centreQuarter.crop(in: VideoSize(width: 640, height: 360)) == PixelRect(x: 160, y: 90, width: 320, height: 180))
        let small = Self.frame(640, 360, markerX: 310..<330, markerY: 175..<185)
        let out = ImageTransform(viewport: Self.centreQuarter).apply(small)
        #expect(out.size == VideoSize(width: 640, height: 360) && out.bytesPerRow == 640 * 4)
        let box = try #require(Self.markerBox(out))
        // 40x20 centred: x 300..<340, y 170..<190.
        #expect((299...301).contains(box.x.lowerBound) && (338...340).contains(box.x.upperBound), "x \(box.x)")
        #expect((169...171).contains(box.y.lowerBound) && (188...190).contains(box.y.upperBound), "y \(box.y)")
        #expect(Self.near(Self.pixel(out, 320, 180), Self.marker), "\(Self.pixel(out, 320, 180))")
        #expect(Self.near(Self.pixel(out, 297, 180), Self.background), "\(Self.pixel(out, 297, 180))")
    }

    @Test("the crop rounds outwards, stays inside the frame and is at least 2x2")
    func cropRounding() {
        let half = VideoSize(width: 640, height: 360)
        #expect(Viewport(x1: 1, y1: 1, x2: 5, y2: 3, space: .hd720).crop(in: half) == PixelRect(x: 0, y: 0, width: 3, height: 2))
        #expect(Viewport(x1: 0, y1: 0, x2: 1, y2: 1, space: .hd720).crop(in: half) == PixelRect(x: 0, y: 0, width: 2, height: 2))
        #expect(
            Viewport(x1: 1279, y1: 719, x2: 1280, y2: 720, space: .hd720).crop(in: half)
                == PixelRect(x: 638, y: 358, width: 2, height: 2))
        #expect(Viewport(x1: 320, y1: 180, x2: 960, y2: 540, space: .hd720).crop(in: .hd720) == PixelRect(x: 320, y: 180, width: 640, height: 360))
        // Rounded out to the whole frame, full, or invalid: no crop.
        #expect(Viewport(x1: 1, y1: 1, x2: 1280, y2: 720, space: .hd720).crop(in: half) == nil)
        #expect(Viewport.full(.hd720).crop(in: half) == nil)
        #expect(Viewport(x1: 0, y1: 0, x2: 0, y2: 720, space: .hd720).crop(in: half) == nil)
        // A 1x1 frame cannot hold 2x2.
        #expect(Viewport(x1: 0, y1: 0, x2: 1, y2: 1, space: .hd720).crop(in: VideoSize(width: 1, height: 1)) == nil)
    }

    @Test("a viewport with a quarter turn zooms then turns (two passes), like the two transforms one after the other")
    func viewportAndQuarterTurn() throws {
        let both = ImageTransform(rotation: .quarter, viewport: Self.centreQuarter).apply(Self.hd)
        #expect(both.size == VideoSize(width: 720, height: 1280) && both.bytesPerRow == 720 * 4)
        let box = try #require(Self.markerBox(both))
        // The 80x40 zoomed marker turned: 40x80 centred on (360, 640): x 340..<380, y 600..<680.
        #expect((339...341).contains(box.x.lowerBound) && (378...380).contains(box.x.upperBound), "x \(box.x)")
        #expect((599...601).contains(box.y.lowerBound) && (678...680).contains(box.y.upperBound), "y \(box.y)")
        let composed = ImageTransform(rotation: .quarter).apply(ImageTransform(viewport: Self.centreQuarter).apply(Self.hd))
        // Turning the crop before scaling it only moves libyuv's rounding: a few levels on the marker's edges.
        #expect(Self.maxDifference(both, composed) <= 4, "max \(Self.maxDifference(both, composed))")
        #expect(Self.differingPixels(both, composed) <= Self.edgeBand(80, 40), "\(Self.differingPixels(both, composed)) pixels differ")
    }

    @Test(
        "a viewport with flips or a turn matches zooming first and then flipping or turning, for every combination",
        arguments: ImageTransformTests.allOrientations)
    func viewportWithEveryOrientation(orientation: ImageTransform) throws {
        // 640x360 with a 20x10 marker at (300, 170), off-centre so that a wrong turn or flip moves it.
        let input = Self.frame(640, 360, markerX: 300..<320, markerY: 170..<180)
        let viewport = Viewport(x1: 160, y1: 90, x2: 480, y2: 270, space: input.size)
        var transform = orientation
        transform.viewport = viewport
        let out = transform.apply(input)
        let composed = orientation.apply(ImageTransform(viewport: viewport).apply(input))
        #expect(out.size == orientation.outputSize(for: input.size) && out.bytesPerRow == out.width * 4)
        #expect(composed.size == out.size)
        // Zoomed, the marker is 40x20 at (280, 160); then turned and flipped like a 640x360 picture.
        let box = try #require(Self.markerBox(out))
        let corners = [(280, 160), (319, 179)].map {
            Self.referenceDestination(orientation, x: $0.0, y: $0.1, input: input.size)
        }
        let expectedX = min(corners[0].x, corners[1].x)...max(corners[0].x, corners[1].x)
        let expectedY = min(corners[0].y, corners[1].y)...max(corners[0].y, corners[1].y)
        #expect(abs(box.x.lowerBound - expectedX.lowerBound) <= 1 && abs(box.x.upperBound - expectedX.upperBound) <= 1,
                "x \(box.x), expected \(expectedX)")
        #expect(abs(box.y.lowerBound - expectedY.lowerBound) <= 1 && abs(box.y.upperBound - expectedY.upperBound) <= 1,
                "y \(box.y), expected \(expectedY)")
        // One pass (or the crop turned first) against two: libyuv's rounding moves, a few levels on the edges only.
        #expect(Self.maxDifference(out, composed) <= 4, "max \(Self.maxDifference(out, composed))")
        #expect(Self.differingPixels(out, composed) <= Self.edgeBand(40, 20), "\(Self.differingPixels(out, composed)) pixels differ")
    }

    /// Where the transform's definition puts source pixel (`x`, `y`) (the inverse of ``referenceSource``).
    static func referenceDestination(
        _ transform: ImageTransform, x: Int, y: Int, input: VideoSize
    ) -> (x: Int, y: Int) {
        let output = transform.outputSize(for: input)
        var (rx, ry): (Int, Int)
        switch transform.rotation {
        case .none: (rx, ry) = (x, y)
        case .quarter: (rx, ry) = (input.height - 1 - y, x)
        case .half: (rx, ry) = (input.width - 1 - x, input.height - 1 - y)
        case .threeQuarters: (rx, ry) = (y, input.width - 1 - x)
        }
        if transform.flipHorizontal { rx = output.width - 1 - rx }
        if transform.flipVertical { ry = output.height - 1 - ry }
        return (rx, ry)
    }

    /// The pixels within 2 of the edge of a `width` x `height` block: where bilinear rounding may differ.

    static func edgeBand(_ width: Int, _ height: Int) -> Int { (width + 4) * (height + 4) - (width - 4) * (height - 4) }

    @Test("a padded frame gives the same pixels as a tight one through a viewport, and rotation")
    func paddedRows() {
        let tight = Self.frame(640, 360, markerX: 300..<330, markerY: 170..<190)
        let padded = Self.frame(640, 360, markerX: 300..<330, markerY: 170..<190, padding: 64)
        #expect(padded.bytesPerRow == 640 * 4 + 64)
        for transform in [
            ImageTransform(viewport: Self.centreQuarter), ImageTransform(rotation: .quarter, viewport: Self.centreQuarter),
            ImageTransform(flipVertical: true, viewport: Self.centreQuarter), ImageTransform(rotation: .threeQuarters),
        ] {
            let a = transform.apply(tight), b = transform.apply(padded)
            #expect(b.bytesPerRow == b.width * 4)
            #expect(a.data == b.data)
            #expect(!b.data.contains(0x05), "padding bytes leaked into the picture")
        }
    }

    // MARK: Identity and metadata

    @Test("the identity, a full viewport and an invalid viewport return the frame unchanged, padding included")
    func identity() {
        let padded = Self.frame(64, 36, markerX: 4..<12, markerY: 2..<6, padding: 8)
        for transform in [
            ImageTransform(), ImageTransform(viewport: .full(VideoSize(width: 64, height: 36))),
            ImageTransform(viewport: .full(.hd720)), ImageTransform(viewport: Viewport(x1: 5, y1: 5, x2: 5, y2: 9, space: .hd720)),
        ] {
            #expect(transform.isIdentity)
            let out = transform.apply(padded)
            #expect(out.data == padded.data && out.bytesPerRow == padded.bytesPerRow && out.size == padded.size)
            #expect(out.captureTime == padded.captureTime && out.sourceSequence == padded.sourceSequence)
        }
        #expect(!ImageTransform(flipVertical: true).isIdentity)
        #expect(!ImageTransform(rotation: .half).isIdentity)
        #expect(!ImageTransform(viewport: Self.centreQuarter).isIdentity)
        // Both flips and a half turn cancel out.
        #expect(ImageTransform(rotation: .half, flipHorizontal: true, flipVertical: true).isIdentity)
        #expect(ImageTransform(rotation: .half, flipHorizontal: true, flipVertical: true).apply(Self.small).data == Self.small.data)
    }

    @Test("capture time and source sequence are kept by every kind of pass")
    func metadataKept() {
        let input = Self.frame(64, 36, markerX: 4..<12, markerY: 2..<6, captureTime: 987_654_321, sequence: 4242)
        let viewport = Viewport(x1: 16, y1: 9, x2: 48, y2: 27, space: VideoSize(width: 64, height: 36))
        for transform in [
            ImageTransform(rotation: .quarter), ImageTransform(flipHorizontal: true), ImageTransform(flipVertical: true),
            ImageTransform(viewport: viewport), ImageTransform(rotation: .threeQuarters, viewport: viewport),
        ] {
            let out = transform.apply(input)
            #expect(out.captureTime == 987_654_321 && out.sourceSequence == 4242 && out.pixelFormat == .bgra)
            #expect(out.data != input.data || out.size != input.size)
        }
    }

    @Test("checkedApply refuses a frame the media contract refuses")
    func checkedApplyRefuses() {
        let short = VideoFrame(width: 4, height: 4, bytesPerRow: 16, data: [UInt8](repeating: 0, count: 60), captureTime: 0)
        #expect(throws: ContractError.bufferLength(expected: 64, actual: 60)) {
            try ImageTransform(rotation: .quarter).checkedApply(short)
        }
        let yuyv = VideoFrame(width: 4, height: 4, bytesPerRow: 16, pixelFormat: .yuyv, data: [UInt8](repeating: 0, count: 64), captureTime: 0)
        #expect(throws: ContractError.notBGRA(.yuyv)) { try ImageTransform(flipHorizontal: true).checkedApply(yuyv) }
    }

    // MARK: Viewport problems

    @Test("a valid or full viewport has no problem")
    func validViewports() {
        #expect(Self.centreQuarter.problem == nil)
        #expect(Viewport.full(.hd720).problem == nil && Viewport.full(.hd720).isFull)
        #expect(!Self.centreQuarter.isFull)
        #expect(Viewport(x1: 1279, y1: 719, x2: 1280, y2: 720, space: .hd720).problem == nil)
    }

    @Test("a viewport with no area says which edge must move")
    func zeroArea() {
        #expect(
            Viewport(x1: 0, y1: 0, x2: 0, y2: 720, space: .hd720).problem
                == "the viewport 0,0-0,720 has no area; x2 must be greater than x1 (the frame is 1280x720)")
        #expect(
            Viewport(x1: 10, y1: 300, x2: 200, y2: 300, space: .hd720).problem
                == "the viewport 10,300-200,300 has no area; y2 must be greater than y1 (the frame is 1280x720)")
    }

    @Test("an inverted viewport says which corner is on the wrong side")
    func inverted() {
        #expect(
            Viewport(x1: 960, y1: 0, x2: 320, y2: 720, space: .hd720).problem
                == "the viewport 960,0-320,720 is inverted: x2 (320) is left of x1 (960); x2 must be greater than x1 (the frame is 1280x720)")
        #expect(
            Viewport(x1: 0, y1: 540, x2: 1280, y2: 180, space: .hd720).problem
                == "the viewport 0,540-1280,180 is inverted: y2 (180) is above y1 (540); y2 must be greater than y1 (the frame is 1280x720)")
    }

    @Test("a viewport outside the frame, or with a negative edge, names the allowed ranges")
    func outside() {
        #expect(
            Viewport(x1: 100, y1: 100, x2: 1400, y2: 800, space: .hd720).problem
                == "the viewport 100,100-1400,800 is outside the 1280x720 frame: x must be in 0...1280, y in 0...720")
        #expect(
            Viewport(x1: -10, y1: 0, x2: 640, y2: 360, space: .hd720).problem
                == "the viewport -10,0-640,360 is outside the 1280x720 frame: x must be in 0...1280, y in 0...720")
        #expect(
            Viewport(x1: 0, y1: -1, x2: 640, y2: 360, space: .hd720).problem
                == "the viewport 0,-1-640,360 is outside the 1280x720 frame: x must be in 0...1280, y in 0...720")
        #expect(
            Viewport(x1: 0, y1: 0, x2: 1, y2: 1, space: VideoSize(width: 0, height: 720)).problem
                == "the viewport 0,0-1,1 is set in a 0x720 frame, which has no pixels; the frame's width and height must be at least 1")
    }

    // MARK: Codable

    @Test("a transform round-trips through JSON, the rotation as degrees")
    func codable() throws {
        let transform = ImageTransform(rotation: .threeQuarters, flipHorizontal: true, viewport: Self.centreQuarter)
        let json = try JSONEncoder().encode(transform)
        #expect(try JSONDecoder().decode(ImageTransform.self, from: json) == transform)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["rotation"] as? Int == 270)
        let viewport = try #require(object["viewport"] as? [String: Any])
        #expect(viewport["x2"] as? Int == 960)
        #expect((viewport["space"] as? [String: Any])?["width"] as? Int == 1280)
    }

    // MARK: Helpers

    static func maxDifference(_ a: VideoFrame, _ b: VideoFrame) -> Int {
        guard a.data.count == b.data.count else { return Int.max }
        let (x, y) = (a.data, b.data)
        var largest = 0
        for i in x.indices { largest = max(largest, abs(Int(x[i]) - Int(y[i]))) }
        return largest
    }

    static func differingPixels(_ a: VideoFrame, _ b: VideoFrame) -> Int {
        guard a.data.count == b.data.count else { return Int.max }
        let (x, y) = (a.data, b.data)
        var count = 0
        for i in stride(from: 0, to: x.count, by: 4)
        where x[i] != y[i] || x[i + 1] != y[i + 1] || x[i + 2] != y[i + 2] || x[i + 3] != y[i + 3] {
            count += 1
        }
        return count
    }

    @Test("a frame whose rows are not a whole number of pixels apart is turned like a tight one")
    func oddStrideRotates() throws {
        let width = 5, height = 3, stride = width * 4 + 3
        var data = [UInt8](repeating: 0, count: stride * height)
        for y in 0..<height { for x in 0..<width { for c in 0..<4 { data[y * stride + x * 4 + c] = UInt8(y * 16 + x * 2 + (c == 3 ? 1 : 0)) } } }
        let odd = VideoFrame(width: width, height: height, bytesPerRow: stride, data: data, captureTime: 1)
        var tightData: [UInt8] = []
        for y in 0..<height { tightData += data[(y * stride)..<(y * stride + width * 4)] }
        let tight = VideoFrame(width: width, height: height, bytesPerRow: width * 4, data: tightData, captureTime: 1)
        let transform = ImageTransform(rotation: .quarter, flipHorizontal: true)
        let a = try transform.checkedApply(odd), b = try transform.checkedApply(tight)
        #expect(a.width == 3 && a.height == 5 && a.data == b.data)
    }
}
