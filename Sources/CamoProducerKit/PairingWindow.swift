import CamoWire
import Foundation

/// Why a pairing did not happen. The sentence says what went wrong and what to do.
public enum PairingFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The QR payload was refused (expired, malformed, ...): the parser's reason and sentence.
    case invalidCode(reason: String, detail: String)
    /// A pairing window is already open; only one at a time.
    case alreadyOpen(studioName: String)
    /// No studio completed the pairing handshake within the window.
    case timedOut(seconds: Int)
    /// ``CamoController/cancelPairing()`` was called.
    case cancelled
    /// The controller stopped while the window was open.
    case stopped
    /// The controller is not running.
    case notRunning
    /// The pairing listener could not be opened.
    case cannotListen(String)
    /// The studio proved itself but could not be written to the paired-device list.
    case cannotStore(String)
    /// Scanning: the agent streams no camera frames to scan.
    case noFrames
    /// Scanning: no valid pairing code was seen within the scan time.
    case noCodeSeen(seconds: Int, invalidCodes: Int)

    /// A stable machine-readable name (the control socket and `--json` carry it).
    public var code: String {
        switch self {
        case .invalidCode: "invalidCode"
        case .alreadyOpen: "alreadyOpen"
        case .timedOut: "timedOut"
        case .cancelled: "cancelled"
        case .stopped: "stopped"
        case .notRunning: "notRunning"
        case .cannotListen: "cannotListen"
        case .cannotStore: "cannotStore"
        case .noFrames: "noFrames"
        case .noCodeSeen: "noCodeSeen"
        }
    }

    public var description: String {
        switch self {
        case .invalidCode(_, let detail):
            return detail
        case .alreadyOpen(let name):
            return "A pairing window for \(name) is already open; wait for it to finish or cancel it first."
        case .timedOut(let seconds):
            return "No studio completed pairing within \(seconds) seconds. Check that the studio that made this code is still waiting and can reach this machine, then try again with a new code."
        case .cancelled:
            return "Pairing was cancelled."
        case .stopped:
            return "The agent stopped while the pairing window was open."
        case .notRunning:
            return "The agent is not running; start it and pair again."
        case .cannotListen(let reason):
            return "The pairing listener could not be opened: \(reason)."
        case .cannotStore(let reason):
            return "The studio proved itself, but the paired-device list could not be written (\(reason)); it is not paired. Fix the state directory and pair again."
        case .noFrames:
            return "The agent has no camera frames to scan. Start it with a camera (or a still image of the code), or give it the code's text."
        case .noCodeSeen(let seconds, let invalid):
            return invalid == 0
                ? "No QR code was seen within \(seconds) seconds. Hold the studio's screen steady, 20 to 50 cm from the camera, with the whole code in view."
                : "No valid pairing code was seen within \(seconds) seconds (\(invalid) other code(s) were seen and refused; see the log). Make a new code on the studio and try again."
        }
    }
}

/// The pairing window as a plain state machine: its deadline, the connections it serves, and how it ended.
/// Times are nanoseconds of the controller's monotonic clock; nothing here reads a clock or touches a socket.
///
/// The window closes at exactly `openedAt + duration`: a studio whose handshake completes before then is
/// paired; at or after it, the window has timed out. Several pairing connections may run at once (up to
/// `maxConnections`), so a stalled or hostile peer cannot keep the real studio out; a wrong secret never
/// ends the window.
struct PairingWindow: Sendable {
    /// How long a window stays open: 30 s, as the Camo SDK's pairing.
    static let defaultDuration: UInt64 = 30_000_000_000

    /// The payload that opened the window.
    let payload: PairingPayload
    /// When it opened.
    let openedAt: UInt64
    /// How long it stays open.
    let duration: UInt64
    /// At most this many pairing connections at once.
    let maxConnections: Int
    /// At most this many at once from one address, so one host cannot take every slot.
    let maxPerAddress: Int
    /// Connections open now.
    private(set) var connections = 0
    /// Connections open now, per peer address.
    private(set) var connectionsByAddress: [String: Int] = [:]
    /// A verified studio is being written to the paired-device list: the window cannot time out or be
    /// cancelled until that ends (the studio proved itself before the deadline).
    private(set) var isStoring = false
    /// Connections refused because the cap was reached.
    private(set) var refusedConnections = 0
    /// Handshakes that failed (a wrong secret, garbage, a stalled peer).
    private(set) var failedAttempts = 0
    /// How the window ended; nil while it is open.
    private(set) var outcome: Result<PairedStudio, PairingFailure>?

