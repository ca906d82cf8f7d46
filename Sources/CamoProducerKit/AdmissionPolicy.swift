import CamoWire

/// Who may open a session, and what the agent sends them. A plain value, tested without sockets.
///
/// In protocol v1.0 only unpaired `XX` sessions exist: the agent accepts them when it was started with
/// `--allow-unpaired` and the peer connects from loopback. `KK` (paired studios) and `XXpsk3` (pairing) are
/// refused with a reason until pairing lands.
public struct AdmissionPolicy: Sendable, Equatable {
    /// Whether unpaired (`XX`) studios may connect from loopback.
    public var allowUnpaired: Bool

    /// A policy; `allowUnpaired` mirrors `--allow-unpaired`.
    public init(allowUnpaired: Bool) {
        self.allowUnpaired = allowUnpaired
    }

    /// Decides on a preamble. Returns nil to accept, or the error to send back (unauthenticated) before closing.
    public func refusal(for preamble: Preamble, peerIsLoopback: Bool) -> WireError? {
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
            return WireError(
                code: .notPaired,
                reason: "This agent has no paired studios yet (pairing arrives in a later version); connect from loopback with an unpaired session."
            )
        case .xxpsk3:
            return WireError(
                code: .notPaired,
                reason: "No pairing window is open on this agent. Start pairing on the agent first."
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
