import CamoWire

/// Who may open a session, and what the agent sends them. A plain value, tested without sockets.
///
/// `KK` is for paired studios (the preamble's id must be in the paired-device list; the handshake then proves
/// the keys). Unpaired `XX` sessions are accepted only when the agent was started with `--allow-unpaired` and
/// the peer connects from loopback. `XXpsk3` (pairing) belongs on the pairing listener, not the session port.
public struct AdmissionPolicy: Sendable, Equatable {
    /// Whether unpaired (`XX`) studios may connect from loopback.
    public var allowUnpaired: Bool

    /// A policy; `allowUnpaired` mirrors `--allow-unpaired`.
    public init(allowUnpaired: Bool) {
        self.allowUnpaired = allowUnpaired
    }

    /// Decides on a preamble. Returns nil to accept, or the error to send back (unauthenticated) before closing.
    public func refusal(for preamble: Preamble, peerIsLoopback: Bool, isPaired: Bool = false) -> WireError? {
        switch preamble.pattern {
        case .xx:
            guard allowUnpaired else {
                return WireError(
                    code: .unpairedNotAllowed,
                    reason: "This agent does not accept unpaired studios. Pair the studio first, or start the agent with --allow-unpaired to allow them from this machine."
                )
            }
            guard peerIsLoopback else {
                return WireError(
                    code: .unpairedNotAllowed,
                    reason: "Unpaired studios are accepted only from this machine (loopback). Pair the studio to connect over the network."
                )
            }
            return nil
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
    /// loopback and JPEG on any other link (raw 720p30 BGRA is 885 Mb/s and does not fit Wi-Fi).
    public static func codec(for request: VideoCodecRequest, peerIsLoopback: Bool) -> VideoCodec {
        switch request {
        case .bgra: return .bgra
        case .jpeg: return .jpeg
        case .agentDecides: return peerIsLoopback ? .bgra : .jpeg
        }
    }
}
