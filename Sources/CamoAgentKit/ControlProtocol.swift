import CamoEvents
import CamoMedia
import CamoProducerKit
import CamoRecording
import CamoWire
import Foundation

/// One request on the local control socket: a JSON object on one line.
public struct ControlRequest: Sendable, Codable, Equatable {
    /// `status`, `pause`, `resume`, `mute` (with `value` `on` or `off`), `controls`, `set-control` (with `name`
    /// and `value`), `settings`, `set-setting` (with `name` and `value` in the command-line form), `rescan`, `pair` (with the QR payload as `value`), `pair-scan`, `pairing` (optionally with an
    /// attempt number as `value`), `cancel-pairing`, `paired`, `unpair` (with the studio id as `value`), or `events` (with the last sequence
    /// number seen as `value`).
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
    /// The settings model (`settings`), or the settings a `set-setting` applied.
    public var settings: [SettingDescriptor]?
    /// Event notices (`events`: those after the sequence number given as `value`).
    public var events: [EventNotice]?
    /// The kept recordings, newest first (`clips`).
    public var clips: [ClipRecord]?
    /// What the recordings are doing (`clips`).
    public var recording: RecordingStatus?
    /// The push transports, tokens hidden (`transports` and the commands that change one).
    public var transports: [PushTransport]?

    /// A response from its parts.
    public init(
        ok: Bool, error: String? = nil, status: AgentStatus? = nil, controls: [CameraControl]? = nil,
        pairing: PairingStatus? = nil, paired: [PairedStudio]? = nil, settings: [SettingDescriptor]? = nil, errorCode: String? = nil,
        events: [EventNotice]? = nil, clips: [ClipRecord]? = nil, recording: RecordingStatus? = nil, transports: [PushTransport]? = nil
    ) {
        self.transports = transports
        self.clips = clips
        self.recording = recording
        self.settings = settings
        self.events = events
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
