import ArgumentParser
import CamoMedia
import CamoPreview
import CamoStudioKit
import CamoCommandLine
import CamoVirtualDevices
import Foundation
import Logging

/// `camo-studio camera`: the agent's picture as a v4l2loopback webcam (and its sound as a capture device), kept
/// fed while the agent comes and goes.
struct Camera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Feed an agent's picture to a virtual webcam (v4l2loopback) that any program can choose.",
        discussion: """
            Load the loopback device first with `sudo camo-studio setup`. The device keeps its format while the agent \
            is away (a restart, a Wi-Fi drop, a cable pulled): it shows the last picture dimmed with RECONNECTING, and \
            the agent's frames again as soon as it is back. Prints one line when the device is fed: \
            device=PATH format="YUYV 1280x720 at 30 fps" card=LABEL microphone=DEVICE. Where PipeWire runs for this \
            user, the agent's sound becomes a PipeWire source named after the agent (microphone=pipewire:camo-NAME, \
            listed as "Camo: NAME" by every PipeWire or PulseAudio program); else it is played into snd-aloop (loaded \
            by setup as CamoMic) and other programs record it from the loopback's other end, hw:CamoMic,1,0. Either \
            way its clock is held to the consumer's, and the picture is held back as long as the sound takes so the \
            two stay in step. Stops on SIGINT or SIGTERM.
            """)

    @OptionGroup var target: SessionTarget
    @Option(help: "The v4l2loopback device to write to.") var device = "/dev/video10"
    @Option(help: "The pixel format offered: yuyv or i420.") var format = "yuyv"
    @Option(help: "The size offered, WxH (the agent is asked for it; other sizes are scaled).") var size = "1280x720"
    @Option(help: "Codec to ask the agent for: bgra, jpeg or h264 (default: the agent decides).") var codec: String?
    @Option(help: "Seconds of silence from a streaming agent that count as a dead link (then it reconnects).")
    var stallTimeout: Double = 2
    @Option(help: "The virtual microphone: auto (a PipeWire source where PipeWire runs, else snd-aloop's CamoMic card when it is loaded), pipewire, none, or the ALSA device to play into (e.g. hw:CamoMic,0,0).")
    var microphone = "auto"
    @Flag(help: "Show the live picture in a window (SDL2) with its frame rate, bitrate and latency.") var preview = false
    @Option(help: "Where to write what is fed (for `camo-studio status`); default $XDG_RUNTIME_DIR/camo-studio/feeds.")
    var feedsDir: String?
    @OptionGroup var logging: LoggingOptions

    private var parsed: (format: VirtualCameraFormat.PixelFormat, size: VideoSize)? {
        let parts = size.lowercased().split(separator: "x")
        guard let pixelFormat = VirtualCameraFormat.PixelFormat(rawValue: format.lowercased()), parts.count == 2,
            let width = Int(parts[0]), let height = Int(parts[1])
        else { return nil }
        return (pixelFormat, VideoSize(width: width, height: height))
    }

    func validate() throws {
        guard VirtualCameraFormat.PixelFormat(rawValue: format.lowercased()) != nil else {
            throw ValidationError("--format must be yuyv or i420, got '\(format)'")
        }
        guard let parsed else { throw ValidationError("--size must be WxH, got '\(size)'") }
        do {
            _ = try VirtualCameraFormat(pixelFormat: parsed.format, size: parsed.size)
        } catch {
            throw ValidationError("--size: \(error)")
        }
        guard codec == nil || StudioCodecPreference(rawValue: codec ?? "") != nil, codec != "agentDecides" else {
            throw ValidationError("--codec must be bgra, jpeg or h264")
        }
        guard stallTimeout >= 0.1, stallTimeout <= 3600 else { throw ValidationError("--stall-timeout must be 0.1...3600 seconds") }
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio.camera")
        guard let parsed, let cameraFormat = try? VirtualCameraFormat(pixelFormat: parsed.format, size: parsed.size) else { throw ExitCode.usage }
        // Taken before anything else, so a stop during the connection's set-up is graceful too.
        let stop = StopSignals()

        let studio: StudioCamera
        do {
            studio = try StudioCamera(
                options: .init(device: device, format: cameraFormat, microphone: .init(argument: microphone),
                               agentLabel: target.agent ?? target.connect ?? "agent",
                               feedsDirectory: feedsDir ?? FeedStatusFile.defaultDirectory()),
                logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
        studio.start()
        FileHandle.standardOutput.write(Data((studio.readyLine + "\n").utf8))

        let (address, client) = try await target.resolve(logger: logger)
        var feed = AgentFeed(
            client: studio.clientConfiguration(client, codec: codec.flatMap(StudioCodecPreference.init(rawValue:)) ?? .agentDecides),
            address: address, logger: logger)
        feed.stallTimeoutNanos = UInt64(stallTimeout * 1e9)

        let window: PreviewWindow?
        do {
            window = preview ? try PreviewWindow(title: "Camo — \(target.agent ?? target.connect ?? "agent") → \(device)", logger: logger) : nil
        } catch {
            _ = studio.stop()
            FileHandle.standardError.write(Data("camo-studio: --preview: \(error)\n".utf8))
            throw ExitCode.failure
        }
        window?.onClose = { [weak window] in window?.close() }

        let running = Task {
            try await studio.run(feed) { frame, last, state in
                window?.show(frame, figures: PreviewFigures(
                    fps: last?.framesPerSecond ?? 0, kbitPerSecond: last?.kbitPerSecond, latencyMs: last?.latencyMs, state: state))
            }
        }
        let stopped = Task.detached {
            let signal = await stop.next()
            logger.notice("Stopping on \(signal == SIGTERM ? "SIGTERM" : "SIGINT")")
            running.cancel()
        }
        defer { window?.close() }
        do {
            try await running.value
        } catch {
            _ = studio.stop()
            FileHandle.standardError.write(Data("camo-studio: the agent refused this studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
        stopped.cancel()
        for line in studio.stop() { logger.notice("\(line)") }
    }
}
