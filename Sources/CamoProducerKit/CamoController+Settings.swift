import CamoMedia
import CamoWire
import Foundation

/// The camera's settings model (the Google Home camera model's attributes, the camera's own V4L2 controls, and what
/// the host's providers add): read it, write it, and every studio of protocol 1.2 hears of each change at once.
///
/// Reads and writes block on a serial queue of the controller's (the camera's controls are read through its device
/// node); call them from any thread but an event loop.
extension CamoController {
    /// Adds settings that the host owns (night vision, the status light, the power source, ...); their
    /// descriptors replace built-in ones of the same name.
    public func addSettingsProvider(_ provider: any SettingsProvider) {
        settingsHub.state.withLock { $0.providers.append(provider) }
    }

    /// Every setting with its kind, range, default, current value, and whether this camera and host support it.
    public func settingsModel() -> [SettingDescriptor] {
        settingsHub.queue.sync { buildSettingsModel() }
    }

    /// Writes one or more settings. Each is checked against its descriptor and applied, or refused with a reason that
    /// names what is allowed; what was applied is saved (per camera for the picture and the camera's controls) and
    /// every studio is told.
    /// - Parameter writer: who writes, for the change notification (`studio NAME`, `camo-agent settings`).
    public func writeSettings(_ values: [String: SettingValue], by writer: String, requestId: UInt32 = 0) -> SettingsResult {
        settingsHub.queue.sync { applySettings(values, by: writer, requestId: requestId) }
    }

    /// The saved value of a setting (the agent's, or the current camera's), for providers that start from it.
    public func savedSetting(_ name: String) -> SettingValue? {
        settingsHub.state.withLock { state in
            state.values.agent[name] ?? state.values.cameras[state.cameraKey]?[name]
        }
    }

    /// Tells every studio that settings changed by themselves (a provider's `auto` mode switched, say).
    public func settingsChanged(_ names: [String], by writer: String) {
        settingsHub.queue.async { [self] in
            let revision = settingsHub.state.withLock { state -> UInt64 in
                state.revision += 1
                return state.revision
            }
            notifySettings(buildSettingsModel().filter { names.contains($0.name) }, revision: revision, by: writer)
        }
    }

    /// Called with every frame offered to ``enqueueVideo(_:)`` (before the transform), on the caller's thread; for
    /// measurements such as auto night vision's. Keep it cheap.
    public func observeFrames(_ observer: @escaping @Sendable (VideoFrame) -> Void) {
        settingsHub.frameObservers.withLock { $0.append(observer) }
    }

    /// The transform every frame goes through (rotation, flips, viewport), from the current camera's settings.
    public var imageTransform: ImageTransform { settingsHub.transform.withLock { $0 } }

    /// Tells the controller which camera streams now (``SettingsValues/cameraKey(usbSerial:usbVendor:usbProduct:busInfo:)``):
    /// its saved picture settings take effect and its saved controls are written to it again. Call it each time
    /// the camera opens, also after a replug. Controls the camera refuses are logged and noted in the model.
    public func cameraOpened(settingsKey key: String) {
        settingsHub.queue.async { [self] in
            let saved = settingsHub.state.withLock { state -> [String: SettingValue] in
                state.cameraKey = key
                state.restoreNotes = [:]
                return state.values.cameras[key] ?? [:]
            }
            var notes: [String: String] = [:]
            syncCameraFlips()
            settingsHub.updateTransform()
            if let camera {
                let controls = saved.filter {
                    !SettingsCatalog.perCamera.contains($0.key) && !SettingsCatalog.cameraFlipControls.values.contains($0.key)
                }
                for (name, value) in Self.autoFirst(controls) {
                    do {
                        _ = try camera.setCameraControl(name: name, value: Self.controlText(value))
                    } catch {
                        notes[name] = "the camera refused the saved value \(value): \(error)"
                        logger.warning("The camera refused a saved setting", metadata: ["setting": "\(name)", "error": "\(error)"])
                    }
                }
                if !controls.isEmpty {
                    logger.info("Restored the camera's saved settings", metadata: [
                        "camera": "\(key)", "settings": "\(controls.count - notes.count) of \(controls.count)"])
                }
            }
            settingsHub.state.withLock { $0.restoreNotes = notes }
            let revision = settingsHub.state.withLock { state -> UInt64 in
                state.revision += 1
                return state.revision
            }
            notifySettings(buildSettingsModel(), revision: revision, by: "camera opened")
        }
    }

    /// Waits until the saved settings are on disk.
    public func flushSettings() {
        settingsHub.queue.sync {}
        settingsHub.file.flush()
    }

    // MARK: Internals

    /// How many times `settings.json` was written (tests: a flood of writes is coalesced).
    var settingsFileWrites: Int { settingsHub.file.writes.withLock { $0 } }

