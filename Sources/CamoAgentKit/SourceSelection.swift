import CamoCapture
import CamoMedia
import CamoProducerKit
import Foundation
import Logging
import Synchronization

/// Picks the camera and microphone and runs them into the controller.
enum SourceSelection {
    /// What the agent's hello names the synthetic sources (Docs/PROTOCOL.md, agentHello).
    static let testPatternName = "synthetic test pattern"
    static let toneName = "synthetic tone"

    /// Where video comes from.
    enum Video {
        /// The synthetic pattern; `busy` with rows of noise (`test:busy`).
        case testPattern(busy: Bool)
        /// A still picture with one controlled change, for the event detectors (`test:block`, `test:steps`).
        case scene(SyntheticScene)
        case image(StillImageSource)
        case camera(CameraSource, CameraModeChoice)
    }

    /// Where audio comes from.
    enum Audio {
        case tone
        case microphone(MicrophoneSource, MicrophoneSetup)
    }

    struct Choice {
        var video: Video
        var audio: Audio
        var cameraName: String
        var microphoneName: String

        /// The microphone's device and counters for the status (nil for the tone).
        var microphoneStatus: MicrophoneStatus? {
            guard case .microphone(let source, _) = audio else { return nil }
            let s = source.statistics
            return MicrophoneStatus(
                setup: s.setup.map { "\($0)" }, lost: s.lost, capturedFrames: s.capturedFrames, overruns: s.overruns,
                suspends: s.suspends, filledFrames: s.filledFrames, droppedFrames: s.droppedFrames,
                silentFramesWhileLost: s.silentFramesWhileLost, losses: s.losses)
        }
    }

    /// How to open the microphone (`--microphone-format`, `--microphone-channels`, `--microphone-buffer-ms`).
    struct MicrophoneOptions {
        var format: MicrophoneSampleFormat?
        var channels: Int?
        var bufferMilliseconds = 100
    }

    /// Resolves `--camera` and `--microphone`.
    /// - camera `test`: the synthetic test pattern (`test:busy` with rows of noise); `test:block` and `test:steps`: the
    ///   ``SyntheticScene``s for the event detectors; `auto`: the first V4L2 capture device that can be captured, the test
    ///   pattern when there is none (said in the log); a path: that camera, an error when it is missing, not a capture
    ///   device or has no usable format.
    /// - microphone `test`: the synthetic tone; `auto`: ALSA's `default` device, else the first hardware capture
    ///   device, else the tone (said in the log); a name: that ALSA device, an error when it cannot be opened.
    static func choose(
        camera: String, format: FourCC?, framesPerSecond: Double, dumpRaw: String?, microphone: String,
        microphoneOptions: MicrophoneOptions = MicrophoneOptions(), logger: Logger
    ) throws -> Choice {
        func configuration(_ path: String) -> CameraSource.Configuration {
            var configuration = CameraSource.Configuration(path: path)
            configuration.format = format
            configuration.framesPerSecond = framesPerSecond
            configuration.dumpRawPath = dumpRaw
            return configuration
        }
        let video: Video
        let cameraName: String
        switch camera {
        case "test", "test:busy":
            let busy = camera == "test:busy"
            video = .testPattern(busy: busy)
            cameraName = SourceSelection.testPatternName + (busy ? " (busy)" : "")
            logger.info(busy ? "Camera: the synthetic test pattern with busy rows (--camera test:busy)" : "Camera: the synthetic test pattern (--camera test)")
        case let name where name.hasPrefix("test:"):
            let sceneName = String(name.dropFirst("test:".count))
            guard let scene = SyntheticScene(rawValue: sceneName) else {
                let choices = ["test", "test:busy"] + SyntheticScene.allCases.map { "test:\($0.rawValue)" }
                throw SourceSelectionError("There is no synthetic camera \(name); choose one of \(choices.joined(separator: ", "))")
            }
            video = .scene(scene)
            cameraName = "synthetic scene (\(scene.rawValue))"
            logger.info("Camera: the synthetic scene \(scene.rawValue): \(Self.sceneDescription(scene)) (--camera \(name))")
        case let path where path.hasPrefix("image:"):
            let file = String(path.dropFirst("image:".count))
            do {
                let source = try StillImageSource(path: file)
                video = .image(source)
                cameraName = "image \((file as NSString).lastPathComponent)"
                logger.info("Camera: a still image at 30 fps", metadata: ["file": "\(file)", "size": "\(source.frame.width)x\(source.frame.height)"])
            } catch {
                throw SourceSelectionError("\(error)")
            }
        case "auto":
            var found: (CameraSource, CameraModeChoice, String)?
            for device in DeviceProbe.videoCaptureDeviceInfo() {
                let source = CameraSource(configuration: configuration(device.path), logger: logger)
                do {
                    let choice = try source.probe(size: .hd720)
                    found = (source, choice, CameraIdentity(device).helloName)
                    break
                } catch {
                    logger.warning("Skipping a camera that cannot be used", metadata: ["device": "\(device.path)", "error": "\(error)"])
                }
            }
            if let (source, choice, name) = found {
                video = .camera(source, choice)
                cameraName = name
                logger.info("Camera found", metadata: ["device": "\(source.configuration.path)", "card": "\(name)"])
            } else {
                video = .testPattern(busy: false)
                cameraName = SourceSelection.testPatternName
                logger.notice("No usable camera found; streaming the synthetic test pattern instead")
            }
        default:
            let source = CameraSource(configuration: configuration(camera), logger: logger)
            let choice: CameraModeChoice
            do {
                choice = try source.probe(size: .hd720)
            } catch {
                throw SourceSelectionError("\(error)")
            }
            video = .camera(source, choice)
            let info = DeviceProbe.videoCaptureDeviceInfo().first { $0.path == camera }
            cameraName = info.map { CameraIdentity($0).helloName } ?? camera
        }
        let (audio, microphoneName) = try chooseMicrophone(microphone, options: microphoneOptions, logger: logger)
        return Choice(video: video, audio: audio, cameraName: cameraName, microphoneName: microphoneName)
    }

