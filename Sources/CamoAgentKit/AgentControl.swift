import CamoEvents
import CamoMedia
import CamoProducerKit
import CamoRecording
import CamoWire
import Foundation

/// The control socket's commands, answered from a controller.
public enum AgentControl {
    /// Answers `status`, `pause`, `resume`, `mute` (value `on` or `off`), `controls`, `set-control` and `rescan`.
    /// - Parameters:
    ///   - camera: describes the camera in use now (it can change when a camera is replugged).
    ///   - microphoneDetail: the microphone's device and counters now (nil for the synthetic tone).
    ///   - rescan: looks for a lost camera at once (udev calls `camo-agent rescan` when a camera is added).
    ///   - scanDecoder: finds QR code texts in a frame (libzbar), for `pair-scan`; nil refuses `pair-scan`.
    public static func handler(
        controller: CamoController, camera: @escaping @Sendable () -> String, microphone: String,
        microphoneDetail: @escaping @Sendable () -> MicrophoneStatus? = { nil },
        rescan: @escaping @Sendable () -> Void = {},
        scanDecoder: (@Sendable (VideoFrame) -> [String])? = nil,
        live: @escaping @Sendable () -> LiveStatus? = { nil },
        events: @escaping @Sendable () -> EventMonitor? = { nil },
        recordings: @escaping @Sendable () -> (clips: [ClipRecord], status: RecordingStatus)? = { nil },
        transports: (any PushTransportCommands)? = nil
    ) -> ControlServer.Handler {
        { request in
            if let answer = pairingCommand(request, controller: controller, scanDecoder: scanDecoder) { return answer }
            switch request.command {
            case "events":
                // The notices after the sequence number in `value` (all that are kept without one): a follower polls.
                guard let monitor = events() else {
                    return ControlResponse(ok: false, error: "The event detectors are off (the agent runs with --no-events, config key events); start it without that.")
                }
                let after = request.value.flatMap { UInt64($0) } ?? 0
                return ControlResponse(ok: true, events: monitor.history.filter { $0.sequence > after })
            case "clips":
                guard let recordings = recordings() else {
                    return ControlResponse(ok: false, error: "Recordings are off (the agent runs with --no-recordings, config key recordings); start it without that.")
                }
                return ControlResponse(ok: true, clips: recordings.clips, recording: recordings.status)
            case "transports", "transport-add", "transport-modify", "transport-remove", "transport-status":
                guard let transports else {
                    return ControlResponse(ok: false, error: "Recordings are off (the agent runs with --no-recordings, config key recordings), so there are no push transports.")
                }
                return transportCommand(request, transports)
            case "status":
                break
            case "pause":
                controller.pause()
            case "resume":
                controller.resume()
            case "rescan":
                rescan()
            case "mute":
                switch request.value {
                case "on": controller.muteMicrophone()
                case "off": controller.unmuteMicrophone()
                default: return ControlResponse(ok: false, error: "mute needs the value on or off")
                }
            case "controls":
                do {
                    return ControlResponse(ok: true, controls: try controller.cameraControls())
                } catch {
                    return ControlResponse(ok: false, error: "\(error)")
                }
            case "set-control":
                guard let name = request.name, let value = request.value else {
                    return ControlResponse(ok: false, error: "set-control needs a name and a value")
                }
                // Through the settings model, so the value is saved for this camera and every studio hears of it.
                guard controller.camera != nil else { return ControlResponse(ok: false, error: "\(CameraControlError(CamoController.noCameraText))") }
                let answer = setSetting(controller, name: name.lowercased(), text: value)
                guard answer.ok else { return answer }
                do {
                    let controls = try controller.cameraControls().filter { $0.name == name.lowercased() }
                    return ControlResponse(ok: true, controls: controls)
                } catch {
                    return ControlResponse(ok: false, error: "\(error)")
                }
            case "settings":
                return ControlResponse(ok: true, settings: controller.settingsModel())
            case "set-setting":
                guard let name = request.name, let value = request.value else {
                    return ControlResponse(ok: false, error: "set-setting needs a name and a value", errorCode: "badRequest")
                }
                return setSetting(controller, name: name, text: value)
            default:
                return ControlResponse(
                    ok: false,
                    error: "unknown command \(request.command); try status, pause, resume, mute, controls, set-control, settings, set-setting, events, clips, transports, rescan, pair, pair-scan, pairing, cancel-pairing, paired or unpair")
            }
            return ControlResponse(
                ok: true, status: controller.status(
                    camera: camera(), microphone: microphone, microphoneDetail: microphoneDetail(), live: live(), events: events()?.status))
        }
    }

