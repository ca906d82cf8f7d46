import CamoWire
import FuzzSupport
import Foundation

// Every Noise handshake message after a valid prefix: a real initiator (studio) and responder (agent) run XX, XXpsk3
// or KK with fixed keys, and the message at one step is replaced by the input's rest, so the side reading it (the
// responder for messages 1 and 3, the initiator for message 2) decodes it in the state a real peer would have left.
// Whatever it sends back then goes to the other side until neither has more to say (so a valid message leads on to
// the rest of the handshake and into the transport phase).
//
// Input: byte 0 picks the case: bits 0-2 the pattern and step (XX 1-3, XXpsk3 1-3, KK 1-2), bit 3 whether the rest
// is the whole record (length, kind, body: raw bytes on the wire) or only the handshake message (wrapped in a kind
// 0x01 record here), bits 4-7 where the bytes are cut in two (TCP may deliver them in pieces).
// FUZZ_WRITE_SEEDS=DIR writes the seeds: per case and form, the real message of that step.

struct Keys {
    static func pair(_ byte: UInt8) -> NoiseKeyPair {
        // Fixed keys: every run is the same, so libFuzzer's inputs replay.
        try! NoiseKeyPair(privateKey: [UInt8](repeating: byte, count: 31) + [0x40])
    }
    static let studio = pair(0x11), agent = pair(0x22), studioEphemeral = pair(0x33), agentEphemeral = pair(0x44)
    static let psk = [UInt8](repeating: 0x5A, count: 32)
}

let cases: [(pattern: HandshakePattern, step: Int)] = [
    (.xx, 0), (.xx, 1), (.xx, 2), (.xxpsk3, 0), (.xxpsk3, 1), (.xxpsk3, 2), (.kk, 0), (.kk, 1),
]

/// One run: the two sides up to `step`, the replacement delivered, then ping-pong. `replace` gets the real record of
/// the step (its 2 length bytes, kind and body) and returns what to deliver instead.
func run(pattern: HandshakePattern, step: Int, cut: (Int) -> Int, replace: ([UInt8]) -> [UInt8]) {
    let preamble = Preamble(pattern: pattern, initiatorId: "studio-fuzz")
    var initiator = WireConnection.initiator(
        preamble: preamble, localStatic: Keys.studio, remoteStatic: pattern == .kk ? Keys.agent.publicKey : nil,
        psk: pattern == .xxpsk3 ? Keys.psk : nil, ephemeral: Keys.studioEphemeral)
    var responder = WireConnection.responder(ephemeral: Keys.agentEphemeral)
    guard let first = try? initiator.start() else { fatalError("the initiator did not start") }
    let prologue = preamble.encoded()
    // The agent: the preamble, then accept with the keys its paired list (KK) or pairing window (XXpsk3) gives.
    guard let (_, events) = try? responder.receive(first[..<prologue.count]), events.first == .preamble(preamble),
        (try? responder.accept(
            localStatic: Keys.agent, remoteStatic: pattern == .kk ? Keys.studio.publicKey : nil,
            psk: pattern == .xxpsk3 ? Keys.psk : nil)) != nil
    else { fatalError("the responder refused a valid preamble") }

    // In flight: the bytes for the side whose turn it is to read (message index = step).
    var inFlight = Array(first[prologue.count...])
    var index = 0
    var readerIsResponder = true
    while true {
        var bytes = inFlight
        if index == step { bytes = replace(inFlight) }
        let at = min(cut(bytes.count), bytes.count)
        var reply: [UInt8] = []
        var failed = false
        for piece in [bytes[..<at], bytes[at...]] {
            do {
                let result = readerIsResponder ? try responder.receive(piece) : try initiator.receive(piece)
                reply += result.send
            } catch {
                failed = true
                break
            }
        }
        if index == step, failed {
            // What the agent does with a refused handshake: tell the peer (once) and close.
            _ = readerIsResponder ? responder.errorRecord(WireError(.handshakeFailed, "fuzz")) : initiator.errorRecord(WireError(.handshakeFailed, "fuzz"))
        }
        if failed || reply.isEmpty { break }
        guard index < 8 else { break }
        inFlight = reply
        index += 1
        readerIsResponder.toggle()
    }
    // Past a valid replacement both sides are established: one message each way (the hellos' place).
    if initiator.isEstablished, responder.isEstablished {
        if let bytes = try? initiator.seal(.ping(Ping(sequence: 1, sentAt: 1))) { _ = try? responder.receive(bytes) }
        if let bytes = try? responder.seal(.ping(Ping(sequence: 2, sentAt: 2))) { _ = try? initiator.receive(bytes) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNoiseHandshake(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let selector = start[0]
    let rest = [UInt8](UnsafeBufferPointer(start: start + 1, count: count - 1))
    let (pattern, step) = cases[Int(selector & 7)]
    let raw = selector & 8 != 0
    let cutFraction = Int(selector >> 4)
    run(pattern: pattern, step: step, cut: { $0 * cutFraction / 15 }) { real in
        if raw { return rest }
        // The record around the message: length (kind + body), kind 0x01.
        let body = rest.prefix(65_534)
        return [UInt8((body.count + 1) >> 8), UInt8((body.count + 1) & 0xFF), 0x01] + body
    }
    return 0
}

if FuzzSeeds.directory != nil {
    for (number, (pattern, step)) in cases.enumerated() {
        for raw in [false, true] {
            var seed: [UInt8] = []
            run(pattern: pattern, step: step, cut: { $0 }) { real in
                seed = [UInt8(number) | (raw ? 8 : 0) | 0x70] + (raw ? real : Array(real.dropFirst(3)))
                return real
            }
            FuzzSeeds.write(seed, name: "\(pattern.noiseName)-\(step + 1)\(raw ? "-record" : "")")
        }
    }
    exit(0)
}

runFuzzDriver { fuzzNoiseHandshake($0, $1) }
