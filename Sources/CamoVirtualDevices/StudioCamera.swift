import CamoMedia
import CamoStudioKit
import Foundation
import Logging
import Synchronization

/// `camo-studio camera` assembled: an ``AgentFeed`` that lasts, the ``VirtualCamera`` it writes to, the
/// ``VirtualMicrophone`` it plays into (with the picture held back so the two stay in step), the figures, and the
/// status file `camo-studio status` reads. The command only parses its arguments, prints and waits for a signal.
public final class StudioCamera: Sendable {
    /// Which microphone to feed.
    public enum MicrophoneChoice: Sendable, Equatable {
        /// None.
        case none
        /// A PipeWire source where PipeWire runs for this user, else snd-aloop's CamoMic card when it is loaded,
        /// else none (said in the log).
        case auto
        /// A PipeWire source named after the agent (an error when PipeWire does not run).
        case pipeWire
        /// This ALSA playback device.
        case device(String)

        /// `none`, `auto`, `pipewire` or an ALSA device name.
        public init(argument: String) {
            switch argument {
            case "none": self = .none
            case "auto": self = .auto
            case "pipewire": self = .pipeWire
            default: self = .device(argument)
            }
        }
    }

    /// What to feed.
    public struct Options: Sendable {
        /// The v4l2loopback device.
        public var device: String
        /// Its format.
        public var format: VirtualCameraFormat
        /// The microphone.
        public var microphone: MicrophoneChoice
        /// The agent's name as shown until it says its own.
        public var agentLabel: String
        /// Where the status file goes.
        public var feedsDirectory: String

        /// Options with these values.
        public init(device: String, format: VirtualCameraFormat, microphone: MicrophoneChoice, agentLabel: String,
                    feedsDirectory: String = FeedStatusFile.defaultDirectory()) {
            self.device = device
            self.format = format
            self.microphone = microphone
            self.agentLabel = agentLabel
            self.feedsDirectory = feedsDirectory
        }
    }

    /// The agent's audio packets are asked for in 10 ms (480 frames): the smaller the packet, the less the
    /// microphone buffers, and the less the picture is held back to stay in step with it.
    public static let audioPacketFrames = 480

    /// The virtual camera.
    public let camera: VirtualCamera
    /// The virtual microphone, when there is one.
    public let microphone: VirtualMicrophone?
    /// The device other programs record the microphone from: `hw:CamoMic,1,0`, or `pipewire:camo-kitchen` (the
    /// PipeWire source's node name).
    public let microphoneCapture: String?
    private let options: Options
    private let logger: Logger
    private let figures = Mutex(FeedFigures())
    private let shown: Mutex<FeedStatus>
    private let status: FeedStatusFile

    /// Opens the devices (nothing is written yet): a device that cannot be fed is refused here, with a sentence.
    public init(options: Options, logger: Logger) throws(VirtualDeviceError) {
        self.options = options
        self.logger = logger
        camera = try VirtualCamera(device: options.device, format: options.format, logger: logger)
        do {
            switch options.microphone {
            case .none:
                (microphone, microphoneCapture) = (nil, nil)
            case .pipeWire:
                (microphone, microphoneCapture) = try Self.pipeWireMicrophone(options, logger: logger)
            case .auto:
                var made: (VirtualMicrophone, String)?
                if VirtualMicrophone.pipeWireMayRun {
                    do {
                        made = try Self.pipeWireMicrophone(options, logger: logger)
                    } catch {
                        logger.notice("PipeWire's socket is there but its source could not be made; trying snd-aloop", metadata: ["error": "\(error)"])
                    }
                }
                if let made {
                    (microphone, microphoneCapture) = made
                } else if let card = VirtualMicrophone.loopbackCard() {
                    microphone = try VirtualMicrophone(alsaDevice: card.playbackDevice, packetFrames: Self.audioPacketFrames, logger: logger)
                    microphoneCapture = card.captureDevice
                } else {
                    logger.notice("No virtual microphone: PipeWire does not run for this user and snd-aloop's CamoMic card is not loaded (`sudo camo-studio setup` loads it)")
                    (microphone, microphoneCapture) = (nil, nil)
                }
            case .device(let name):
                microphone = try VirtualMicrophone(alsaDevice: name, packetFrames: Self.audioPacketFrames, logger: logger)
                microphoneCapture = LoopbackSoundCard.otherEnd(of: name)
            }
        } catch {
            camera.stop()
            throw error
        }
        status = FeedStatusFile(directory: options.feedsDirectory)
        shown = Mutex(FeedStatus(agentName: options.agentLabel, state: .connecting, videoDevice: options.device,
                                 videoFormat: options.format.description, microphoneDevice: microphoneCapture))
    }

    /// A PipeWire source named after the agent.
    private static func pipeWireMicrophone(_ options: Options, logger: Logger) throws(VirtualDeviceError) -> (VirtualMicrophone, String) {
        let node = VirtualMicrophone.pipeWireNodeName(agent: options.agentLabel)
        let microphone = try VirtualMicrophone(pipeWireNode: node, description: "Camo: \(options.agentLabel)",
                                               packetFrames: audioPacketFrames, logger: logger)
        return (microphone, "pipewire:\(node)")
    }

    /// The line printed once the devices are fed: `device=PATH format="…" card=LABEL microphone=DEVICE|none`.
    public var readyLine: String {
        "device=\(options.device) format=\"\(options.format)\" card=\(camera.card ?? "") microphone=\(microphoneCapture ?? "none")"
    }

