import CamoCapture
import CamoMedia
import CamoQR
import Foundation
import Testing

/// `--camera image:FILE` with a PNG: the pairing code held up to the "camera" is read through CamoCapture's
/// still image source, which decodes with libpng through CamoMedia.
@Suite("Still image PNGs")
struct StillImageTests {
    static func temporaryFile(_ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("camo-still-\(UUID().uuidString).png")
        try Data(bytes).write(to: url)
        return url
    }

    @Test func aQRCodePNGScansFromTheStillImageCamera() throws {
        let payload = "camo-pair:still-image"
        let url = try Self.temporaryFile(try QRCode(payload).pngData(moduleSize: 4))
        defer { try? FileManager.default.removeItem(at: url) }
        let source = try StillImageSource(path: url.path)
        #expect(source.frame.pixelFormat == .bgra && source.frame.bytesPerRow == source.frame.width * 4)
        #expect(QRScanner().scan(source.frame) == [payload])
    }

    @Test func aDamagedPNGNamesTheFileAndTheReason() throws {
        var bytes = try QRCode("camo-pair:damaged").pngData()
        bytes[17] ^= 0x40  // inside IHDR: libpng's CRC check refuses it
        let url = try Self.temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            _ = try StillImageSource(path: url.path)
            Issue.record("a damaged PNG was accepted")
        } catch {
            #expect(error.description.contains(url.path) && error.description.contains("CRC"), "\(error)")
        }
    }
}
