/// The error codes of wire format v1 (a `u16` on the wire).
///
/// Minor versions of v1 never add codes; a code outside this list is a protocol violation.
public enum WireErrorCode: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    /// The peer sent bytes that do not follow this specification.
    case protocolViolation = 1
    /// The preamble named a major version this side does not speak.
    case unsupportedVersion = 2
    /// The preamble named a handshake pattern this side does not know.
    case unsupportedPattern = 3
    /// KK from an id that is not in the paired-device list (or whose key does not match).
    case notPaired = 4
    /// The handshake did not complete within `WireLimits.handshakeDeadline`.
    case handshakeTimeout = 5
    /// The Noise handshake failed: wrong key, wrong pre-shared key, or tampered preamble or messages.
    case handshakeFailed = 6
    /// A size or count limit of `WireLimits` was exceeded.
    case limitExceeded = 7
    /// The peer stopped reading; the outbound backlog did not drain within `WireLimits.stallDeadline`.
    case stalled = 8
    /// The agent already serves `WireLimits.maxSessions` sessions.
    case tooManyConnections = 9
    /// The sender is shutting down.
    case shuttingDown = 10
    /// A well-formed request asked for something out of range or unsupported.
    case badRequest = 11
    /// The sender hit a bug or an unexpected local failure.
    case internalError = 12
    /// XX was offered but the agent does not accept unpaired sessions on this link.
    case unpairedNotAllowed = 13
    /// Nothing arrived from the peer for `WireLimits.keepaliveTimeout`.
    case keepaliveTimeout = 14
    /// The camera or microphone went away.
    case deviceRemoved = 15

    /// The name used in logs and in the protocol document, e.g. `protocolViolation`.
    public var description: String {
        switch self {
        case .protocolViolation: "protocolViolation"
        case .unsupportedVersion: "unsupportedVersion"
        case .unsupportedPattern: "unsupportedPattern"
        case .notPaired: "notPaired"
        case .handshakeTimeout: "handshakeTimeout"
        case .handshakeFailed: "handshakeFailed"
        case .limitExceeded: "limitExceeded"
        case .stalled: "stalled"
        case .tooManyConnections: "tooManyConnections"
        case .shuttingDown: "shuttingDown"
        case .badRequest: "badRequest"
        case .internalError: "internalError"
        case .unpairedNotAllowed: "unpairedNotAllowed"
        case .keepaliveTimeout: "keepaliveTimeout"
        case .deviceRemoved: "deviceRemoved"
        }
    }
}

/// An error of the wire protocol: a code from the specification and a human sentence saying what went wrong.
///
/// The same value travels on the wire in `error` (0x7E), `goodbye` (0x09) and unauthenticated error
/// records (kind 0x7F).
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public var code: WireErrorCode
    /// A sentence for humans (logs, UI); never parsed by software.
    public var reason: String

    /// Creates an error with a code and a human-readable reason.
    public init(code: WireErrorCode, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Creates an error with a code and a human-readable reason.
    public init(_ code: WireErrorCode, _ reason: String) {
        self.init(code: code, reason: reason)
    }

    /// `code (number): reason`.
    public var description: String { "\(code) (\(code.rawValue)): \(reason)" }

    static func violation(_ reason: String) -> WireError { WireError(.protocolViolation, reason) }
}
