import CamoTestSupport
import Foundation
import Testing

@testable import CamoWire

/// The QR pairing payload parser, one rule at a time (Docs/PAIRING.md, section 1), and the round trip.
@Suite("Pairing payload")
struct PairingPayloadTests {
    static let now: UInt64 = 1_795_000_000
    static let id = "5f0c6a1e-3b2d-4c8e-9f7a-1b2c3d4e5f60"
    static let secret: [UInt8] = (0..<32).map { UInt8($0 * 7 + 3) }
    static let secretText = Base64URL.encode(secret)

    /// A valid payload text with the given fields, and `extra` appended.
    static func text(
        id: String = id, name: String = "Studio", secret: String = secretText, exp: String = "1795000120",
        extra: String = ""
    ) -> String {
        "camo-pair:1?id=\(id)&name=\(name)&secret=\(secret)&exp=\(exp)\(extra)"
    }

    static func refusal(_ text: String, now: UInt64 = now) -> PairingPayloadError? {
        do {
            _ = try PairingPayload.parse(text, now: now)
            return nil
        } catch {
            return error
        }
    }

    /// Expects `text` to be refused for `reason` with a detail that contains each of `mentions`.
    static func expectRefusal(
        _ text: String, _ reason: PairingPayloadError.Reason, mentioning mentions: [String] = [],
        now: UInt64 = now, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = refusal(text, now: now) else {
            Issue.record("accepted, expected \(reason): \(text)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.reason == reason, "\(error.detail)", sourceLocation: sourceLocation)
        for mention in mentions {
            #expect(error.detail.contains(mention), "\(error.detail) should mention \(mention)", sourceLocation: sourceLocation)
        }
        #expect(error.description == error.detail, sourceLocation: sourceLocation)
        #expect(error.detail.hasSuffix(".") || error.detail.hasSuffix(")"), sourceLocation: sourceLocation)
    }

    // MARK: Accepted

    @Test func parsesAValidPayload() throws {
        let payload = try PairingPayload.parse(Self.text(extra: "&addr=192.168.1.20:47801,[fe80::1%25eth0]:47802"), now: Self.now)
        #expect(payload.studioId == Self.id)
        #expect(payload.studioName == "Studio")
        #expect(payload.secret == Self.secret)
        #expect(payload.expiry == 1_795_000_120)
        #expect(payload.addresses == [
            PairingAddress(host: "192.168.1.20", port: 47801), PairingAddress(host: "fe80::1%eth0", port: 47802),
        ])
        #expect(payload.addresses.map(\.description) == ["192.168.1.20:47801", "[fe80::1%eth0]:47802"])
    }

