import ArgumentParser
import CamoMedia
import CamoPreview
import CamoStudioKit
import CamoCommandLine
import CamoVirtualDevices
import Dispatch
import Foundation
import Logging
import Synchronization

/// `camo-studio camera`: the agent's picture as a v4l2loopback webcam (and its sound as a capture device), kept
/// fed while the agent comes and goes.
struct Camera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Feed an agent's picture to a virtual webcam (v4l2loopback) that any program can choose.",
        discussion: """
            Load the loopback device first with `sudo camo-studio setup`. The device keeps its format while the agent \
            is away (a restart, a Wi-Fi drop, a cable pulled): it shows the last picture dimmed with RECONNECTING, and \
            the agent's frames again as soon as it is back. Prints one line when the device is fed: \
            device=PATH format="YUYV 1280x720 at 30 fps" card=LABEL microphone=DEVICE. The agent's sound is played into \
            snd-aloop (loaded by setup as CamoMic); other programs record it from the loopback's other end, \
            hw:CamoMic,1,0 (the microphone=DEVICE printed), its clock held to the device's, and the picture held back \
            as long as the sound takes so the two stay in step. Stops on SIGINT or SIGTERM.
            """)

    @OptionGroup var target: SessionTarget
    @Option(help: "The v4l2loopback device to write to.") var device = "/dev/video10"
    @Option(help: "The pixel format offered: yuyv or i420.") var format = "yuyv"
    @Option(help: "The size offered, WxH (the agent is asked for it; other sizes are scaled).") var size = "1280x720"
    @Option(help: "Codec to ask the agent for: bgra, jpeg or h264 (default: the agent decides).") var codec: String?
    @Option(help: "Seconds of silence from a streaming agent that count as a dead link (then it reconnects).")
    var stallTimeout: Double = 2
    @Option(help: "The virtual microphone: auto (snd-aloop's CamoMic card when it is loaded), none, or the ALSA device to play into (e.g. hw:CamoMic,0,0).")
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

        let camera: VirtualCamera
        do {
            camera = try VirtualCamera(device: device, format: cameraFormat, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
        let mic: VirtualMicrophone?
        let micCapture: String?
        do {
            (mic, micCapture) = try openMicrophone(logger: logger)
        } catch {
            camera.stop()
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
        camera.start()
        mic?.start()
        FileHandle.standardOutput.write(Data("device=\(device) format=\"\(cameraFormat)\" card=\(camera.card ?? "") microphone=\(micCapture ?? "none")\n".utf8))

        let (address, client) = try await target.resolve(logger: logger)
        var configuration = client
        configuration.preferredWidth = cameraFormat.size.width
        configuration.preferredHeight = cameraFormat.size.height
        configuration.codec = codec.flatMap(StudioCodecPreference.init(rawValue:)) ?? .agentDecides
        configuration.audioSamplesRequired = Self.audioPacketFrames
        var feed = AgentFeed(client: configuration, address: address, logger: logger)
        feed.stallTimeoutNanos = UInt64(stallTimeout * 1e9)

        let window: PreviewWindow?
        do {
            window = preview ? try PreviewWindow(title: "Camo — \(target.agent ?? target.connect ?? "agent") → \(device)", logger: logger) : nil
        } catch {
            camera.stop()
            FileHandle.standardError.write(Data("camo-studio: --preview: \(error)\n".utf8))
            throw ExitCode.failure
        }
        window?.onClose = { [weak window] in window?.close() }

        let status = FeedStatusFile(directory: feedsDir ?? FeedStatusFile.defaultDirectory())
        let live = LiveFeed(FeedStatus(
            agentName: target.agent ?? target.connect ?? "agent", address: address.description, state: .connecting,
            videoDevice: device, videoFormat: cameraFormat.description, microphoneDevice: micCapture))
        let reporter = Task.detached {
            while !Task.isCancelled {
                let snapshot = live.figures.withLock { figures -> FeedFigures.Snapshot? in
                    figures.roll(now: SystemMonotonicClock().now.nanoseconds)
                    return figures.last
                }
                let statistics = camera.statistics
                let current = live.shown.withLock { status -> FeedStatus in
                    status.state = FeedStatus.State(rawValue: statistics.state.rawValue) ?? .connecting
                    status.framesWritten = Int(statistics.framesWritten)
                    status.reconnectingFramesWritten = Int(statistics.fillerWritten)
                    status.last = snapshot.map { FeedStatus.Figures(framesPerSecond: $0.framesPerSecond, kilobitsPerSecond: $0.kbitPerSecond, latencyMilliseconds: $0.latencyMs) }
                    status.microphoneDriftPPM = mic?.statistics.driftPPM
                    status.updatedAt = Date()
                    return status
                }
                do { try status.write(current) } catch { logger.debug("cannot write the feed status: \(error)") }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        let running = Task {
            try await feed.run { event in
                switch event {
                case .connected(let agent, let address):
                    live.shown.withLock {
                        $0.agentName = agent.agentName
                        $0.address = address.description
                        if $0.state != .connecting { $0.reconnects += 1 }
                        $0.state = .streaming
                    }
                    logger.notice("Feeding \(agent.agentName) from \(address) to \(device): \(agent.width)x\(agent.height) \(agent.codec)")
                    live.figures.withLock { $0.beginSession() }
                case .lost(let why):
                    logger.notice("The agent went away (\(why)); showing RECONNECTING until it is back")
                    camera.sessionLost()
                    mic?.sessionLost()
                case .session(.audio(let packet)):
                    mic?.receive(packet)
                case .session(.video(let frame)):
                    live.figures.withLock {
                        $0.frame(bytes: frame.encodedByteCount, captureTime: frame.captureTime, receivedAt: frame.receivedAt,
                                 isNew: !frame.isRepeat && !frame.isSkipped)
                    }
                    camera.show(frame.frame, holdNanos: mic.map { Self.hold(frame, behind: $0) } ?? 0)
                    if let window {
                        let last = live.figures.withLock { $0.last }
                        window.show(frame.frame, figures: PreviewFigures(
                            fps: last?.framesPerSecond ?? 0, kbitPerSecond: last?.kbitPerSecond, latencyMs: last?.latencyMs,
                            state: camera.statistics.state.rawValue))
                    }
                case .session(.clockSample(let offset, let roundTrip)):
                    live.figures.withLock { $0.clockSample(offsetNanos: offset, roundTripNanos: roundTrip) }
                case .session:
                    break
                }
            }
        }
        let stopped = Task.detached {
            let signal = await stop.next()
            logger.notice("Stopping on \(signal == SIGTERM ? "SIGTERM" : "SIGINT")")
            running.cancel()
        }
        defer {
            reporter.cancel()
            status.remove()
            window?.close()
        }
        do {
            try await running.value
        } catch {
            camera.stop()
            FileHandle.standardError.write(Data("camo-studio: the agent refused this studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
        stopped.cancel()
        camera.stop()
        mic?.stop()
        let statistics = camera.statistics
        logger.notice("Stopped: \(statistics.framesWritten) frames and \(statistics.fillerWritten) RECONNECTING frames written to \(device)")
        if let sound = mic?.statistics {
            logger.notice("Microphone: \(sound.counters.playedFrames) frames played into \(sound.device), drift \(String(format: "%+.1f", sound.driftPPM)) ppm, \(sound.counters.underruns) underruns, \(sound.counters.trimmedFrames) frames trimmed, \(sound.xruns) device underruns")
        }
    }

    /// The agent's audio packets are asked for in 10 ms (480 frames): the smaller the packet, the less the
    /// microphone buffers, and the less the picture is held back to stay in step with it.
    static let audioPacketFrames = 480

    /// The microphone `--microphone` names, opened, and the device other programs record from.
    private func openMicrophone(logger: Logger) throws -> (VirtualMicrophone?, String?) {
        switch microphone {
        case "none":
            return (nil, nil)
        case "auto":
            guard let card = VirtualMicrophone.loopbackCard() else {
                logger.notice("No virtual microphone: snd-aloop's CamoMic card is not loaded (`sudo camo-studio setup` loads it)")
                return (nil, nil)
            }
            let mic = try VirtualMicrophone(alsaDevice: card.playbackDevice, packetFrames: Self.audioPacketFrames, logger: logger)
            return (mic, card.captureDevice)
        default:
            let mic = try VirtualMicrophone(alsaDevice: microphone, packetFrames: Self.audioPacketFrames, logger: logger)
            return (mic, LoopbackSoundCard.otherEnd(of: microphone))
        }
    }

    /// How long to hold `frame` back so it reaches the device when its sound reaches the microphone: the sound's lag
    /// (capture to the consumer) minus the picture's so far; both are (studio clock − agent clock), so the clocks'
    /// offset cancels. Nothing while the microphone is not playing the agent's sound; at most half a second.
    static func hold(_ frame: ReceivedVideoFrame, behind mic: VirtualMicrophone) -> UInt64 {
        guard mic.statistics.state == .playing, let audioLag = mic.presentationLagNanos else { return 0 }
        let videoLag = Int64(bitPattern: SystemMonotonicClock().now.nanoseconds &- frame.captureTime)
        return UInt64(max(0, min(500_000_000, audioLag - videoLag)))
    }
}

/// What `camera` shares between the session, the status writer and the preview.
final class LiveFeed: Sendable {
    let figures = Mutex(FeedFigures())
    let shown: Mutex<FeedStatus>
    init(_ status: FeedStatus) { shown = Mutex(status) }
}
