import CamoMedia
import CamoWire
import Foundation
import Logging
import Synchronization

/// The controller's settings: the saved values, the camera they apply to, the image transform every frame goes
/// through, the providers the host added, and the serial queue all reads and writes run on (never an event loop:
/// a camera's controls are read through its device node).
final class SettingsHub: Sendable {
    struct State {
        var values = SettingsValues()
        var revision: UInt64 = 0
        var cameraKey = SettingsValues.testPatternKey
        var providers: [any SettingsProvider] = []
        var lastContact: Date?
        /// Names of camera controls the camera refused when they were restored, with the camera's reason.
        var restoreNotes: [String: String] = [:]
        /// The flips the camera does itself (`imageFlipHorizontal` through its `horizontal_flip` control, ...),
        /// which the software transform then leaves out.
        var cameraFlips: Set<String> = []
    }

    let state: Mutex<State>
    /// Read for every frame; kept apart so the capture thread takes only this lock.
    let transform = Mutex(ImageTransform())
    /// Frame observers (``CamoController/observeFrames(_:)``).
    let frameObservers = Mutex<[@Sendable (VideoFrame) -> Void]>([])
    /// The host's kept event notices, for studios that ask for events with replay (``CamoController/setEventHistory(_:)``).
    let eventHistory = Mutex<(@Sendable () -> [WireEvent])?>(nil)
    /// The host's recordings, for paired studios (``CamoController/setClipLibrary(_:)``).
    let clipLibrary = Mutex<(any ClipLibrary)?>(nil)
    /// Where clip requests are answered (disk reads stay off the event loops).
    let clipQueue = DispatchQueue(label: "camo.controller.clips")
    let file: SettingsFile
    let queue = DispatchQueue(label: "camo.controller.settings")
    let logger: Logger

    init(directory: String?, logger: Logger) {
        self.logger = logger
        file = SettingsFile(directory: directory, logger: logger)
        var initial = State()
        initial.values = file.load()
        state = Mutex(initial)
        transform.withLock { $0 = SettingsCatalog.transform(initial.values.cameras[initial.cameraKey] ?? [:]) }
    }

    /// Recomputes the transform from the current camera's values, leaving out what the camera does itself.
    func updateTransform() {
        let (values, flips) = state.withLock { ($0.values.cameras[$0.cameraKey] ?? [:], $0.cameraFlips) }
        transform.withLock { $0 = SettingsCatalog.transform(values, cameraFlips: flips) }
    }

    /// The values of the camera in use.
    var cameraValues: [String: SettingValue] {
        state.withLock { $0.values.cameras[$0.cameraKey] ?? [:] }
    }

    /// Records `values` (agent-level or for the current camera), bumps the revision, saves, and updates the transform.
    func record(_ changes: [String: SettingValue], updateTransform update: Bool = true) -> UInt64 {
        let (values, revision) = state.withLock { state -> (SettingsValues, UInt64) in
            for (name, value) in changes {
                if SettingsCatalog.perCamera.contains(name) || !SettingsCatalog.agentLevel(name) {
                    state.values.cameras[state.cameraKey, default: [:]][name] = value
                } else {
                    state.values.agent[name] = value
                }
            }
            state.revision += 1
            return (state.values, state.revision)
        }
        if update { updateTransform() }
        file.save(values)
        return revision
    }
}

extension SettingsCatalog {
    /// Whether a setting is the agent's (kept whatever camera streams) rather than the camera's.
    static func agentLevel(_ name: String) -> Bool {
        [Name.streamingEnabled, Name.microphoneMuted, Name.recordingMicrophoneMuted, Name.speakerMuted, Name.speakerVolumeLevel,
         Name.nightVision, Name.statusLightEnabled, Name.statusLightBrightness].contains(name)
    }
}
