import CamoUSB
import CamoMedia
import CamoWire
import Foundation

/// A running controller's state, as the Camo SDK models it. A controller that is not running has no state (`nil`).
public enum CamoControllerState: Sendable, Equatable, CustomStringConvertible {
    /// Running, and no studio is connected.
    case notConnected
    /// Streaming to at least one studio; the associated connection is the primary (first) one.
    case active(CamoConnection)
    /// Connected, but nothing is sent: the privacy switch is on, or the primary studio asked for a pause.
    case paused(CamoConnection)

    public var description: String {
        switch self {
        case .notConnected: return "notConnected"
        case .active(let connection): return "active(\(connection.name))"
        case .paused(let connection): return "paused(\(connection.name))"
        }
    }

    /// A short word for status output: `notConnected`, `active` or `paused`.
    public var word: String {
        switch self {
        case .notConnected: return "notConnected"
        case .active: return "active"
        case .paused: return "paused"
        }
    }
}

/// A snapshot of one studio session.
public struct CamoConnection: Sendable, Equatable, Identifiable {
    /// This session's id on the agent.
    public var id: UUID
    /// The studio's own id, from its hello.
    public var studioId: String
    /// The studio's name, from its hello.
    public var name: String
    /// The studio's address and port, as text.
    public var address: String
    /// The link the studio connected over (from the local address's interface).
    public var link: LinkKind = .network
    /// When the session was established.
    public var since: Date
    /// The video codec sent on this session.
    public var codec: VideoCodec
    /// The size of the frames sent on this session.
    public var videoSize: VideoSize
    /// The sample frames per audio packet this studio asked for.
    public var audioSamplesRequired: Int
    /// Whether this studio asked for a pause.
    public var pausedByStudio: Bool
    /// Counters for this session.
    public var statistics: SessionStatistics

    public static func == (lhs: CamoConnection, rhs: CamoConnection) -> Bool {
        // Identity and settings; the counters change every frame and are not part of a state change.
        lhs.id == rhs.id && lhs.studioId == rhs.studioId && lhs.name == rhs.name && lhs.codec == rhs.codec
            && lhs.videoSize == rhs.videoSize && lhs.audioSamplesRequired == rhs.audioSamplesRequired
            && lhs.pausedByStudio == rhs.pausedByStudio
    }
}

/// Counters of one session.
public struct SessionStatistics: Sendable, Equatable, Codable {
    /// Video frames sent (including repeats).
    public var framesSent: UInt64 = 0
    /// Frames not sent to this studio because it was slower than the camera (newest wins).
    public var framesDropped: UInt64 = 0
    /// Frames sent that repeated the previous camera frame because the camera was slower than 30 fps.
    public var framesRepeated: UInt64 = 0
    /// Audio packets sent.
    public var audioPackets: UInt64 = 0
    /// The last measured keep-alive round trip, in nanoseconds (nil until measured).
    public var roundTripNanos: UInt64?

    /// All counters at zero.
    public init() {}
}

/// What a studio tells the agent when it connects, for ``CamoControllerDelegate/camoController(_:shouldAcceptIncomingConnection:)``.
public struct IncomingConnection: Sendable, Equatable {
    /// The studio's id.
    public var studioId: String
    /// The studio's name.
    public var name: String
    /// The studio's address, as text.
    public var address: String
    /// Whether the studio connected from this machine.
    public var isLoopback: Bool
    /// The link the studio connected over (from the local address's interface).
    public var link: LinkKind = .network
}

/// Receives the controller's admission questions and state changes.
///
/// Isolation: every call comes on the controller's own serial delegate queue, one at a time, in the order the
/// controller decided them; never on a network event loop and never on the caller's thread, so a delegate may
/// block briefly (ask a user, say) without stalling any studio. It is not the main actor: hop there yourself if
/// you need it.
public protocol CamoControllerDelegate: AnyObject, Sendable {
    /// Whether to accept a studio that completed the handshake and sent its hello. Default: accept.
    ///
    /// The controller waits ``ControllerConfiguration/admissionDecisionSeconds`` (3 s) for the answer on its own
    /// clock; without one by then it refuses the studio with `notPaired` and a reason saying the owner did not
    /// decide in time. A declined studio gets `notPaired` with "The agent's owner declined this studio." The
    /// studio's other messages wait meanwhile; media starts only after acceptance.
    func camoController(_ controller: CamoController, shouldAcceptIncomingConnection connection: IncomingConnection) -> Bool
    /// The state changed (nil: the controller stopped).
    func camoController(_ controller: CamoController, stateDidChangeTo state: CamoControllerState?)
}

extension CamoControllerDelegate {
    /// Accepts every studio.
    public func camoController(_ controller: CamoController, shouldAcceptIncomingConnection connection: IncomingConnection) -> Bool {
        true
    }

    /// Ignores state changes.
    public func camoController(_ controller: CamoController, stateDidChangeTo state: CamoControllerState?) {}
}
