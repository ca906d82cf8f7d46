import CamoUSB
import CamoWire

/// Who may open a session, and what the agent sends them. A plain value, tested without sockets.
///
/// `KK` is for paired studios (the preamble's id must be in the paired-device list; the handshake then proves
/// the keys), on any link. Unpaired `XX` sessions are accepted over the USB link (the cable is the trust, as in
/// Camo's USB mode) unless `usbTrust` is off, and from loopback when the agent was started with
/// `--allow-unpaired`. The link is decided by the local address's interface, never by anything the peer says.
/// `XXpsk3` (pairing) belongs on the pairing listener, not the session port.
public struct AdmissionPolicy: Sendable, Equatable {
    /// Whether unpaired (`XX`) studios may connect from loopback (`--allow-unpaired`).
    public var allowUnpaired: Bool
    /// Whether unpaired (`XX`) studios may connect over the USB link (`--usb-trust on`, the default).
    public var usbTrust: Bool

    /// A policy; `allowUnpaired` mirrors `--allow-unpaired`, `usbTrust` mirrors `--usb-trust`.
    public init(allowUnpaired: Bool, usbTrust: Bool = true) {
        self.allowUnpaired = allowUnpaired
        self.usbTrust = usbTrust
    }

    /// Decides on a preamble that arrived over `link`. Returns nil to accept, or the error to send back
    /// (unauthenticated) before closing.
    public func refusal(for preamble: Preamble, link: LinkKind, isPaired: Bool = false) -> WireError? {
        switch preamble.pattern {
        case .xx:
            switch link {
            case .usb:
                guard usbTrust else {
                    return WireError(
                        code: .unpairedNotAllowed,
                        reason: "This agent does not accept unpaired studios over USB (its owner turned USB trust off). Pair the studio first."
                    )
                }
                return nil
            case .loopback:
                guard allowUnpaired else {
                    return WireError(
                        code: .unpairedNotAllowed,
                        reason: "This agent does not accept unpaired studios. Pair the studio first, connect over the USB cable, or have the agent's owner allow unpaired studios from this machine."
                    )
                }
                return nil
            case .network:
                return WireError(
                    code: .unpairedNotAllowed,
                    reason: "Unpaired studios are accepted only over the USB cable\(allowUnpaired ? " or from this machine (loopback)" : ""). Pair the studio to connect over the network."
                )
            }
        case .kk:
            guard isPaired else {
                return WireError(
                    code: .notPaired,
                    reason: "Studio \(preamble.initiatorId) is not paired with this agent. Pair it first: run `camo-studio pair` and give its code to `camo-agent pair`."
                )
            }
            return nil
        case .xxpsk3:
            return WireError(
                code: .notPaired,
                reason: "Pairing connections go to the pairing port the agent publishes as _camopairing._tcp while its pairing window is open, not to the session port."
            )
        }
    }

    /// The codec to send: what the studio asked for, or, when it left the choice to the agent, raw BGRA on
    /// loopback and the USB link and, on any other link, H.264 when the agent has an encoder and the studio
    /// decodes it (1.1), else JPEG (raw 720p30 BGRA is 885 Mb/s and does not fit Wi-Fi). An explicit H.264 request
    /// the agent cannot serve gets what the agent would have chosen without H.264.
    public static func codec(
        for request: VideoCodecRequest, link: LinkKind, decodes: StudioDecodes = .version1_0, h264Available: Bool = false
    ) -> VideoCodec {
        let h264 = h264Available && decodes.decodes(.h264)
        switch request {
        case .bgra: return .bgra
        case .jpeg: return .jpeg
        case .h264 where h264: return .h264
        case .h264, .agentDecides:
            if link != .network { return .bgra }
            return h264 ? .h264 : .jpeg
        }
    }

    /// The audio format to send: what the studio asked for, or float32 on loopback and the USB link and s16 on any
    /// other link (float32 stereo is 3.1 Mb/s, s16 half that). A 1.0 studio always gets float32.
    public static func audioFormat(for request: AudioFormatRequest, link: LinkKind) -> AudioSampleFormat {
        switch request {
        case .float32: return .float32
        case .s16: return .s16
        case .agentDecides: return link == .network ? .s16 : .float32
        }
    }
}