    private static func chooseMicrophone(_ name: String, options: MicrophoneOptions, logger: Logger) throws -> (Audio, String) {
        func source(_ device: String) -> MicrophoneSource {
            var configuration = MicrophoneSource.Configuration(device: device)
            configuration.format = options.format
            configuration.channels = options.channels
            configuration.bufferMilliseconds = options.bufferMilliseconds
            return MicrophoneSource(configuration: configuration, logger: logger)
        }
        switch name {
        case "test":
            logger.info("Microphone: the synthetic tone (--microphone test)")
            return (.tone, SourceSelection.toneName)
        case "auto":
            guard MicrophoneSource.hasDevice() else {
                logger.notice("No microphone found; streaming the synthetic tone instead")
                return (.tone, SourceSelection.toneName)
            }
            // `default` first (PipeWire or PulseAudio on a desktop), then each card's capture device.
            let candidates = ["default"] + MicrophoneSource.devices(capabilities: false).map(\.name).filter { $0.hasPrefix("hw:") }.map { "plug" + $0 }
            for device in candidates {
                let microphone = source(device)
                do {
                    let setup = try microphone.probe()
                    logger.info("Microphone found", metadata: ["device": "\(device)", "setup": "\(setup)"])
                    return (.microphone(microphone, setup), device)
                } catch {
                    logger.warning("Skipping a microphone that cannot be used", metadata: ["device": "\(device)", "error": "\(error)"])
                }
            }
            logger.notice("No usable microphone found; streaming the synthetic tone instead")
            return (.tone, SourceSelection.toneName)
        default:
            let microphone = source(name)
            do {
                let setup = try microphone.probe()
                logger.info("Microphone", metadata: ["device": "\(name)", "setup": "\(setup)"])
                return (.microphone(microphone, setup), name)
            } catch {
                throw SourceSelectionError("\(error)")
            }
        }
    }

    /// Runs the chosen video and audio sources into the controller until cancelled. The test pattern and the tone
    /// share one start time, so the flash and the click line up.
    /// `heartbeat` beats for every frame a source produces, delivered or not (the watchdog's sign of life).
    static func run(
        _ choice: Choice, controller: CamoController, clock: any MonotonicClock, cameraName: SharedText, heartbeat: CaptureHeartbeat,
        logger: Logger
    ) async {
        let start = clock.now.nanoseconds
        await withTaskGroup(of: Void.self) { group in
            switch choice.video {
            case .testPattern(let busy):
                group.addTask {
                    await runTestPattern(controller: controller, clock: clock, start: start, busy: busy, heartbeat: heartbeat, logger: logger)
                }
            case .scene(let scene):
                group.addTask {
                    await runScene(scene, controller: controller, clock: clock, start: start, heartbeat: heartbeat, logger: logger)
                }
            case .image(let source):
                group.addTask {
                    await source.run(clock: clock, startTime: start) { frame in
                        heartbeat.beat()
                        do {
                            try controller.enqueueVideo(frame)
                        } catch {
                            logger.error("The still image broke the contract", metadata: ["error": "\(error)"])
                        }
                    }
                }
            case .camera(let source, _):
                controller.camera = source
                group.addTask { await runCamera(source, controller: controller, cameraName: cameraName, heartbeat: heartbeat, logger: logger) }
            }
            switch choice.audio {
            case .tone:
                group.addTask { await runTone(controller: controller, clock: clock, start: start, logger: logger) }
            case .microphone(let source, _):
                group.addTask { await runMicrophone(source, controller: controller, logger: logger) }
            }
        }
    }

    private static func runMicrophone(_ source: MicrophoneSource, controller: CamoController, logger: Logger) async {
        await source.run(deliver: { chunk in
            do {
                try controller.enqueuePCMAudio(chunk)
            } catch {
                logger.error("A microphone chunk broke the contract", metadata: ["error": "\(error)"])
            }
        })
    }

