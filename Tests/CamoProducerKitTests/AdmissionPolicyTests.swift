import CamoProducerKit
import CamoWire
import Testing

@Suite("AdmissionPolicy: who may connect, which codec")
struct AdmissionPolicyTests {
    private func preamble(_ pattern: HandshakePattern, id: String = "") -> Preamble {
        Preamble(versionMajor: 1, versionMinor: 0, pattern: pattern, initiatorId: id)
    }

    @Test func unpairedXXNeedsTheFlagAndLoopback() {
        let closed = AdmissionPolicy(allowUnpaired: false)
        let open = AdmissionPolicy(allowUnpaired: true)
        #expect(closed.refusal(for: preamble(.xx), peerIsLoopback: true)?.code == .unpairedNotAllowed)
        #expect(open.refusal(for: preamble(.xx), peerIsLoopback: false)?.code == .unpairedNotAllowed)
        #expect(open.refusal(for: preamble(.xx), peerIsLoopback: true) == nil)
    }

    @Test func pairedPatternsAreRefusedWithAReasonUntilPairingExists() {
        let open = AdmissionPolicy(allowUnpaired: true)
        #expect(open.refusal(for: preamble(.kk, id: "studio"), peerIsLoopback: true)?.code == .notPaired)
        #expect(open.refusal(for: preamble(.xxpsk3), peerIsLoopback: true)?.code == .notPaired)
    }

    @Test(arguments: [
        (VideoCodecRequest.agentDecides, true, VideoCodec.bgra),
        (.agentDecides, false, .jpeg),
        (.bgra, false, .bgra),
        (.jpeg, true, .jpeg),
    ])
    func codecChoice(request: VideoCodecRequest, loopback: Bool, expected: VideoCodec) {
        #expect(AdmissionPolicy.codec(for: request, peerIsLoopback: loopback) == expected)
    }

    @Test func controlSocketPathStaysWithinTheUnixLimit() {
        let short = ControlSocketPath.path(forStateDirectory: "/var/lib/camo-agent")
        #expect(short == "/var/lib/camo-agent/control.sock")
        let long = "/tmp/" + String(repeating: "deep/", count: 30)
        let path = ControlSocketPath.path(forStateDirectory: long)
        #expect(path.utf8.count <= ControlSocketPath.maxLength)
        #expect(path != ControlSocketPath.path(forStateDirectory: long + "x"))
    }
}
