import CamoCapture
import CamoMedia
import CamoProducerKit
import Foundation
import Logging

/// Picks the camera and microphone and runs them into the controller.
enum SourceSelection {
    struct Choice {
        var cameraName: String
        var microphoneName: String
    }

    /// Resolves `--camera` and `--microphone`. Real V4L2 and ALSA capture arrive in later releases: today the
    /// agent streams the synthetic test pattern and tone, and says so when it found a device it cannot use yet.
    static func choose(camera: String, microphone: String, logger: Logger) throws -> Choice {
        let cameraName: String
        switch camera {
        case "test":
            cameraName = "test pattern"
            logger.info("Camera: the synthetic test pattern (--camera test)")
        case "auto":
            let cameras = DeviceProbe.videoCaptureDeviceInfo()
            if let first = cameras.first {
                logger.warning(
                    "Found a camera, but this version cannot capture from V4L2 yet; streaming the synthetic test pattern instead",
                    metadata: ["device": "\(first.path)", "card": "\(first.card)"])
            } else {
                logger.notice("No camera found; streaming the synthetic test pattern")
            }
            cameraName = "test pattern"
        default:
            throw ValidationErrorText(
                "This version cannot capture from \(camera) yet (V4L2 capture arrives in the next release). Use --camera test or --camera auto.")
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
        return Choice(cameraName: cameraName, microphoneName: microphoneName)
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

/// An error whose text is shown as is.
struct ValidationErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