    /// Writes one setting from its command-line text (`true`, `140`, `auto`, `320,180-960,540`).
    /// `transports` lists; `transport-add` (value: JSON with url, and caFile and token if any), `transport-modify` (name:
    /// the id; value: JSON with what changes), `transport-remove` (name: the id) and `transport-status` (name: the id;
    /// value: active or inactive) change one and list them all after.
    static func transportCommand(_ request: ControlRequest, _ transports: any PushTransportCommands) -> ControlResponse {
        do throws(PushTransportError) {
            let id = request.name.flatMap { Int($0) }
            let definition = request.value.flatMap { try? JSONDecoder().decode(PushTransportDefinition.self, from: Data($0.utf8)) }
            switch request.command {
            case "transport-add":
                guard let url = definition?.url else {
                    return ControlResponse(ok: false, error: "transport-add needs a definition with a url (JSON: {\"url\": \"https://…\"})", errorCode: "badRequest")
                }
                _ = try transports.add(url: url, caFile: definition?.caFile, token: definition?.token)
            case "transport-modify":
                guard let id, let definition else {
                    return ControlResponse(ok: false, error: "transport-modify needs an id and a definition (JSON with url, caFile or token)", errorCode: "badRequest")
                }
                _ = try transports.modify(id: id, url: definition.url, caFile: definition.caFile, token: definition.token)
            case "transport-remove":
                guard let id else { return ControlResponse(ok: false, error: "transport-remove needs an id", errorCode: "badRequest") }
                try transports.remove(id: id)
            case "transport-status":
                guard let id, let status = request.value.flatMap(PushTransport.Status.init) else {
                    return ControlResponse(ok: false, error: "transport-status needs an id and active or inactive", errorCode: "badRequest")
                }
                _ = try transports.setStatus(id: id, status)
            default:
                break
            }
        } catch {
            return ControlResponse(ok: false, error: error.description, transports: transports.list)
        }
        return ControlResponse(ok: true, transports: transports.list)
    }

    static func setSetting(_ controller: CamoController, name: String, text: String) -> ControlResponse {
        let model = controller.settingsModel()
        guard let descriptor = model.first(where: { $0.name == name }) else {
            return ControlResponse(
                ok: false, error: "there is no setting named '\(name)'; `camo-agent settings` lists the \(model.count) there are",
                errorCode: "unknownSetting")
        }
        let result = controller.writeSettings([name: descriptor.parse(text)], by: "camo-agent settings")
        if let refusal = result.refused.first {
            return ControlResponse(ok: false, error: refusal.reason, settings: [descriptor], errorCode: "refused")
        }
        return ControlResponse(ok: true, settings: result.applied)
    }

    /// The pairing commands; nil for any other command.
    static func pairingCommand(
        _ request: ControlRequest, controller: CamoController, scanDecoder: (@Sendable (VideoFrame) -> [String])?
    ) -> ControlResponse? {
        func answer(_ result: Result<PairingStatus, PairingFailure>) -> ControlResponse {
            switch result {
            case .success(let status): return ControlResponse(ok: true, pairing: status)
            case .failure(let failure): return ControlResponse(ok: false, error: failure.description, errorCode: failure.code)
            }
        }
        switch request.command {
        case "pair":
            guard let payload = request.value, !payload.isEmpty else {
                return ControlResponse(ok: false, error: "pair needs the QR payload as its value", errorCode: "badRequest")
            }
            return answer(controller.openPairing(payloadText: payload))
        case "pair-scan":
            guard let scanDecoder else {
                return ControlResponse(ok: false, error: "This agent cannot scan QR codes.", errorCode: "noFrames")
            }
            return answer(controller.startScanning(decode: scanDecoder))
        case "pairing":
            // With an attempt number as the value: that attempt, even when a newer one has started since.
            if let value = request.value, let attempt = Int(value) {
                return ControlResponse(ok: true, pairing: controller.pairingStatus(attempt: attempt))
            }
            return ControlResponse(ok: true, pairing: controller.pairingStatus)
        case "cancel-pairing":
            guard controller.cancelPairing() else {
                return ControlResponse(ok: false, error: "No pairing is in progress.", errorCode: "nothingToCancel")
            }
            return ControlResponse(ok: true, pairing: controller.pairingStatus)
        case "paired":
            return ControlResponse(ok: true, paired: controller.pairedDevices)
        case "settings-access":
            guard let id = request.name, let value = request.value, value == "read-only" || value == "read-write" else {
                return ControlResponse(ok: false, error: "settings-access needs a studio id and read-only or read-write", errorCode: "badRequest")
            }
            do {
                guard try controller.pairedDeviceStore.setSettingsReadOnly(id: id, value == "read-only") else {
                    return ControlResponse(
                        ok: false, error: "No paired studio has the id \(id); `camo-agent paired` lists them.", errorCode: "notFound")
                }
                return ControlResponse(ok: true, paired: controller.pairedDevices)
            } catch {
                return ControlResponse(ok: false, error: "The paired-device list could not be written: \(error)", errorCode: "cannotStore")
            }
        case "unpair":
            guard let id = request.value, !id.isEmpty else {
                return ControlResponse(ok: false, error: "unpair needs the studio id as its value", errorCode: "badRequest")
            }
            do {
                guard try controller.removePairedDevice(id) else {
                    return ControlResponse(
                        ok: false, error: "No paired studio has the id \(id); `camo-agent paired` lists them.", errorCode: "notFound")
                }
                return ControlResponse(ok: true, paired: controller.pairedDevices)
            } catch {
                return ControlResponse(ok: false, error: "The paired-device list could not be written: \(error)", errorCode: "cannotStore")
            }
        default:
            return nil
        }
    }
}