    /// The studio's settings for the feed: the camera's size, and the microphone's packet size.
    public func clientConfiguration(_ base: StudioClientConfiguration, codec: StudioCodecPreference) -> StudioClientConfiguration {
        var configuration = base
        configuration.preferredWidth = options.format.size.width
        configuration.preferredHeight = options.format.size.height
        configuration.codec = codec
        configuration.audioSamplesRequired = Self.audioPacketFrames
        return configuration
    }

    /// Starts writing (the filler picture and silence at once).
    public func start() {
        camera.start()
        microphone?.start()
    }

    /// Feeds the devices from `feed` until the task is cancelled (returns) or the agent refuses for good
    /// (throws). `onFrame` sees every decoded frame with the latest figures and the feed's state (the preview).
    public func run(_ feed: AgentFeed, onFrame: (@Sendable (VideoFrame, FeedFigures.Snapshot?, String) -> Void)? = nil) async throws(StudioClientError) {
        let reporter = Task.detached { [self] in
            while !Task.isCancelled {
                writeStatus()
                try? await Task.sleep(for: .seconds(1))
            }
        }
        defer {
            reporter.cancel()
            status.remove()
        }
        try await feed.run { [self] event in handle(event, onFrame: onFrame) }
    }

    /// Stops writing and closes the devices; returns the closing lines for the log.
    public func stop() -> [String] {
        camera.stop()
        microphone?.stop()
        let statistics = camera.statistics
        var lines = ["Stopped: \(statistics.framesWritten) frames and \(statistics.fillerWritten) RECONNECTING frames written to \(options.device)"]
        if let sound = microphone?.statistics {
            let drift = sound.driftPPM.map { String(format: "%+.1f ppm over %.0f s", $0, sound.driftSpanSeconds) } ?? "not measured yet (under 20 s)"
            lines.append("Microphone: \(sound.counters.playedFrames) frames played into \(sound.device), clock drift \(drift), mean correction \(String(format: "%+.1f", sound.meanCorrectionPPM)) ppm, \(sound.counters.underruns) underruns (buffer now \(String(format: "%.0f", sound.targetMilliseconds)) ms), \(sound.counters.trimmedFrames) frames trimmed, \(sound.xruns) device underruns")
        }
        return lines
    }

    private func handle(_ event: AgentFeedEvent, onFrame: (@Sendable (VideoFrame, FeedFigures.Snapshot?, String) -> Void)?) {
        switch event {
        case .connected(let agent, let address):
            shown.withLock {
                $0.agentName = agent.agentName
                $0.address = address.description
                if $0.state != .connecting { $0.reconnects += 1 }
                $0.state = .streaming
            }
            logger.notice("Feeding \(agent.agentName) from \(address) to \(options.device): \(agent.width)x\(agent.height) \(agent.codec)")
            // The source was named from what the command was given; its description now says the agent's own name.
            if !agent.agentName.isEmpty { microphone?.describe(as: "Camo: \(agent.agentName)") }
            figures.withLock { $0.beginSession() }
        case .lost(let why):
            logger.notice("The agent went away (\(why)); showing RECONNECTING until it is back")
            camera.sessionLost()
            microphone?.sessionLost()
        case .session(.audio(let packet)):
            microphone?.receive(packet)
        case .session(.video(let frame)):
            let last = figures.withLock { figures -> FeedFigures.Snapshot? in
                figures.frame(bytes: frame.encodedByteCount, captureTime: frame.captureTime, receivedAt: frame.receivedAt,
                              isNew: !frame.isRepeat && !frame.isSkipped)
                return figures.last
            }
            camera.show(frame.frame, holdNanos: microphone.map { Self.hold(frame, behind: $0) } ?? 0)
            onFrame?(frame.frame, last, camera.statistics.state.rawValue)
        case .session(.clockSample(let offset, let roundTrip)):
            figures.withLock { $0.clockSample(offsetNanos: offset, roundTripNanos: roundTrip) }
        case .session:
            break
        }
    }

    /// How long to hold `frame` back so it reaches the device when its sound reaches the microphone: the sound's lag
    /// (capture to the consumer) minus the picture's so far; both are (studio clock − agent clock), so the clocks'
    /// offset cancels. Nothing while the microphone is not playing the agent's sound; at most half a second.
    static func hold(_ frame: ReceivedVideoFrame, behind mic: VirtualMicrophone, now: UInt64 = SystemMonotonicClock().now.nanoseconds) -> UInt64 {
        guard mic.isPlaying, let audioLag = mic.presentationLagNanos else { return 0 }
        let videoLag = Int64(bitPattern: now &- frame.captureTime)
        return UInt64(max(0, min(500_000_000, audioLag - videoLag)))
    }

    private func writeStatus() {
        let snapshot = figures.withLock { figures -> FeedFigures.Snapshot? in
            figures.roll(now: SystemMonotonicClock().now.nanoseconds)
            return figures.last
        }
        let statistics = camera.statistics
        let sound = microphone?.statistics
        let current = shown.withLock { status -> FeedStatus in
            status.state = FeedStatus.State(rawValue: statistics.state.rawValue) ?? .connecting
            status.framesWritten = Int(statistics.framesWritten)
            status.reconnectingFramesWritten = Int(statistics.fillerWritten)
            status.microphoneDriftPPM = sound?.driftPPM
            status.microphoneBufferMilliseconds = sound?.targetMilliseconds
            status.microphoneUnderruns = sound?.counters.underruns
            status.last = snapshot.map { FeedStatus.Figures(framesPerSecond: $0.framesPerSecond, kilobitsPerSecond: $0.kbitPerSecond, latencyMilliseconds: $0.latencyMs) }
            status.updatedAt = Date()
            return status
        }
        do { try status.write(current) } catch { logger.debug("cannot write the feed status: \(error)") }
    }
}
