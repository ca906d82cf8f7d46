import CamoCapture
import CamoMedia
import CamoProducerKit
import Foundation
import Logging
import Synchronization

/// Picks the camera and microphone and runs them into the controller.
enum SourceSelection {
    /// Where video comes from.
    enum Video {
        case testPattern
        case camera(CameraSource, CameraModeChoice)
    }

    struct Choice {
        var video: Video
        var cameraName: String
        var microphoneName: String
    }

    /// Resolves `--camera` and `--microphone`.
    /// - `test`: the synthetic test pattern.
    /// - `auto`: the first V4L2 capture device that can be captured; the test pattern when there is none (said in the log).
    /// - a path: that camera; an error when it is missing, not a capture device or has no usable format.
    /// ALSA capture arrives in a later release: the microphone is always the synthetic tone for now.
    static func choose(
        camera: String, format: FourCC?, framesPerSecond: Double, dumpRaw: String?, microphone: String, logger: Logger
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
        case "test":
            video = .testPattern
            cameraName = "test pattern"
            logger.info("Camera: the synthetic test pattern (--camera test)")
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
                video = .testPattern
                cameraName = "test pattern"
                logger.notice("No usable camera found; streaming the synthetic test pattern instead")
            }
        default:
            let source = CameraSource(configuration: configuration(camera), logger: logger)
            let choice: CameraModeChoice
            do {
                choice = try source.probe(size: .hd720)
            } catch {
                throw ValidationErrorText("\(error)")
            }
            video = .camera(source, choice)
            let info = DeviceProbe.videoCaptureDeviceInfo().first { $0.path == camera }
            cameraName = info.map { CameraIdentity($0).helloName } ?? camera
        }
        let microphoneName: String
        switch microphone {
        case "test":
            microphoneName = "test tone"
            logger.info("Microphone: the synthetic tone (--microphone test)")
        case "auto":
            if DeviceProbe.hasCaptureMicrophone() {
                logger.warning("Found a microphone, but this version cannot capture from ALSA yet; streaming the synthetic tone instead")
            } else {
                logger.notice("No microphone found; streaming the synthetic tone")
            }
            microphoneName = "test tone"
        default:
            throw ValidationErrorText(
                "This version cannot capture from ALSA device \(microphone) yet (ALSA capture arrives in a later release). Use --microphone test or --microphone auto.")
        }
        return Choice(video: video, cameraName: cameraName, microphoneName: microphoneName)
    }

    /// Runs the chosen video source and the tone into the controller until cancelled.
    static func run(_ choice: Choice, controller: CamoController, clock: any MonotonicClock, cameraName: SharedText, logger: Logger) async {
        switch choice.video {
        case .testPattern:
            await runSynthetic(controller: controller, clock: clock, logger: logger)
        case .camera(let source, _):
            controller.camera = source
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await runCamera(source, controller: controller, cameraName: cameraName, logger: logger)
                }
                group.addTask {
                    await SyntheticAudioSource().run(clock: clock, startTime: clock.now()) { chunk in
                        do {
                            try controller.enqueuePCMAudio(chunk)
                        } catch {
                            logger.error("The test tone broke the contract", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
        }
    }

    private static func runCamera(_ source: CameraSource, controller: CamoController, cameraName: SharedText, logger: Logger) async {
        let lost = Mutex(false)
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
                        if lost.withLock({ let was = $0; $0 = false; return was }) { controller.setCameraLost(false) }
                    case .lost:
                        lost.withLock { $0 = true }
                        controller.setCameraLost(true)
                    case .returned:
                        break
                    }
                },
                wanted: { !controller.connections.isEmpty })
        } catch {
            logger.error("The camera could not start; the studios get a no-signal picture", metadata: ["error": "\(error)"])
            controller.setCameraLost(true)
            controller.camera = nil
            try? await Task.sleep(for: .seconds(1_000_000_000))
        }
    }

    /// Runs the test pattern and tone on one shared start time, so the flash and the click line up.
    static func runSynthetic(controller: CamoController, clock: any MonotonicClock, logger: Logger) async {
        let start = clock.now()
        let video = SyntheticVideoSource()
        let audio = SyntheticAudioSource()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await video.run(clock: clock, startTime: start, size: { controller.preferredCaptureSize }) { frame in
                    do {
                        try controller.enqueueVideo(frame)
                    } catch {
                        logger.error("The test pattern broke the contract", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.addTask {
                await audio.run(clock: clock, startTime: start) { chunk in
                    do {
                        try controller.enqueuePCMAudio(chunk)
                    } catch {
                        logger.error("The test tone broke the contract", metadata: ["error": "\(error)"])
                    }
                }
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

/// A string several tasks read and one updates (the camera's name changes when another camera is plugged in).
final class SharedText: Sendable {
    private let text: Mutex<String>
    init(_ text: String) { self.text = Mutex(text) }
    var value: String { text.withLock { $0 } }
    func set(_ value: String) { text.withLock { $0 = value } }
}

/// An error whose text is shown as is.
struct ValidationErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