    init(
        payload: PairingPayload, openedAt: UInt64, duration: UInt64 = defaultDuration, maxConnections: Int = 8,
        maxPerAddress: Int = 4
    ) {
        self.payload = payload
        self.openedAt = openedAt
        self.duration = duration
        self.maxConnections = maxConnections
        self.maxPerAddress = maxPerAddress
    }

    /// When the window closes.
    var deadline: UInt64 { openedAt + duration }

    /// Whether the window still takes studios.
    var isOpen: Bool { outcome == nil }

    /// Nanoseconds left at `now` (0 once closed or past the deadline).
    func remaining(at now: UInt64) -> UInt64 {
        guard isOpen, now < deadline else { return 0 }
        return deadline - now
    }

    /// A pairing connection arrived from `address` (the peer's IP): nil to serve it, or the error to send
    /// before closing it.
    mutating func connectionArrived(at now: UInt64, from address: String) -> WireError? {
        guard isOpen, !isStoring, now < deadline else {
            return WireError(code: .notPaired, reason: "The pairing window has closed. Start pairing on the agent again.")
        }
        guard connections < maxConnections, connectionsByAddress[address, default: 0] < maxPerAddress else {
            refusedConnections += 1
            return WireError(
                code: .tooManyConnections,
                reason: "The pairing window already serves as many connections as it takes from this address; try again in a few seconds.")
        }
        connections += 1
        connectionsByAddress[address, default: 0] += 1
        return nil
    }

    /// A pairing connection from `address` ended; `failed` when it ended without pairing.
    mutating func connectionEnded(from address: String, failed: Bool) {
        connections = max(0, connections - 1)
        if let count = connectionsByAddress[address] {
            connectionsByAddress[address] = count > 1 ? count - 1 : nil
        }
        if failed { failedAttempts += 1 }
    }

    /// A verified studio is being stored: hold the window open for it.
    mutating func beginStoring() {
        isStoring = true
    }

    /// The store finished (or failed): end the window with `result`, whatever else was asked meanwhile.
    mutating func finishStoring(_ result: Result<PairedStudio, PairingFailure>) {
        isStoring = false
        if outcome == nil { outcome = result }
    }

    /// A studio completed the XXpsk3 handshake (so it knew the secret) and said who it is.
    /// - Returns: the studio to store, or the error to send it. On success the window is **not** yet closed:
    ///   the caller stores the studio, then calls ``finish(_:)`` with the result.
    func verify(studioId: String, studioName: String, publicKey: [UInt8], at now: UInt64, date: Date) -> Result<PairedStudio, WireError> {
        guard isOpen, !isStoring, now < deadline else {
            return .failure(WireError(code: .notPaired, reason: "The pairing window closed before the handshake completed. Start pairing again."))
        }
        guard studioId == payload.studioId else {
            return .failure(WireError(
                code: .notPaired,
                reason: "This pairing code was made for studio \(payload.studioId), not \(studioId). Use the code this studio made."))
        }
        guard publicKey.count == 32 else {
            return .failure(WireError(code: .handshakeFailed, reason: "The studio's static key is not 32 bytes."))
        }
        return .success(PairedStudio(id: studioId, name: studioName, publicKey: publicKey, pairedAt: date))
    }

    /// Ends the window with `result`. Returns false when it had already ended (the first ending wins) or a
    /// verified studio is being stored.
    @discardableResult
    mutating func finish(_ result: Result<PairedStudio, PairingFailure>) -> Bool {
        guard isOpen, !isStoring else { return false }
        outcome = result
        return true
    }

    /// Times the window out when `now` has reached the deadline. Returns true when this call closed it.
    mutating func expire(at now: UInt64) -> Bool {
        guard isOpen, !isStoring, now >= deadline else { return false }
        return finish(.failure(.timedOut(seconds: Int(duration / 1_000_000_000))))
    }
}
