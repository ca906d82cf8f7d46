import CamoTestSupport
import Testing

@testable import CamoWire

/// Random truncated, oversized and bit-flipped input must give a typed `WireError` (or a clean result),
/// never a crash or a hang. All randomness is seeded.
@Suite("Fuzzing")
struct FuzzTests {
    enum Mutation: CaseIterable { case truncate, flipBits, extend, randomBytes, overwriteLength }

    static func mutate(_ bytes: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        switch Mutation.allCases.randomElement(using: &rng)! {  // allCases is non-empty
        case .truncate:
            out = Array(out.prefix(Int.random(in: 0...out.count, using: &rng)))
        case .flipBits:
            guard !out.isEmpty else { return rng.bytes(3) }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                out[Int.random(in: 0..<out.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
            }
        case .extend:
            out += rng.bytes(Int.random(in: 1...300, using: &rng))
        case .randomBytes:
            out = rng.bytes(Int.random(in: 0...200, using: &rng))
        case .overwriteLength:
            guard out.count >= 2 else { return [0xFF, 0xFF] }
            let at = Int.random(in: 0..<(out.count - 1), using: &rng)
            out[at] = 0xFF
            out[at + 1] = UInt8.random(in: 0...255, using: &rng)
        }
        return out
    }

    @Test func appMessageDecode() {
        var rng = SeededGenerator(seed: 1)
        let seeds = AppMessageTests.samples.map { $0.encoded() }
        var errors = 0
        for i in 0..<20_000 {
            let input = Self.mutate(seeds[i % seeds.count], &rng)
            do {
                let message = try AppMessage.decode(input)
                // Whatever decodes must re-encode to a message that decodes to the same value.
                #expect(try AppMessage.decode(message.encoded()) == message)
            } catch {
                errors += 1
                #expect(!error.reason.isEmpty)
            }
        }
        #expect(errors > 10_000)
    }

    @Test func responderHandshakePhase() throws {
        var rng = SeededGenerator(seed: 2)
        let patterns: [(HandshakePattern, [UInt8]?, [UInt8]?)] = [
            (.xx, nil, nil), (.kk, TestKeys.agent.publicKey, nil), (.xxpsk3, nil, TestKeys.psk),
        ]
        for i in 0..<3_000 {
            let (pattern, agentKey, psk) = patterns[i % 3]
            var studio = WireConnection.initiator(
                preamble: Preamble(pattern: pattern, initiatorId: "studio-1"), localStatic: TestKeys.studio,
                remoteStatic: agentKey, psk: psk)
            let input = Self.mutate(try studio.start(), &rng)
            var agent = WireConnection.responder()
            do {
                // Deliver in two random pieces.
                let split = Int.random(in: 0...input.count, using: &rng)
                var events = try agent.receive(input[..<split]).events
                events += try agent.receive(input[split...]).events
                if case .preamble(let seen) = events.first {
                    let reply = try agent.accept(
                        localStatic: TestKeys.agent, remoteStatic: seen.pattern == .kk ? TestKeys.studio.publicKey : nil,
                        psk: seen.pattern == .xxpsk3 ? TestKeys.psk : nil)
                    _ = try agent.receive(Self.mutate(reply, &rng))
                }
            } catch {
                #expect(agent.failure == error)
                #expect(throws: error) { try agent.receive([1]) }
            }
        }
    }

    @Test func initiatorHandshakePhase() throws {
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<1_000 {
            var studio = WireConnection.initiator(
                preamble: Preamble(pattern: .xx, initiatorId: "s"), localStatic: TestKeys.studio, remoteStatic: nil, psk: nil)
            var agent = WireConnection.responder()
            _ = try agent.receive(try studio.start())
            let reply = try agent.accept(localStatic: TestKeys.agent, remoteStatic: nil, psk: nil)
            do {
                _ = try studio.receive(Self.mutate(reply, &rng))
            } catch {
                #expect(studio.failure == error)
            }
        }
    }

    @Test(arguments: HandshakePattern.allCases)
    func transportPhase(_ pattern: HandshakePattern) throws {
        var rng = SeededGenerator(seed: 4 + UInt64(pattern.rawValue))
        let base = try WireConnectionTests.established(pattern)
        var sender = base.studio
        let hello = try sender.seal(.studioHello(studioHello))
        let ping = try sender.seal(.ping(Ping(sequence: 1, sentAt: 2)))
        var failures = 0
        for _ in 0..<1_500 {
            var receiver = base.agent
            let mutated = Self.mutate(hello + ping, &rng)
            do {
                var offset = 0
                while offset < mutated.count {
                    let end = min(mutated.count, offset + Int.random(in: 1...64, using: &rng))
                    _ = try receiver.receive(mutated[offset..<end])
                    offset = end
                }
            } catch {
                failures += 1
                #expect(receiver.failure == error)
            }
        }
        #expect(failures > 0)
    }

    @Test func prefixesNeverFail() throws {
        // Any prefix of a valid stream only waits for more bytes.
        var pair = try WireConnectionTests.established(.kk)
        let stream = try pair.studio.seal(.studioHello(studioHello)) + pair.studio.seal(.setAudioSamples(960))
        for cut in 0...stream.count {
            var receiver = pair.agent
            let events = try receiver.receive(stream.prefix(cut)).events
            #expect(events.count <= 2)
        }
    }

    @Test func oversizedRecordLengths() throws {
        var rng = SeededGenerator(seed: 5)
        let base = try WireConnectionTests.established(.xx)
        for _ in 0..<200 {
            var receiver = base.agent
            let junk = [0xFF, 0xFF] + rng.bytes(65_535)
            let error = try #require(throws: WireError.self) { try receiver.receive(junk) }
            #expect(error.code == .protocolViolation)
        }
    }
}
