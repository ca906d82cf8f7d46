import Foundation
import Testing

@testable import CamoWire

/// The example exchange of Docs/PROTOCOL.md ("Example exchange"), reproduced byte for byte.
/// The hex below is copied verbatim into the document. The example is a 1.0 exchange (pinned): a 1.1 peer speaks
/// it unchanged with a 1.0 peer.
enum ProtocolExample {
    static let studioStaticPrivate = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"
    static let studioEphemeralPrivate = "2122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f40"
    static let agentStaticPrivate = "4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60"
    static let agentEphemeralPrivate = "6162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f80"

    static let studioHello = StudioHello(
        versionMinor: 0, studioId: "example-studio", studioName: "Example Studio", audioSamplesRequired: 480,
        preferredWidth: 1280, preferredHeight: 720, codec: .agentDecides, jpegQuality: 0)
    static let agentHello = AgentHello(
        versionMinor: 0, agentId: "example-agent", agentName: "Example Agent", model: "Raspberry Pi 5", softwareVersion: "1.0.0",
        camera: "synthetic test pattern", microphone: "synthetic tone", capabilities: .all,
        width: 1280, height: 720, codec: .bgra, audioSamplesRequired: 480)
    static let ping = Ping(sequence: 1, sentAt: 1_000_000_000)

    /// Runs the exchange and returns each step's bytes, in order.
    static func run() throws -> [(name: String, bytes: [UInt8])] {
        let studioStatic = try NoiseKeyPair(privateKey: Hex.decode(studioStaticPrivate))
        let agentStatic = try NoiseKeyPair(privateKey: Hex.decode(agentStaticPrivate))
        let preamble = Preamble(versionMinor: 0, pattern: .xx, initiatorId: "example-studio")
        var studio = WireConnection.initiator(
            preamble: preamble, localStatic: studioStatic, remoteStatic: nil, psk: nil,
            ephemeral: try NoiseKeyPair(privateKey: Hex.decode(studioEphemeralPrivate)))
        var agent = WireConnection.responder(ephemeral: try NoiseKeyPair(privateKey: Hex.decode(agentEphemeralPrivate)))

        let start = try studio.start()
        let preambleBytes = preamble.encoded()
        let message1 = Array(start.dropFirst(preambleBytes.count))
        _ = try agent.receive(start)
        let message2 = try agent.accept(localStatic: agentStatic, remoteStatic: nil, psk: nil)
        let message3 = try studio.receive(message2).send
        _ = try agent.receive(message3)
        let hello1 = try studio.seal(.studioHello(studioHello))
        _ = try agent.receive(hello1)
        let hello2 = try agent.seal(.agentHello(agentHello))
        _ = try studio.receive(hello2)
        let pingRecord = try studio.seal(.ping(ping))
        _ = try agent.receive(pingRecord)
        return [
            ("preamble", preambleBytes), ("handshake1", message1), ("handshake2", message2), ("handshake3", message3),
            ("studioHello", hello1), ("agentHello", hello2), ("ping", pingRecord),
            ("handshakeHash", studio.handshakeHash ?? []),
            ("studioStaticPublic", studioStatic.publicKey), ("agentStaticPublic", agentStatic.publicKey),
            ("studioHelloFragment", [0x00, 0x01] + AppMessage.studioHello(studioHello).encoded()),
            ("agentHelloFragment", [0x00, 0x01] + AppMessage.agentHello(agentHello).encoded()),
            ("pingFragment", [0x00, 0x01] + AppMessage.ping(ping).encoded()),
        ]
    }

    static let expected: [String: String] = [
        "preamble": "43414d4f0100010e6578616d706c652d73747564696f",
        "handshake1": "0021015869aff450549732cbaaed5e5df9b30a6da31cb0e5742bad5ad4a1a768f1a67b",
        "handshake2": "006101244fe3b963e899dd295baffce248d3530f3a9a7479ba063002680ebfe7adad4935aa6a8e508b0e5ea84343218663011a2e80eee8c38279f8f6a581a30de7fc7aee7ebf12f7cdc6b58e0d131e77e54c3ddb6fe5672ce1ca65e0528c78f766dd26",
        "handshake3": "0041015dca9067f7af2b40c82e71d975a7e206f9b9cb3dc86df8d3688bb3a976de1fa1b3a38df2fc5812cffafce629c280ac75e4c39ee1ff1c114c667c7f6ce17211c0",
        "studioHello": "003dff0200d69b472bca54e0ad3a4156e0be5612d4007d2710fdb8a671deb64db08863f3711f8810aa08ed4cd1c68f949b839fce4b0a7ea6f773d0154186aa",
        "agentHello": "0079b794799b75ae335fa06bbb5be78b847b6c2826dca6445c8419772f213955a8c7428ec36b68d900f8f6f36c9c4762559c99122e5e3565e6fa9f62fd4b9aa41e8ef607b7feeada69bc02587fc1722c27c22143adcbef18be82b10f6f01c0c089b4f65fb1423b14ab0f444cc50c19dcfdfbe0499ead9a0b94714e",
        "ping": "001ffe806f3957f2e4925b8d266096d894aaf645bf1db3146e207fa280562ca3c1",
        "handshakeHash": "815a80f8edcdcfe76f12d1d31b2c4aa549b639fa55f7b5079026a5d667af0340",
        "studioStaticPublic": "07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c",
        "agentStaticPublic": "64b101b1d0be5a8704bd078f9895001fc03e8e9f9522f188dd128d9846d48466",
        "studioHelloFragment": "00010101000e6578616d706c652d73747564696f0e4578616d706c652053747564696f000001e0050002d00000",
        "agentHelloFragment": "00010201000d6578616d706c652d6167656e740d4578616d706c65204167656e740e526173706265727279205069203505312e302e301673796e7468657469632074657374207061747465726e0e73796e74686574696320746f6e650000001f050002d001000001e0",
        "pingFragment": "00010500000001000000003b9aca00",
    ]
}

@Suite("Protocol example (Docs/PROTOCOL.md)")
struct ProtocolExampleTests {
    @Test func exampleExchangeIsReproducedByteForByte() throws {
        for (name, bytes) in try ProtocolExample.run() {
            #expect(Hex.encode(bytes) == ProtocolExample.expected[name], "\(name)")
        }
        #expect(try ProtocolExample.run().count == ProtocolExample.expected.count)
    }

    /// The document shows the same hex inline; check that it still does.
    @Test func documentQuotesTheSameBytes() throws {
        let docURL = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Docs/PROTOCOL.md")
        let doc = try String(contentsOf: docURL, encoding: .utf8)
        for (name, hex) in ProtocolExample.expected {
            #expect(doc.contains(hex), "Docs/PROTOCOL.md does not show \(name)")
        }
        for key in [ProtocolExample.studioStaticPrivate, ProtocolExample.studioEphemeralPrivate,
                    ProtocolExample.agentStaticPrivate, ProtocolExample.agentEphemeralPrivate] {
            #expect(doc.contains(key))
        }
    }
}
