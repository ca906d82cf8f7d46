import Foundation
import Testing

@testable import CamoWire

/// Cases Docs/PROTOCOL.md and Docs/PAIRING.md decide explicitly, one test each, so the text and the code
/// cannot drift apart.
@Suite("Spec decisions")
struct SpecDecisionTests {
    static let longId = String(repeating: "a", count: 65)

    /// PROTOCOL.md 7 and 11: an id over 64 bytes breaks the field's format, so it is a `protocolViolation`
    /// wherever it stands (hellos and preamble), never `badRequest` or `limitExceeded`.
    @Test func aSixtyFiveByteIdIsAProtocolViolationEverywhere() throws {
        var studio = StudioHello(
            studioId: Self.longId, studioName: "S", audioSamplesRequired: 480,
            preferredWidth: 1280, preferredHeight: 720, codec: .agentDecides, jpegQuality: 0)
        var agent = AgentHello(
            agentId: Self.longId, agentName: "A", model: "m", softwareVersion: "1", camera: "c", microphone: "m",
            capabilities: .all, width: 1280, height: 720, codec: .jpeg, audioSamplesRequired: 480)
        for bytes in [AppMessage.studioHello(studio).encoded(), AppMessage.agentHello(agent).encoded()] {
            do {
                _ = try AppMessage.decode(bytes)
                Issue.record("a hello with a 65-byte id was accepted")
            } catch {
                #expect(error.code == .protocolViolation)
            }
        }
        studio.studioId = String(Self.longId.dropLast())
        agent.agentId = String(Self.longId.dropLast())
        #expect(try AppMessage.decode(AppMessage.studioHello(studio).encoded()) == .studioHello(studio), "64 bytes pass")
        #expect(try AppMessage.decode(AppMessage.agentHello(agent).encoded()) == .agentHello(agent), "64 bytes pass")
        let preamble = Preamble.magic + [1, 0, HandshakePattern.xx.rawValue, 65] + Array(Self.longId.utf8)
        do {
            _ = try Preamble.decode(preamble[...])
            Issue.record("a 65-byte preamble id was accepted")
        } catch {
            #expect(error.code == .protocolViolation)
        }
    }

    /// PAIRING.md 1.5: a secret whose last character has non-zero unused bits is not the one spelling of any
    /// 32 bytes, so it is `badEncoding` (like padding or '+'), not `badSecretLength`.
    @Test func aSecretWithNonZeroUnusedBitsIsBadEncoding() {
        let good = "camo-pair:1?id=s&name=S&secret=3xvDl3JqDZd4jni-ao_a8quY6p-cJNAkvcjQsP55gdA&exp=1795000120"
        #expect((try? PairingPayload.parse(good, now: 1_795_000_000)) != nil)
        for last in ["B", "C", "D"] {
            let text = good.replacingOccurrences(of: "gdA&", with: "gd\(last)&")
            do {
                _ = try PairingPayload.parse(text, now: 1_795_000_000)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.reason == .badEncoding, "\(error.detail)")
                #expect(error.detail.contains("base64url"), "\(error.detail)")
            }
        }
    }
}
