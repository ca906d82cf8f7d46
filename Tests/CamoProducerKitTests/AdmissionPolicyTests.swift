import CamoProducerKit
import CamoUSB
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
        #expect(closed.refusal(for: preamble(.xx), link: .loopback)?.code == .unpairedNotAllowed)
        #expect(open.refusal(for: preamble(.xx), link: .network)?.code == .unpairedNotAllowed)
        #expect(open.refusal(for: preamble(.xx), link: .loopback) == nil)
    }

    @Test("The USB cable is trusted for XX unless --usb-trust off; the network never is; KK is the same on every link")
    func usbLinkTrust() {
        let usb = LinkKind.usb(interface: "camousb0")
        let trusting = AdmissionPolicy(allowUnpaired: false)
        #expect(trusting.usbTrust, "USB trust is on by default")
        #expect(trusting.refusal(for: preamble(.xx), link: usb) == nil)
        #expect(trusting.refusal(for: preamble(.xx), link: .network)?.code == .unpairedNotAllowed)
        #expect(trusting.refusal(for: preamble(.xx), link: .loopback)?.code == .unpairedNotAllowed, "loopback still needs --allow-unpaired")
        let off = AdmissionPolicy(allowUnpaired: true, usbTrust: false)
        let refused = off.refusal(for: preamble(.xx), link: usb)
        #expect(refused?.code == .unpairedNotAllowed && refused?.reason.contains("USB trust off") == true, "\(String(describing: refused))")
        #expect(off.refusal(for: preamble(.xx), link: .loopback) == nil)
        for link in [usb, LinkKind.network, .loopback] {
            #expect(trusting.refusal(for: preamble(.kk, id: "s"), link: link, isPaired: true) == nil)
            #expect(trusting.refusal(for: preamble(.kk, id: "s"), link: link, isPaired: false)?.code == .notPaired)
            #expect(trusting.refusal(for: preamble(.xxpsk3), link: link)?.code == .notPaired)
        }
        #expect(AdmissionPolicy.codec(for: .agentDecides, link: usb) == .bgra, "raw BGRA is the default over the cable")
        #expect(AdmissionPolicy.codec(for: .jpeg, link: usb) == .jpeg, "the studio may still ask for JPEG")
    }

    @Test func pairedPatternsAreRefusedWithAReasonUntilPairingExists() {
        let open = AdmissionPolicy(allowUnpaired: true)
        #expect(open.refusal(for: preamble(.kk, id: "studio"), link: .loopback)?.code == .notPaired)
        #expect(open.refusal(for: preamble(.xxpsk3), link: .loopback)?.code == .notPaired)
    }

    @Test(arguments: [
        (VideoCodecRequest.agentDecides, true, VideoCodec.bgra),
        (.agentDecides, false, .jpeg),
        (.bgra, false, .bgra),
        (.jpeg, true, .jpeg),
    ])
    func codecChoice(request: VideoCodecRequest, loopback: Bool, expected: VideoCodec) {
        #expect(AdmissionPolicy.codec(for: request, link: loopback ? .loopback : .network) == expected)
    }
}