    private static func runCamera(
        _ source: CameraSource, controller: CamoController, cameraName: SharedText, heartbeat: CaptureHeartbeat, logger: Logger
    ) async {
        let lost = Mutex(false)
        let settingsKey = Mutex<String?>(nil)
        do {
            try await source.run(
                size: { controller.preferredCaptureSize },
                deliver: { frame in
                    do {
                        try controller.enqueueVideo(frame)
                    } catch {
                        logger.error("A camera frame broke the contract", metadata: ["error": "\(error)"])
                    }
                },
                events: { event in
                    switch event {
                    case .streaming(let identity, _, _):
                        cameraName.set(identity.helloName)
                        // This camera's saved settings (picture and controls), when it opens and after a replug; not
                        // when it only restarts in another mode (its controls keep their values then).
                        let key = SettingsValues.cameraKey(
                            usbSerial: identity.usbSerial, usbVendor: identity.usbVendorId, usbProduct: identity.usbProductId,
                            busInfo: identity.busInfo)
                        let previous: String? = settingsKey.withLock { let was = $0; $0 = key; return was }
                        if previous != key { controller.cameraOpened(settingsKey: key) }
                        controller.videoSourceRestarted()
                        if lost.withLock({ let was = $0; $0 = false; return was }) { controller.setCameraLost(false) }
                    case .lost:
                        lost.withLock { $0 = true }
                        settingsKey.withLock { $0 = nil }
                        controller.setCameraLost(true)
                    case .returned:
                        break
                    }
                },
                wanted: {
                    heartbeat.beat()
                    // Studios want frames, and so does a pairing scan (no studio is connected while it pairs).
                    return !controller.connections.isEmpty || controller.isScanningForPairingCode
                },
                jpegPlanes: { controller.wantsJPEGPlanes(for: $0) })
        } catch {
            logger.error("The camera could not start; the studios get a no-signal picture", metadata: ["error": "\(error)"])
            controller.setCameraLost(true)
            controller.camera = nil
            try? await Task.sleep(for: .seconds(1_000_000_000))
        }
    }

    private static func runTestPattern(
        controller: CamoController, clock: any MonotonicClock, start: UInt64, busy: Bool, heartbeat: CaptureHeartbeat, logger: Logger
    ) async {
        await SyntheticVideoSource(busy: busy).run(clock: clock, startTime: start, size: { controller.preferredCaptureSize }) { frame in
            heartbeat.beat()
            do {
                try controller.enqueueVideo(frame)
            } catch {
                logger.error("The test pattern broke the contract", metadata: ["error": "\(error)"])
            }
        }
    }

    /// What the log says a scene shows.
    static func sceneDescription(_ scene: SyntheticScene) -> String {
        switch scene {
        case .block: "a still room with a dark block moving back and forth in the left quarter of the picture"
        case .steps: "a still room whose brightness steps by +40 or -40 every 3 s (nothing moves)"
        }
    }

    /// Renders `scene` at 30 fps at the size the controller asks for, as the test pattern does: frame `n` is due at
    /// `start + n / 30 s` and carries that time; a late wake-up skips to the newest due frame.
    private static func runScene(
        _ scene: SyntheticScene, controller: CamoController, clock: any MonotonicClock, start: UInt64, heartbeat: CaptureHeartbeat,
        logger: Logger
    ) async {
        var renderer = SceneRenderer(scene: scene)
        let limit = 1...MediaContract.maxDimension
        var n: UInt64 = 0
        while !Task.isCancelled {
            do {
                try await clock.sleep(until: SyntheticVideoSource.frameTime(n, startTime: start))
            } catch {
                return
            }
            let now = clock.now.nanoseconds
            if now >= SyntheticVideoSource.frameTime(n + 1, startTime: start) {
                n = (now - start) * UInt64(MediaContract.fps) / 1_000_000_000
            }
            let requested = controller.preferredCaptureSize
            let size = VideoSize(
                width: min(max(requested.width, limit.lowerBound), limit.upperBound),
                height: min(max(requested.height, limit.lowerBound), limit.upperBound))
            let frame = renderer.frame(number: n, size: size, captureTime: SyntheticVideoSource.frameTime(n, startTime: start))
            heartbeat.beat()
            do {
                try controller.enqueueVideo(frame)
            } catch {
                logger.error("The synthetic scene broke the contract", metadata: ["error": "\(error)"])
            }
            n += 1
        }
    }

    private static func runTone(controller: CamoController, clock: any MonotonicClock, start: UInt64, logger: Logger) async {
        await SyntheticAudioSource().run(clock: clock, startTime: start) { chunk in
            do {
                try controller.enqueuePCMAudio(chunk)
            } catch {
                logger.error("The test tone broke the contract", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The CPU architecture this binary was built for (what `uname -m` says on that machine).
    static func machine() -> String {
        #if arch(x86_64)
        return "x86_64"
        #elseif arch(arm64)
        return "aarch64"
        #elseif arch(arm)
        return "armv7l"
        #else
        return "unknown"
        #endif
    }
}

/// A camera or microphone that was asked for and cannot be used; the text says which and why.
public struct SourceSelectionError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
