import CamoStorage
import CamoWire
import Foundation
import Logging
import Synchronization

/// The values of the settings the agent keeps, as persisted in `settings.json` in the state directory: the agent's
/// own (privacy, microphone, speaker, lights) and, per camera identity, the picture's (rotation, flips, viewport) and
/// the camera's V4L2 controls as last written.
public struct SettingsValues: Sendable, Codable, Equatable {
    /// Settings of the agent, whatever camera it streams.
    public var agent: [String: SettingValue] = [:]
    /// Settings of each camera, by ``SettingsValues/cameraKey(usbSerial:usbVendor:usbProduct:busInfo:)``.
    public var cameras: [String: [String: SettingValue]] = [:]

    /// Empty values: every setting at its default.
    public init() {}

    /// The key a camera's settings are kept under: its USB vendor, product and serial when it has a serial, else
    /// its bus position (`usb-0000:00:14.0-1`, `platform:vivid-000`); `test-pattern` for the synthetic source.
    public static func cameraKey(usbSerial: String?, usbVendor: String?, usbProduct: String?, busInfo: String?) -> String {
        if let usbSerial, !usbSerial.isEmpty {
            return "usb:\(usbVendor ?? "?"):\(usbProduct ?? "?"):\(usbSerial)"
        }
        if let busInfo, !busInfo.isEmpty { return "bus:\(busInfo)" }
        return testPatternKey
    }

    /// The key of the synthetic test pattern's settings.
    public static let testPatternKey = "test-pattern"
}

/// `settings.json`: the ``SettingsValues``, written atomically (a crash leaves the old or the new file, never a
/// mix) and owner-only. Writes are coalesced: a burst of changes costs one write of the latest values.
final class SettingsFile: Sendable {
    /// The file name inside the state directory.
    static let fileName = "settings.json"

    private let file: JSONStateFile<SettingsValues>?
    private let logger: Logger
    private let queue = DispatchQueue(label: "camo.settings.file")
    private let pending = Mutex<(values: SettingsValues?, scheduled: Bool)>((nil, false))
    /// How many times the file was written (for tests: a flood of writes is coalesced).
    let writes = Mutex(0)

    /// The file in `directory` (nil: kept in memory only).
    init(directory: String?, logger: Logger) {
        self.file = directory.map { JSONStateFile(path: $0 + "/" + Self.fileName) }
        self.logger = logger
    }

    /// Reads the saved values; missing: empty; corrupt: reported, kept aside, empty.
    func load() -> SettingsValues {
        guard let file else { return SettingsValues() }
        do {
            switch try file.load() {
            case .missing: return SettingsValues()
            case .loaded(let values): return values
            case .keptAside(let keptAs, let reason):
                logger.error("The saved settings were unreadable and are kept aside; every setting starts at its default",
                             metadata: ["keptAs": "\(keptAs)", "reason": "\(reason)"])
                return SettingsValues()
            }
        } catch {
            logger.error("The saved settings cannot be read; every setting starts at its default", metadata: ["error": "\(error)"])
            return SettingsValues()
        }
    }

    /// Saves `values` soon, on a queue of its own; later values replace earlier unsaved ones.
    func save(_ values: SettingsValues) {
        guard let file else { return }
        let schedule = pending.withLock { state -> Bool in
            state.values = values
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        guard schedule else { return }
        queue.async { [self] in
            let values = pending.withLock { state -> SettingsValues? in
                state.scheduled = false
                defer { state.values = nil }
                return state.values
            }
            guard let values else { return }
            do {
                try file.save(values)
                writes.withLock { $0 += 1 }
            } catch {
                logger.error("The settings could not be saved; they hold until the agent stops", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Waits until every scheduled save is written (for an orderly stop and for tests).
    func flush() {
        queue.sync {}
    }
}
