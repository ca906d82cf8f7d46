import Foundation
import Testing

@testable import CamoWire

/// Hex helpers for tests.
enum Hex {
    static func decode(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace }.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index + 1 < digits.count {
            out.append(UInt8(value(digits[index]) << 4 | value(digits[index + 1])))
            index += 2
        }
        return out
    }

    private static func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: 0
        }
    }

    static func encode(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// Deterministic keys for connection tests.
enum TestKeys {
    static func key(_ seed: UInt8) -> NoiseKeyPair {
        // 32 bytes are always a valid X25519 private key.
        try! NoiseKeyPair(privateKey: (0..<32).map { seed &+ UInt8($0) })
    }
    static let studio = key(0x01)
    static let agent = key(0x41)
    static let psk: [UInt8] = Array(repeating: 0x5A, count: 32)
}

/// Two connections wired back to back.
struct Pair {
    var studio: WireConnection
    var agent: WireConnection
    var studioEvents: [WireConnection.Event] = []
    var agentEvents: [WireConnection.Event] = []

    /// Runs a handshake: the agent accepts with `agentRemote` / `agentPSK`.
    static func handshake(
        pattern: HandshakePattern, studioId: String = "studio-1",
        studioRemote: [UInt8]? = nil, studioPSK: [UInt8]? = nil,
        agentRemote: [UInt8]? = nil, agentPSK: [UInt8]? = nil
    ) throws -> Pair {
        let preamble = Preamble(pattern: pattern, initiatorId: studioId)
        var pair = Pair(
            studio: .initiator(preamble: preamble, localStatic: TestKeys.studio, remoteStatic: studioRemote, psk: studioPSK),
            agent: .responder())
        var toAgent = try pair.studio.start()
        var (toStudio, events) = try pair.agent.receive(toAgent)
        #expect(events == [.preamble(preamble)])
        toStudio += try pair.agent.accept(localStatic: TestKeys.agent, remoteStatic: agentRemote, psk: agentPSK)
        // Pump until quiet.
        for _ in 0..<6 {
            let fromStudio = try pair.studio.receive(toStudio)
            pair.studioEvents += fromStudio.events
            toAgent = fromStudio.send
            let fromAgent = try pair.agent.receive(toAgent)
            pair.agentEvents += fromAgent.events
            toStudio = fromAgent.send
            if toAgent.isEmpty && toStudio.isEmpty { break }
        }
        return pair
    }
}

let studioHello = StudioHello(
    studioId: "studio-1", studioName: "Test Studio", audioSamplesRequired: 480,
    preferredWidth: 1280, preferredHeight: 720, codec: .agentDecides, jpegQuality: 0)

let agentHello = AgentHello(
    agentId: "agent-1", agentName: "Test Agent", model: "x86_64 test", softwareVersion: "0.1.0",
    camera: "synthetic test pattern", microphone: "synthetic tone", capabilities: .all,
    width: 1280, height: 720, codec: .bgra, audioSamplesRequired: 480)
