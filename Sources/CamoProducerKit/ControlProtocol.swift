import CamoMedia
import Foundation

/// One request on the local control socket: a JSON object on one line.
public struct ControlRequest: Sendable, Codable, Equatable {
    /// `status`, `pause`, `resume`, `mute` (with `value` `on` or `off`), `controls`, `set-control` (with `name`
    /// and `value`), `rescan`, `pair` (with the QR payload as `value`), `pair-scan`, `pairing` (optionally with an
    /// attempt number as `value`), `cancel-pairing`, `paired`, or `unpair` (with the studio id as `value`).
    public var command: String
    /// The control to set (`set-control`).
    public var name: String?
    /// The value to set it to (`set-control`), or `on`/`off` (`mute`).
    public var value: String?
    /// A request for `command`.
    public init(command: String, name: String? = nil, value: String? = nil) {
        self.command = command
        self.name = name
        self.value = value
    }
}

/// The answer: a JSON object on one line.
public struct ControlResponse: Sendable, Codable, Equatable {
    /// Whether the command succeeded.
    public var ok: Bool
    /// Why it did not, when it did not.
    public var error: String?
    /// The agent's status after the command.
    public var status: AgentStatus?
    /// The camera's controls (`controls`, and the one set by `set-control`).
    public var controls: [CameraControl]?
    /// The pairing attempt (`pair`, `pair-scan`, `pairing`, `cancel-pairing`).
    public var pairing: PairingStatus?
    /// The paired studios (`paired`, `unpair`).
    public var paired: [PairedStudio]?
    /// A machine-readable reason when `ok` is false (a ``PairingFailure/code`` for pairing commands).
    public var errorCode: String?

    /// A response from its parts.
    public init(
        ok: Bool, error: String? = nil, status: AgentStatus? = nil, controls: [CameraControl]? = nil,
        pairing: PairingStatus? = nil, paired: [PairedStudio]? = nil, errorCode: String? = nil
    ) {
        self.ok = ok
        self.error = error
        self.status = status
        self.controls = controls
        self.pairing = pairing
        self.paired = paired
        self.errorCode = errorCode
    }

    /// The JSON coders used on the control socket (ISO 8601 dates).
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// Where the control socket lives. A Unix socket path is limited to 107 bytes; when the state directory's
/// path is too long, the socket goes to `$XDG_RUNTIME_DIR` (else `/tmp`) under a name derived from that directory.
public enum ControlSocketPath {
    /// The longest path a Unix socket address holds (108 bytes with the NUL).
    public static let maxLength = 107

    /// The control socket path for a state directory.
    public static func path(forStateDirectory directory: String) -> String {
        let preferred = directory + "/control.sock"
        if preferred.utf8.count <= maxLength { return preferred }
        // FNV-1a of the directory: stable, short, and distinct per state directory.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in directory.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        // Prefer the per-user runtime directory (0700, owned by the user); /tmp is the last resort.
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return "\(runtime)/camo-agent-\(getuid())-\(String(hash, radix: 16)).sock"
    }
}
