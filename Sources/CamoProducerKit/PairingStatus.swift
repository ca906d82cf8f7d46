import CamoWire
import Foundation

/// Where a pairing attempt stands; what `camo-agent pair` polls to show its countdown.
public struct PairingStatus: Sendable, Codable, Equatable {
    /// The stage of an attempt.
    public enum Phase: String, Sendable, Codable {
        /// Looking for a QR code in the camera's frames.
        case scanning
        /// A valid code was given: the window is open and waits for the studio.
        case waiting
        /// Done: the studio is paired.
        case paired
        /// Done: no pairing; ``PairingStatus/failure`` says why.
        case failed
    }

    /// The attempt's number (counts up per agent run).
    public var attempt: Int
    /// The stage.
    public var phase: Phase
    /// The studio the code names (once a code was accepted).
    public var studioId: String?
    /// The studio's name from the code, or from the handshake once paired.
    public var studioName: String?
    /// The pairing listener's port (while waiting).
    public var port: Int?
    /// Seconds left in the current stage (scanning or waiting).
    public var remainingSeconds: Double?
    /// Codes seen while scanning that were refused, each with its reason (most recent last, at most 10).
    public var invalidCodes: [String]
    /// The failure's stable name (``PairingFailure/code``) when failed.
    public var failureCode: String?
    /// The failure's sentence when failed.
    public var failure: String?

    /// A status from its parts.
    public init(
        attempt: Int, phase: Phase, studioId: String? = nil, studioName: String? = nil, port: Int? = nil,
        remainingSeconds: Double? = nil, invalidCodes: [String] = [], failureCode: String? = nil, failure: String? = nil
    ) {
        self.attempt = attempt
        self.phase = phase
        self.studioId = studioId
        self.studioName = studioName
        self.port = port
        self.remainingSeconds = remainingSeconds
        self.invalidCodes = invalidCodes
        self.failureCode = failureCode
        self.failure = failure
    }

    /// Whether the attempt has ended.
    public var isFinished: Bool { phase == .paired || phase == .failed }
}
