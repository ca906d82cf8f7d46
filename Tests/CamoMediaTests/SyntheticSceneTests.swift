import CamoMedia
import Testing

/// The synthetic scenes of `--camera test:block` and `test:steps`: what changes from frame to frame, and where.
@Suite("Synthetic scenes")
struct SyntheticSceneTests {
    /// Small enough for per-pixel checks in a debug build.
    static let size = VideoSize(width: 320, height: 180)

    /// The channels of pixel (x, y).
    static func channels(_ pixels: [UInt8], _ x: Int, _ y: Int, width: Int) -> (blue: UInt8, green: UInt8, red: UInt8, alpha: UInt8) {
        let offset = (y * width + x) * 4
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3])
    }

    @Test("the block is 6 % of the width, stays inside the left quarter, and sweeps it back and forth every 4 s", arguments: [
        VideoSize(width: 1280, height: 720), VideoSize(width: 640, height: 360), VideoSize(width: 320, height: 180),
    ])
    func blockPath(size: VideoSize) {
        var lefts: [Int] = []
        for n in UInt64(0)..<240 {
            let (x, y) = SyntheticScene.blockRect(frameNumber: n, size: size)
            #expect(x.lowerBound >= 0 && x.upperBound <= size.width / 4, "frame \(n): columns \(x) at width \(size.width)")
            #expect(abs(Double(x.count) - 0.06 * Double(size.width)) <= 1, "frame \(n): \(x.count) columns wide")
            #expect(y.lowerBound >= 0 && y.upperBound <= size.height && abs(Double(y.count) - 0.2 * Double(size.height)) <= 1, "rows \(y)")
            lefts.append(x.lowerBound)
        }
        let travel = size.width / 4 - Int((0.06 * Double(size.width)).rounded())
        #expect(lefts.min() == 0 && lefts.max() == travel, "left edges \(lefts.min() ?? -1)...\(lefts.max() ?? -1), travel \(travel)")
        #expect(lefts[0] == 0 && lefts[60] == travel && lefts[120] == 0, "a round trip is 120 frames: \(lefts[0]), \(lefts[60]), \(lefts[120])")
        #expect(lefts[30] > lefts[0] && lefts[90] < lefts[60], "it moves right, then left")
        #expect(Array(lefts[0..<120]) == Array(lefts[120..<240]), "the path repeats")
    }

    @Test("test:block frames differ from the still only inside the left quarter: the block, dark, moved between frames")
    func blockFrames() {
        let size = Self.size
        var renderer = SceneRenderer(scene: .block)
        let still = SceneStill.render(size: size)
        for n: UInt64 in [0, 17, 45, 60, 100] {
            let pixels = renderer.render(frameNumber: n, size: size)
            #expect(pixels.count == size.width * size.height * 4)
            let (columns, rows) = SyntheticScene.blockRect(frameNumber: n, size: size)
            var differing = 0, outside = 0
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let offset = (y * size.width + x) * 4
                    guard pixels[offset..<(offset + 4)] != still[offset..<(offset + 4)] else { continue }
                    differing += 1
                    if !columns.contains(x) || !rows.contains(y) || x >= size.width / 4 { outside += 1 }
                }
            }
            #expect(outside == 0, "frame \(n): \(outside) pixels changed outside the block")
            #expect(differing > columns.count * rows.count * 9 / 10, "frame \(n): only \(differing) pixels of the block differ from the still")
            let centre = Self.channels(pixels, (columns.lowerBound + columns.upperBound) / 2, (rows.lowerBound + rows.upperBound) / 2, width: size.width)
            #expect(centre.red == SyntheticScene.blockLevel && centre.green == SyntheticScene.blockLevel && centre.blue == SyntheticScene.blockLevel && centre.alpha == 255)
        }
        #expect(renderer.render(frameNumber: 10, size: size) != renderer.render(frameNumber: 20, size: size), "the block moves")
        #expect(renderer.render(frameNumber: 10, size: size) == renderer.render(frameNumber: 130, size: size), "and comes back")
    }

    @Test("test:steps: the whole still, every channel, +40 or -40 every 3 s (0, +40, 0, -40), nothing else changes")
    func brightnessSteps() {
        let offsets = (UInt64(0)..<480).map { SyntheticScene.brightnessOffset(frameNumber: $0) }
        #expect(Set(offsets[0..<90]) == [0] && Set(offsets[90..<180]) == [40] && Set(offsets[180..<270]) == [0] && Set(offsets[270..<360]) == [-40])
        #expect(Array(offsets[360..<480]) == Array(offsets[0..<120]), "the cycle repeats every 12 s")
        let steps = zip(offsets, offsets.dropFirst()).map { $1 - $0 }.filter { $0 != 0 }
        #expect(steps == [40, -40, -40, 40, 40], "steps of 40 at frames 90, 180, 270, 360 and 450: \(steps)")

        let size = VideoSize(width: 320, height: 180)
        var renderer = SceneRenderer(scene: .steps)
        let base = renderer.render(frameNumber: 0, size: size)
        #expect(base == SceneStill.render(size: size))
        for (n, offset) in [(UInt64(95), 40), (200, 0), (300, -40)] {
            let frame = renderer.render(frameNumber: n, size: size)
            var unexpected = 0
            for i in base.indices {
                let expected = i % 4 == 3 ? 255 : min(max(Int(base[i]) + offset, 0), 255)
                if Int(frame[i]) != expected { unexpected += 1 }
            }
            #expect(unexpected == 0, "frame \(n): \(unexpected) bytes are not the still \(offset > 0 ? "+" : "")\(offset)")
        }
    }

    @Test("the still: channels in 56...196 but the lamp's, which clips white at +40; textured, not flat; empty at size 0")
    func still() {
        let size = Self.size
        let pixels = SceneStill.render(size: size)
        var lampPixels = 0, clippedAtPlus40 = 0, outOfRange = 0
        var sum = 0.0, sumSquares = 0.0
        for y in 0..<size.height {
            let v = (Double(y) + 0.5) / Double(size.height)
            for x in 0..<size.width {
                let u = (Double(x) + 0.5) / Double(size.width)
                let c = Self.channels(pixels, x, y, width: size.width)
                let values = [Int(c.red), Int(c.green), Int(c.blue)]
                #expect(c.alpha == 255)
                if SceneStill.lampArea.u.contains(u) && SceneStill.lampArea.v.contains(v) {
                    lampPixels += 1
                    if values.contains(where: { $0 + 40 >= 255 }) { clippedAtPlus40 += 1 }
                } else if !values.allSatisfy(SceneStill.channelRange.contains) {
                    outOfRange += 1
                }
                let luma = 0.299 * Double(c.red) + 0.587 * Double(c.green) + 0.114 * Double(c.blue)
                sum += luma
                sumSquares += luma * luma
            }
        }
        #expect(outOfRange == 0, "\(outOfRange) pixels outside the lamp have a channel outside 56...196")
        #expect(lampPixels > 0 && clippedAtPlus40 == lampPixels, "lamp \(lampPixels) pixels, \(clippedAtPlus40) clip at +40")
        let count = Double(size.width * size.height)
        let deviation = (sumSquares / count - (sum / count) * (sum / count)).squareRoot()
        #expect(deviation > 15, "luma standard deviation \(deviation): the still should not be flat")
        #expect(SceneStill.render(size: VideoSize(width: 0, height: 10)).isEmpty)
        var renderer = SceneRenderer(scene: .block)
        #expect(renderer.render(frameNumber: 0, size: VideoSize(width: 10, height: 0)).isEmpty)
    }
}
