import CamoMedia
import CamoQR
import CamoWire
import Foundation
import Testing

/// pairing-fixtures/: every payload through the parser, every PNG rendered, scanned by us and by zbarimg.
@Suite("Pairing fixtures")
struct FixtureTests {
    @Test func manifestIsWellFormed() throws {
        let manifest = try Fixtures.manifest()
        #expect(manifest.format == 1)
        #expect(manifest.cases.count >= 30)
        #expect(Set(manifest.cases.map(\.name)).count == manifest.cases.count, "case names are unique")
        let reasons = Set(PairingPayloadError.Reason.allCases.map(\.rawValue))
        for item in manifest.cases {
            #expect(item.expect == "accepted" || reasons.contains(item.expect), "\(item.name): \(item.expect)")
            #expect(!item.note.isEmpty, "\(item.name) has a note")
            if item.expect == "accepted" { #expect(item.png == "\(item.name).png", "\(item.name) has a PNG") }
        }
        let refusedWithPNG = manifest.cases.filter { $0.expect != "accepted" && $0.png != nil }
        #expect(refusedWithPNG.count >= 6)
    }

    @Test func everyReasonAppears() throws {
        let expected = Set(try Fixtures.manifest().cases.map(\.expect))
        for reason in PairingPayloadError.Reason.allCases {
            #expect(expected.contains(reason.rawValue), "no manifest case refused with \(reason)")
        }
        #expect(expected.contains("accepted"))
    }

    @Test func everyCaseParsesAsExpected() throws {
        let manifest = try Fixtures.manifest()
        for item in manifest.cases {
            do {
                let payload = try PairingPayload.parse(item.payload, now: manifest.now)
                #expect(item.expect == "accepted", "\(item.name): accepted, expected \(item.expect)")
                // What the studio would write for this payload parses to the same payload.
                #expect(try PairingPayload.parse(payload.uri, now: manifest.now) == payload, "\(item.name)")
            } catch {
                #expect(error.reason.rawValue == item.expect, "\(item.name): \(error.reason): \(error.detail)")
                #expect(!error.detail.isEmpty)
            }
        }
    }

    /// The same picture, not the same bytes: how the pixels are compressed depends on the libpng and zlib
    /// versions (the fixtures were written by an older zlib-only encoder, so they also test reading another
    /// encoder's files).
    @Test func everyPNGIsOurRendering() throws {
        for (item, bytes) in try Fixtures.pngCases() {
            let (side, gray) = try QRCode(item.payload).grayPixels()
            let stored = try PNGImage.decode(bytes)
            let advice = "if the renderer changed on purpose, run the fixture tests with CAMO_REGENERATE_FIXTURES=1"
            #expect(stored.width == side && stored.height == side, "\(item.png ?? ""): size differs; \(advice)")
            #expect(stored.bgra == gray.flatMap { [$0, $0, $0, 255] },
                    "\(item.png ?? ""): differs from QRCode(payload).grayPixels(); \(advice)")
            #expect(try PNGImage.decode(QRCode(item.payload).pngData()) == stored, "\(item.png ?? "")")
        }
    }

    @Test func everyPNGScansToItsPayload() throws {
        let scanner = QRScanner()
        for (item, bytes) in try Fixtures.pngCases() {
            let picture = try PNGImage.decode(bytes)
            #expect(scanner.scan(picture) == [item.payload], "\(item.png ?? "")")
        }
    }

    @Test func everyPNGScansWithZbarimg() throws {
        guard let zbarimg = Tool.find("zbarimg") else {
            Issue.record("zbarimg is missing: apt-get install zbar-tools (Debian's zbar command-line tools)")
            return
        }
        for (item, _) in try Fixtures.pngCases() {
            // Safe: pngCases only returns cases with a PNG.
            let path = Fixtures.directory.appendingPathComponent(item.png!).path
            let (output, status) = try Tool.run(zbarimg, ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", path])
            #expect(status == 0, "zbarimg \(path) exited with \(status)")
            // zbarimg prints each symbol's data followed by a newline.
            #expect(output == Data((item.payload + "\n").utf8), "\(item.png ?? ""): \(String(decoding: output, as: UTF8.self))")
        }
    }

    @Test func aScannedPayloadParses() throws {
        let manifest = try Fixtures.manifest()
        let scanner = QRScanner()
        let item = try #require(manifest.cases.first { $0.name == "ipv6-addresses" })
        let picture = try PNGImage.decode([UInt8](Data(contentsOf: Fixtures.directory.appendingPathComponent(item.name + ".png"))))
        let text = try #require(scanner.scan(picture).first)
        let payload = try PairingPayload.parse(text, now: manifest.now)
        #expect(payload.addresses.count == 3)
        #expect(payload.addresses.first?.host == "fe80::1c2b:3aff:fe4d:5e6f%eth0")
    }
}
