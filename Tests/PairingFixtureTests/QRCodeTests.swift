import CamoMedia
import CamoQR
import CamoWire
import Testing

/// Drawing QR codes (PNG, terminal) and reading them back.
@Suite("QR codes")
struct QRCodeTests {
    static let payload = "camo-pair:1?id=5f0c6a1e-3b2d-4c8e-9f7a-1b2c3d4e5f60&name=Studio%20Z%C3%BCrich"
        + "&secret=3xvDl3JqDZd4jni-ao_a8quY6p-cJNAkvcjQsP55gdA&exp=1795000120&addr=192.168.1.20:47801"

    @Test func renderingIsDeterministic() throws {
        let first = try QRCode(Self.payload)
        let second = try QRCode(Self.payload)
        #expect(first == second)
        #expect(first.pngData() == second.pngData())
        #expect(first.terminalText() == second.terminalText())
        #expect(first.size >= 21 && (first.size - 17) % 4 == 0, "a QR side is 17 + 4 * version")
        let png = try PNGImage.decode(first.pngData(moduleSize: 3, quietZone: 2))
        #expect(png.width == (first.size + 4) * 3 && png.height == png.width)
        // Corners: the quiet zone is white, the finder pattern's corner is black.
        #expect(Array(png.bgra[0..<4]) == [255, 255, 255, 255])
        let corner = (6 * png.width + 6) * 4
        #expect(Array(png.bgra[corner..<(corner + 4)]) == [0, 0, 0, 255])
        #expect(first.isDark(x: 0, y: 0) && !first.isDark(x: -1, y: 0) && !first.isDark(x: first.size, y: 0))
    }

    @Test(arguments: 1...8)
    func scansAtEveryModuleSize(moduleSize: Int) throws {
        let code = try QRCode(Self.payload)
        let picture = try PNGImage.decode(code.pngData(moduleSize: moduleSize))
        #expect(QRScanner().scan(picture) == [Self.payload], "module size \(moduleSize)")
    }

    /// The code held up in a webcam picture: a 640x360 mid-gray frame with the code somewhere in it.
    @Test func scansInsideAWebcamFrame() throws {
        let code = try QRCode(Self.payload)
        let moduleSize = 340 / (code.size + 8)
        let picture = try PNGImage.decode(code.pngData(moduleSize: moduleSize))
        let width = 640, height = 360
        let pixels = Canvas.frame(width: width, height: height, gray: 128, drawing: picture, left: 217, top: 9)
        let frame = VideoFrame(width: width, height: height, bytesPerRow: width * 4, data: pixels, captureTime: 0)
        let scanner = QRScanner()
        #expect(scanner.scan(frame) == [Self.payload])
        // The same scanner again (its buffer reused), and with padding at the end of each row.
        #expect(scanner.scan(frame) == [Self.payload])
        var padded: [UInt8] = []
        for row in 0..<height { padded += pixels[(row * width * 4)..<((row + 1) * width * 4)] + [1, 2, 3, 4, 5, 6, 7, 8] }
        #expect(scanner.scan(bgra: padded, width: width, height: height, stride: width * 4 + 8) == [Self.payload])
        // A frame without a code, a frame of another format, and impossible geometry give nothing.
        #expect(scanner.scan(bgra: [UInt8](repeating: 128, count: width * height * 4), width: width, height: height,
                             stride: width * 4).isEmpty)
        var yuyv = frame
        yuyv.pixelFormat = .yuyv
        #expect(scanner.scan(yuyv).isEmpty)
        #expect(scanner.scan(bgra: pixels, width: width, height: height + 1, stride: width * 4).isEmpty)
        #expect(scanner.scan(bgra: pixels, width: width, height: height, stride: width * 4 - 1).isEmpty)
        #expect(scanner.scan(bgra: [], width: 0, height: 0, stride: 0).isEmpty)
    }

    /// A fixture PNG as it was stored (module size 8), in a 1280x720 frame off-center.
    @Test func scansAFixtureInsideAnHDFrame() throws {
        let (item, bytes) = try #require(try Fixtures.pngCases().first { $0.item.name == "minimal" })
        let picture = try PNGImage.decode(bytes)
        let pixels = Canvas.frame(width: 1280, height: 720, gray: 100, drawing: picture, left: 700, top: 200)
        #expect(QRScanner().scan(bgra: pixels, width: 1280, height: 720, stride: 1280 * 4) == [item.payload])
    }

    @Test func twoCodesInOneFrame() throws {
        let first = try PNGImage.decode(QRCode("camo-pair:first").pngData(moduleSize: 4))
        let second = try PNGImage.decode(QRCode("camo-pair:second").pngData(moduleSize: 4))
        var pixels = Canvas.frame(width: 640, height: 360, gray: 128, drawing: first, left: 10, top: 10)
        let other = Canvas.frame(width: 640, height: 360, gray: 128, drawing: second, left: 330, top: 10)
        for x in 320..<640 {
            for y in 0..<360 {
                let index = (y * 640 + x) * 4
                pixels.replaceSubrange(index..<(index + 4), with: other[index..<(index + 4)])
            }
        }
        let found = QRScanner().scan(bgra: pixels, width: 640, height: 360, stride: 640 * 4)
        #expect(Set(found) == ["camo-pair:first", "camo-pair:second"])
    }

    /// Text that is not ASCII comes back byte for byte.
    @Test func bytesComeBackUnconverted() throws {
        let text = "Zürich 東京 🎥 ¿ß?"
        let picture = try PNGImage.decode(QRCode(text).pngData())
        #expect(QRScanner().scan(picture) == [text])
    }

    @Test func terminalTextRoundTrips() throws {
        let code = try QRCode(Self.payload)
        for quietZone in [0, 1, 2, 4] {
            let text = code.terminalText(quietZone: quietZone)
            let side = code.size + 2 * quietZone
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(!text.hasSuffix("\n"))
            #expect(lines.count == (side + 1) / 2)
            // Back to modules: a block (upper, lower or full) is a light module, a space a dark one.
            var light = [[Bool]](repeating: [Bool](repeating: false, count: side), count: lines.count * 2)
            for (lineIndex, line) in lines.enumerated() {
                #expect(line.count == side)
                for (x, character) in line.enumerated() {
                    switch character {
                    case "█": (light[2 * lineIndex][x], light[2 * lineIndex + 1][x]) = (true, true)
                    case "▀": light[2 * lineIndex][x] = true
                    case "▄": light[2 * lineIndex + 1][x] = true
                    case " ": break
                    default: Issue.record("unexpected character \(character)")
                    }
                }
            }
            for y in 0..<side {
                for x in 0..<side {
                    // Light modules are drawn: the picture is the code with dark and light swapped.
                    #expect(light[y][x] == !code.isDark(x: x - quietZone, y: y - quietZone), "(\(x), \(y))")
                }
            }
            if side % 2 == 1 { #expect(!light[side].contains(true), "the half row below the code is blank") }
        }
    }

    @Test func refusals() {
        #expect(throws: QRCodeError.self) { try QRCode("") }
        #expect(throws: QRCodeError.self) { try QRCode("a\u{0}b") }
        do {
            _ = try QRCode(String(repeating: "x", count: 3_000))
            Issue.record("3000 bytes fit in a QR code?")
        } catch {
            #expect(error.reason == .tooLong)
            #expect(error.detail.contains("3000 bytes"))
        }
        // The longest pairing payload fits.
        #expect((try? QRCode(String(repeating: "x", count: PairingPayload.maxLength))) != nil)
    }
}