    /// The whole model, for a studio's `settingsRequest`, handed to `reply` from the settings queue.
    func requestSettings(studioMayWrite: Bool, reply: @escaping @Sendable (SettingsSnapshot) -> Void) {
        settingsHub.queue.async { [self] in
            let revision = settingsHub.state.withLock { $0.revision }
            reply(SettingsSnapshot(reason: .answer, revision: revision, studioMayWrite: studioMayWrite, settings: buildSettingsModel()))
        }
    }

    /// A studio's write, answered to `reply` from the settings queue.
    func requestWrite(_ write: SettingsWrite, by writer: String, reply: @escaping @Sendable (SettingsResult) -> Void) {
        settingsHub.queue.async { [self] in
            reply(applySettings(write.values, by: writer, requestId: write.requestId))
        }
    }

    /// A setting changed outside a write (pause, resume, mute from the host's CLI or the library's API).
    func settingChangedOutside(_ name: String, by writer: String) {
        settingsHub.queue.async { [self] in
            // The value as it is when this runs: a studio's write queued meanwhile is not undone by an older value.
            let value: SettingValue = name == SettingsCatalog.Name.streamingEnabled ? .bool(!isPaused) : .bool(isMicrophoneMuted)
            let revision = settingsHub.record([name: value])
            notifySettings(buildSettingsModel().filter { $0.name == name }, revision: revision, by: writer)
        }
    }

    /// Notes contact with a studio (the model's `lastContactTimestamp`).
    func noteSettingsContact() {
        settingsHub.state.withLock { $0.lastContact = Date() }
    }

    /// Saved agent-level values that act at start: the privacy switch and mute.
    func restoreAgentSettings() -> (paused: Bool, muted: Bool) {
        settingsHub.state.withLock { state in
            var paused = false, muted = false
            if case .bool(let enabled)? = state.values.agent[SettingsCatalog.Name.streamingEnabled] { paused = !enabled }
            if case .bool(let value)? = state.values.agent[SettingsCatalog.Name.microphoneMuted] { muted = value }
            return (paused, muted)
        }
    }

    private func buildSettingsModel() -> [SettingDescriptor] {
        let (values, lastContact, providers, notes) = settingsHub.state.withLock {
            ($0.values, $0.lastContact, $0.providers, $0.restoreNotes)
        }
        let cameraValues = settingsHub.cameraValues
        let (paused, muted) = core.withLock { ($0.media.paused, $0.media.microphoneMuted) }
        var model = SettingsCatalog.core(
            agent: values.agent, camera: cameraValues, captureSize: preferredCaptureSize, paused: paused, muted: muted,
            lastContact: lastContact.map { ISO8601DateFormatter().string(from: $0) },
            information: [
                "vendorName": "camo-agent", "productName": configuration.description.model,
                "softwareVersion": configuration.description.softwareVersion, "camera": configuration.description.camera,
                "microphone": configuration.description.microphone, "nodeLabel": configuration.identity.name,
                "uniqueID": configuration.identity.id,
            ])
        for provider in providers {
            for descriptor in provider.settingDescriptors() {
                if let index = model.firstIndex(where: { $0.name == descriptor.name }) {
                    model[index] = descriptor
                } else {
                    model.append(descriptor)
                }
            }
        }
        if let camera {
            do {
                // The camera's flip controls are imageFlipHorizontal/Vertical in the model (used where they give the same picture).
                for control in try camera.cameraControls()
                where !model.contains(where: { $0.name == control.name }) && !SettingsCatalog.cameraFlipControls.values.contains(control.name) {
                    var descriptor = SettingsCatalog.descriptor(control)
                    if let note = notes[control.name] { descriptor.note = note }
                    model.append(descriptor)
                }
            } catch {
                logger.notice("The camera's controls could not be read", metadata: ["error": "\(error)"])
            }
        }
        return model
    }