    @Test func writesTheDocumentedURI() {
        let payload = PairingPayload(
            studioId: Self.id, studioName: "Rock & Roll = 100% ü", secret: Self.secret, expiry: 1_795_000_120,
            addresses: [PairingAddress(host: "10.0.0.2", port: 1), PairingAddress(host: "fe80::1%eth0", port: 47801)])
        #expect(payload.uri == "camo-pair:1?id=\(Self.id)&name=Rock%20%26%20Roll%20%3D%20100%25%20%C3%BC"
            + "&secret=\(Self.secretText)&exp=1795000120&addr=10.0.0.2:1,[fe80::1%25eth0]:47801")
        #expect(Self.secretText.count == 43)
    }

    @Test func schemeIsCaseInsensitiveAndFieldsMayComeInAnyOrder() throws {
        let text = "Camo-PAIR:1?exp=1795000120&secret=\(Self.secretText)&name=Studio&id=\(Self.id)"
        #expect(try PairingPayload.parse(text, now: Self.now).studioId == Self.id)
    }

    @Test func surroundingASCIIWhitespaceIsTrimmed() throws {
        let payload = try PairingPayload.parse(" \t" + Self.text() + "\r\n", now: Self.now)
        #expect(payload.studioName == "Studio")
        Self.expectRefusal(Self.text(name: "My Studio"), .badEncoding, mentioning: ["%20"])
    }

    @Test func generateMakesAFreshSecretAndCapsTheLifetime() throws {
        let first = PairingPayload.generate(studioId: Self.id, studioName: "Stüdio", now: Self.now)
        let second = PairingPayload.generate(studioId: Self.id, studioName: "Stüdio", now: Self.now)
        #expect(first.secret.count == 32)
        #expect(first.secret != second.secret)
        #expect(first.expiry == Self.now + 120)
        #expect(try PairingPayload.parse(first.uri, now: Self.now) == first)
        let long = PairingPayload.generate(studioId: Self.id, studioName: "S", lifetime: 100_000, now: Self.now)
        #expect(long.expiry == Self.now + PairingPayload.maxLifetime)
        #expect(PairingPayload.generate(studioId: "s", studioName: "S", now: .max).expiry == .max)
    }

    // MARK: One test per refusal rule

    @Test func tooLongIsCheckedBeforeAnythingElse() {
        let garbage = String(repeating: "\u{0}", count: PairingPayload.maxLength + 1)
        Self.expectRefusal(garbage, .tooLong, mentioning: ["1025", "1024"])
        let padded = Self.text() + String(repeating: " ", count: PairingPayload.maxLength + 1 - Self.text().utf8.count)
        Self.expectRefusal(padded, .tooLong)
        let exactly = Self.text() + String(repeating: " ", count: PairingPayload.maxLength - Self.text().utf8.count)
        #expect(Self.refusal(exactly) == nil)
    }

    @Test func textWithoutASchemeIsNotAPairingCode() {
        for text in ["", "   ", "hello world", Self.id, "12:30", "://x", "-x:1"] {
            Self.expectRefusal(text, .notAPairingCode, mentioning: ["camo-pair:", "camo-studio pair"])
        }
    }

    @Test func anotherSchemeIsUnknown() {
        Self.expectRefusal("https://example.com/?id=1", .unknownScheme, mentioning: ["\"https:\"", "camo-pair:"])
        Self.expectRefusal("camo:1?id=x", .unknownScheme, mentioning: ["camo:"])
    }

    @Test func versionMustBeOne() {
        let rest = String(Self.text().dropFirst("camo-pair:1".count))
        Self.expectRefusal("camo-pair:2" + rest, .unknownVersion, mentioning: ["version \"2\"", "Update camo-agent"])
        Self.expectRefusal("camo-pair:01" + rest, .unknownVersion)
        Self.expectRefusal("camo-pair:99999999999999999999999" + rest, .unknownVersion)
        Self.expectRefusal("camo-pair:v1" + rest, .badEncoding, mentioning: ["not a decimal number"])
        Self.expectRefusal("camo-pair:" + rest, .badEncoding)
        Self.expectRefusal("camo-pair:1.0" + rest, .badEncoding)
    }

    @Test func fieldWithoutEqualsIsBadEncoding() {
        Self.expectRefusal(Self.text(extra: "&addr"), .badEncoding, mentioning: ["\"addr\"", "without \"=\""])
        Self.expectRefusal(Self.text(extra: "&"), .badEncoding)
    }

    @Test func aFieldTwiceIsDuplicate() {
        Self.expectRefusal(Self.text(extra: "&exp=1795000120"), .duplicateField, mentioning: ["\"exp\" twice"])
        Self.expectRefusal(Self.text(extra: "&addr=10.0.0.1:1&addr=10.0.0.1:1"), .duplicateField, mentioning: ["addr"])
    }

    @Test func unknownFieldNamesAreRefused() {
        Self.expectRefusal(Self.text(extra: "&port=47801"), .unknownField, mentioning: ["\"port\"", "update camo-agent"])
        Self.expectRefusal(Self.text().replacingOccurrences(of: "&secret=", with: "&Secret="), .unknownField, mentioning: ["Secret"])
        Self.expectRefusal(Self.text(extra: "&=x"), .unknownField)
    }

    @Test func requiredFieldsMustBePresentAndNonEmpty() {
        let parts = ["id=\(Self.id)", "name=Studio", "secret=\(Self.secretText)", "exp=1795000120"]
        for (index, field) in ["id", "name", "secret", "exp"].enumerated() {
            var rest = parts
            rest.remove(at: index)
            Self.expectRefusal("camo-pair:1?" + rest.joined(separator: "&"), .missingField, mentioning: ["no \(field) field"])
        }
        Self.expectRefusal(Self.text(name: ""), .missingField, mentioning: ["empty name field"])
        Self.expectRefusal(Self.text(id: ""), .missingField, mentioning: ["empty id field"])
        Self.expectRefusal("camo-pair:1", .missingField, mentioning: ["no id field", "cut off"])
        Self.expectRefusal("camo-pair:1?", .missingField)
    }

    @Test func badPercentEncodingInTheName() {
        for name in ["Studio%2", "Studio%", "Studio%G0", "My Studio", "My+Studio", "Studio#1", "Stüdio", "a\"b"] {
            Self.expectRefusal(Self.text(name: name), .badEncoding, mentioning: ["studio name"])
        }
        Self.expectRefusal(Self.text(name: "Studio%C3%28"), .badEncoding, mentioning: ["UTF-8"])
        Self.expectRefusal(Self.text(name: "%FF"), .badEncoding, mentioning: ["UTF-8"])
        // Lower-case hex and RFC 3986 query characters are fine.
        #expect((try? PairingPayload.parse(Self.text(name: "%c3%bc!$'()*,;=:@/?"), now: Self.now))?.studioName
            == "ü!$'()*,;=:@/?")
    }

    @Test func secretMustBeBase64URLWithoutPadding() {
        // Standard base64's '+' and '/' are not base64url.
        for character in ["+", "/", "%2B", "."] {
            Self.expectRefusal(Self.text(secret: character + Self.secretText.dropFirst(character.count)), .badEncoding,
                               mentioning: ["base64url"])
        }
        Self.expectRefusal(Self.text(secret: Self.secretText + "="), .badEncoding, mentioning: ["secret"])
        Self.expectRefusal(Self.text(secret: Self.secretText + "AA"), .badEncoding)  // 45 characters: impossible
        // 43 characters carry 258 bits: the last 2 must be zero, so each secret has one spelling.
        let lastFlipped = String(Self.secretText.dropLast()) + "B"
        Self.expectRefusal(Self.text(secret: lastFlipped), .badEncoding)
    }

    @Test func secretMustBe32Bytes() {
        Self.expectRefusal(Self.text(secret: Base64URL.encode(Array(repeating: 1, count: 16))), .badSecretLength,
                           mentioning: ["16 bytes", "32 bytes"])
        Self.expectRefusal(Self.text(secret: Base64URL.encode(Array(repeating: 1, count: 33))), .badSecretLength,
                           mentioning: ["33 bytes"])
    }

    @Test func expiryMustBeADecimalUInt64() {
        for exp in ["1.795e9", "-1", "+1795000120", "0x6AFD0000", "18446744073709551616", "１７９５"] {
            Self.expectRefusal(Self.text(exp: exp), .badEncoding, mentioning: ["exp", "Unix seconds"])
        }
        // The largest value parses (and is then far in the future).
        Self.expectRefusal(Self.text(exp: "18446744073709551615"), .clockSkew)
    }

    @Test func malformedAddressesAreBadEncoding() {
        let bad = [
            "studio.local:47801", "192.168.1.20", "192.168.1.20:0", "192.168.1.20:65536", "192.168.1.20:080",
            "256.1.1.1:1", "01.2.3.4:1", "1.2.3:1", "1.2.3.4.5:1", "fe80::1:47801", "[fe80::1]", "[fe80::1]47801",
            "[fe80::1%eth0]:1", "[fe80::1%25]:1", "[fe80::1%25eth%200]:1", "[1:2:3:4:5:6:7:8:9]:1", "[1::2::3]:1",
            "[12345::1]:1", "[:::1]:1", "[g::1]:1", "[1:2:3:4:5:6:7]:1", "", "10.0.0.1:1,,10.0.0.2:1",
            "10.0.0.1:1,", "[::1.2.3]:1", "[fe80::1%25" + String(repeating: "z", count: 33) + "]:1",
        ]
        for addr in bad {
            Self.expectRefusal(Self.text(extra: "&addr=" + addr), .badEncoding, mentioning: ["address"])
        }
        let good = ["[::]:1", "[::1]:65535", "[1:2:3:4:5:6:7:8]:1", "[1::8]:1", "[::ffff:192.0.2.1]:1",
                    "[2001:DB8::A]:1", "0.0.0.0:1", "255.255.255.255:1", "[fe80::1%25wlp2s0.5_a~]:1"]
        for addr in good {
            #expect(Self.refusal(Self.text(extra: "&addr=" + addr)) == nil, "\(addr)")
        }
    }

    @Test func idMustUseOnlyIdCharacters() {
        for id in ["my%20studio", "studio/1", "studio:1", "stüdio", "a~b", "a!b"] {
            Self.expectRefusal(Self.text(id: id), .invalidId, mentioning: ["letters, digits", "make a new code"])
        }
        Self.expectRefusal(Self.text(id: String(repeating: "a", count: 65)), .invalidId, mentioning: ["65 bytes"])
        #expect(Self.refusal(Self.text(id: String(repeating: "a", count: 64))) == nil)
        #expect(Self.refusal(Self.text(id: "A-z_0.9")) == nil)
    }

    @Test func nameMustNotContainControlCharacters() {
        for (encoded, codePoint) in [("%0A", "U+000A"), ("%00", "U+0000"), ("%7F", "U+007F"), ("%C2%85", "U+0085"),
                                     ("%09", "U+0009")] {
            Self.expectRefusal(Self.text(name: "Studio" + encoded), .controlCharacters,
                               mentioning: [codePoint, "Rename the studio"])
        }
    }

    @Test func nameIsAtMost64Bytes() {
        Self.expectRefusal(Self.text(name: String(repeating: "x", count: 65)), .tooLong, mentioning: ["65 bytes", "shorter name"])
        Self.expectRefusal(Self.text(name: String(repeating: "%C3%A9", count: 33)), .tooLong, mentioning: ["66 bytes"])
        #expect(Self.refusal(Self.text(name: String(repeating: "%C3%A9", count: 32))) == nil)
    }

    @Test func atMostFourAddresses() {
        let five = (1...5).map { "10.0.0.\($0):1" }.joined(separator: ",")
        Self.expectRefusal(Self.text(extra: "&addr=" + five), .tooLong, mentioning: ["5 addresses", "at most 4"])
        let four = (1...4).map { "10.0.0.\($0):1" }.joined(separator: ",")
        #expect(Self.refusal(Self.text(extra: "&addr=" + four)) == nil)
    }

    @Test func expiryEdges() {
        let now = Self.now
        #expect(Self.refusal(Self.text(exp: "\(now - 600)")) == nil)
        Self.expectRefusal(Self.text(exp: "\(now - 601)"), .expired,
                           mentioning: ["expired 10 minutes ago", "2026-11-18T10:56:39Z", "camo-studio pair", "NTP"])
        Self.expectRefusal(Self.text(exp: "\(now - 86_400 * 3)"), .expired, mentioning: ["3 days ago"])
        #expect(Self.refusal(Self.text(exp: "\(now + 1200)")) == nil)
        Self.expectRefusal(Self.text(exp: "\(now + 1201)"), .clockSkew,
                           mentioning: ["2026-11-18T11:26:41Z", "20 minutes from now", "clock", "NTP", "camo-studio pair"])
        // Early in the epoch nothing underflows.
        #expect(Self.refusal(Self.text(exp: "0"), now: 100) == nil)
        Self.expectRefusal(Self.text(exp: "0"), .expired, now: 601)
    }

    // MARK: Formatting helpers

    @Test func utcTimestamps() {
        #expect(TimeText.utc(0) == "1970-01-01T00:00:00Z")
        #expect(TimeText.utc(951_782_400) == "2000-02-29T00:00:00Z")
        #expect(TimeText.utc(1_795_000_000) == "2026-11-18T11:06:40Z")
        #expect(TimeText.utc(253_402_300_799) == "9999-12-31T23:59:59Z")
        #expect(TimeText.utc(.max) == "Unix time 18446744073709551615")
        #expect(TimeText.duration(1) == "1 second")
        #expect(TimeText.duration(601) == "10 minutes")
        #expect(TimeText.duration(7_200) == "2 hours")
    }

    @Test func base64URLRoundTrips() {
        var rng = SeededGenerator(seed: 7)
        for count in 0..<70 {
            let bytes = rng.bytes(count)
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("="))
            #expect(Base64URL.decode(Array(text.utf8)[...]) == bytes)
        }
    }

    // MARK: Round trip

    /// Random valid payloads (names with non-ASCII, spaces and URI delimiters) survive `uri` and `parse`.
    @Test func uriRoundTripsForRandomPayloads() throws {
        var rng = SeededGenerator(seed: 0xC0FFEE)
        let nameAlphabet: [Character] = Array("abcXYZ019 &=%+#?/:@!$'()*,;~-._\"<>[]\\^`{|}") + [
            "ü", "é", "ß", "東", "京", "🎥", "👩‍💻", "\u{00A0}", "\u{2028}", "Ω", "ĳ",
        ]
        let idAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
        for iteration in 0..<1_000 {
            var name = ""
            for _ in 0..<Int.random(in: 1...24, using: &rng) {
                // Safe: the alphabet is a non-empty literal.
                let next = nameAlphabet.randomElement(using: &rng)!
                if name.utf8.count + String(next).utf8.count > PairingPayload.maxNameBytes { break }
                name.append(next)
            }
            if name.isEmpty { name = "S" }
            // Safe: the alphabet is a non-empty literal.
            let id = String((0..<Int.random(in: 1...64, using: &rng)).map { _ in idAlphabet.randomElement(using: &rng)! })
            let addresses = (0..<Int.random(in: 0...4, using: &rng)).map { _ in Self.randomAddress(&rng) }
            let expiry = Self.now - 600 + UInt64.random(in: 0...1800, using: &rng)
            let payload = PairingPayload(
                studioId: id, studioName: name, secret: rng.bytes(32), expiry: expiry, addresses: addresses)
            let uri = payload.uri
            #expect(uri.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "the URI is printable ASCII: \(uri)")
            #expect(uri.utf8.count <= PairingPayload.maxLength)
            let parsed = try PairingPayload.parse(uri, now: Self.now)
            #expect(parsed == payload, "iteration \(iteration): \(uri)")
        }
    }

    /// The largest valid payload still fits the 1024-byte limit, so every valid payload round-trips.
    @Test func theLargestPayloadFits() throws {
        let host = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%" + String(repeating: "z", count: IPLiteral.maxZoneLength)
        let payload = PairingPayload(
            studioId: String(repeating: "a", count: 64), studioName: String(repeating: "東", count: 21) + "x",
            secret: Self.secret, expiry: Self.now + 1_200,
            addresses: Array(repeating: PairingAddress(host: host, port: 65_535), count: 4))
        #expect(payload.studioName.utf8.count == 64)
        #expect(payload.uri.utf8.count < PairingPayload.maxLength)
        #expect(try PairingPayload.parse(payload.uri, now: Self.now) == payload)
    }

    static func randomAddress(_ rng: inout SeededGenerator) -> PairingAddress {
        let port = Int.random(in: 1...65_535, using: &rng)
        if Bool.random(using: &rng) {
            let host = (0..<4).map { _ in String(UInt8.random(in: 0...255, using: &rng)) }.joined(separator: ".")
            return PairingAddress(host: host, port: port)
        }
        var groups = (0..<8).map { _ in String(UInt16.random(in: 0...0xFFFF, using: &rng), radix: 16) }
        var host = groups.joined(separator: ":")
        if Bool.random(using: &rng) {
            let start = Int.random(in: 0...6, using: &rng)
            let end = Int.random(in: (start + 1)...8, using: &rng)
            groups.replaceSubrange(start..<end, with: [""])
            host = groups.joined(separator: ":")
            if start == 0 { host = ":" + host }
            if end == 8 { host += ":" }
            if host == ":::" { host = "::" }
        }
        if Bool.random(using: &rng) { host += "%eth\(Int.random(in: 0...9, using: &rng))" }
        return PairingAddress(host: host, port: port)
    }
}