    private func applySettings(_ values: [String: SettingValue], by writer: String, requestId: UInt32) -> SettingsResult {
        let model = buildSettingsModel()
        var index: [String: SettingDescriptor] = [:]
        for descriptor in model { index[descriptor.name] = descriptor }
        let providers = settingsHub.state.withLock { $0.providers }
        let size = preferredCaptureSize
        var refused: [SettingRefusal] = []
        var changes: [String: SettingValue] = [:]
        var appliedNames: [String] = []
        // `transportStatus` (the model's camera-wide recording capability) is the privacy switch by another name:
        // inactive is the camera's video off (no live view, no events, no recordings; the studios told).
        var values = values
        if let status = values.removeValue(forKey: SettingsCatalog.Name.transportStatus) {
            if case .text(let text) = status, ["active", "inactive"].contains(text.lowercased()) {
                values[SettingsCatalog.Name.streamingEnabled] = .bool(text.lowercased() == "active")
            } else {
                refused.append(SettingRefusal(name: SettingsCatalog.Name.transportStatus, reason: "transportStatus takes active or inactive, not \(status)"))
            }
        }
        for (name, value) in Self.autoFirst(values) {
            guard let descriptor = index[name] else {
                refused.append(SettingRefusal(name: name, reason: "there is no setting named '\(name)'; `settings` lists the \(model.count) there are"))
                continue
            }
            let checked: SettingValue
            switch SettingsCatalog.check(value, against: descriptor, captureSize: size) {
            case .failure(let refusal):
                refused.append(refusal)
                continue
            case .success(let value):
                checked = value
            }
            if let reason = apply(name, checked, descriptor: descriptor, providers: providers) {
                refused.append(SettingRefusal(name: name, reason: reason))
                continue
            }
            appliedNames.append(name)
            if descriptor.kind != .button { changes[name] = checked }
        }
        guard !appliedNames.isEmpty else { return SettingsResult(requestId: requestId, applied: [], refused: refused) }
        let revision = settingsHub.record(changes, updateTransform: false)
        let applied = buildSettingsModel().filter { appliedNames.contains($0.name) }
        logger.info("Settings changed", metadata: [
            "by": "\(writer)", "settings": "\(applied.map { "\($0.name)=\($0.value.map { "\($0)" } ?? "?")" }.joined(separator: " "))"])
        // Studios hear of a change before the first frame it affects (a turn makes frames portrait).
        notifySettings(applied, revision: revision, by: writer)
        if appliedNames.contains(where: { SettingsCatalog.perCamera.contains($0) }) { syncCameraFlips() }
        settingsHub.updateTransform()
        return SettingsResult(requestId: requestId, applied: applied, refused: refused)
    }

    /// Applies one checked value; nil when done, else why not.
    private func apply(_ name: String, _ value: SettingValue, descriptor: SettingDescriptor, providers: [any SettingsProvider]) -> String? {
        typealias N = SettingsCatalog.Name
        for provider in providers where provider.settingDescriptors().contains(where: { $0.name == name }) {
            do {
                try provider.applySetting(name: name, value: value)
                return nil
            } catch {
                return error.description
            }
        }
        switch (name, value) {
        case (N.streamingEnabled, .bool(let enabled)):
            setPaused(!enabled, fromSettings: true)
            return nil
        case (N.microphoneMuted, .bool(let muted)):
            setMicrophoneMuted(muted, fromSettings: true)
            return nil
        case (N.imageRotation, _), (N.viewport, _), (N.imageFlipHorizontal, _), (N.imageFlipVertical, _):
            return nil  // recorded by the caller; the transform (and the camera's own flips) follow the values
        default:
            guard descriptor.group == "camera" else { return "\(name) cannot be set here" }
            guard let camera else { return "no camera is in use" }
            do {
                _ = try camera.setCameraControl(name: name, value: Self.controlText(value))
                return nil
            } catch {
                return "the camera refused \(value) for \(name): \(error)"
            }
        }
    }

    /// Uses the camera's own flip controls where they give the same picture as the software flips (no quarter turn and
    /// no viewport: the camera flips before the crop and the turn), else turns them off and flips in software. On the
    /// settings queue; the caller updates the transform.
    func syncCameraFlips() {
        guard let camera else {
            settingsHub.state.withLock { $0.cameraFlips = [] }
            return
        }
        let values = settingsHub.cameraValues
        let software = SettingsCatalog.transform(values)
        let cameraMay = !software.rotation.swapsSides && software.viewport == nil
        let names = (try? Set(camera.cameraControls().filter { !$0.isReadOnly }.map(\.name))) ?? []
        var flips: Set<String> = []
        for (setting, control) in SettingsCatalog.cameraFlipControls where names.contains(control) {
            var on = false
            if case .bool(let value)? = values[setting] { on = value }
            let done = (try? camera.setCameraControl(name: control, value: cameraMay && on ? "1" : "0")) != nil
            if done, cameraMay { flips.insert(setting) }
        }
        settingsHub.state.withLock { $0.cameraFlips = flips }
    }

    /// Sends a change to every studio of protocol 1.2.
    private func notifySettings(_ settings: [SettingDescriptor], revision: UInt64, by writer: String) {
        let snapshot = SettingsSnapshot(reason: .change, revision: revision, studioMayWrite: false, changedBy: writer, settings: settings)
        for session in core.withLock({ $0.sessions }) { session.deliverSettings(snapshot) }
    }

    /// Automatic modes first (`white_balance_automatic` before `white_balance_temperature`), then by name.
    static func autoFirst(_ values: [String: SettingValue]) -> [(String, SettingValue)] {
        values.sorted { a, b in
            let autoA = a.key.contains("auto"), autoB = b.key.contains("auto")
            return autoA != autoB ? autoA : a.key < b.key
        }
    }

    /// A value in the text form ``CameraControlling/setCameraControl(name:value:)`` takes.
    static func controlText(_ value: SettingValue) -> String {
        switch value {
        case .bool(let b): b ? "1" : "0"
        case .int(let n): "\(n)"
        default: "\(value)"
        }
    }
}
