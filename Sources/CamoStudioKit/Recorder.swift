import Foundation
import Logging
import NIOCore
import NIOPosix

/// What `camo-studio record` records.
public struct RecorderConfiguration: Sendable {
    /// The agent.
    public var address: HostPort
    /// Seconds of slot time to record, counted from the first frame (wall clock when no video comes).
    public var seconds: Double
    /// The output directory.
    public var outputDirectory: String
    /// Keep pixels in `video.bgra` (otherwise only a hash per frame in `video.json`).
    public var writeVideoFile: Bool
    /// Hello, identity and timers for the client.
    public var client: StudioClientConfiguration

    /// A configuration from its parts.
    public init(address: HostPort, seconds: Double, outputDirectory: String, writeVideoFile: Bool = true,
                client: StudioClientConfiguration) {
        self.address = address
        self.seconds = seconds
        self.outputDirectory = outputDirectory
        self.writeVideoFile = writeVideoFile
        self.client = client
    }
}

/// Connects to an agent, records video, audio and their timing for a number of seconds, closes
/// politely, and summarizes. See ``RecordingOutput`` for the files.
public struct Recorder: Sendable {
    /// How long to wait past the planned end, on the wall clock, before giving up on more frames.
    public static let graceSeconds: Double = 10

    /// What to record.
    public let configuration: RecorderConfiguration
    private let logger: Logger

    /// A recorder for `configuration`.
    public init(configuration: RecorderConfiguration, logger: Logger = Logger(label: "camo.studio.recorder")) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Records. Returns the summary after a complete recording; throws ``RecorderError`` otherwise
    /// (the files are still finished with whatever arrived).
    public func run(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws(RecorderError) -> RecordingSummary {
        guard configuration.seconds > 0, configuration.seconds.isFinite else {
            throw .output("seconds must be positive")
        }
        let client: StudioClient
        do {
            client = try await StudioClient.connect(
                host: configuration.address.host, port: configuration.address.port,
                configuration: configuration.client, group: group, logger: logger)
        } catch {
            throw .connection(error)
        }
        let agent = client.agent
        let output: RecordingOutput
        do {
            output = try RecordingOutput(directory: configuration.outputDirectory,
                                         writeVideoFile: configuration.writeVideoFile, codec: agent.codec, logger: logger)
        } catch {
            await client.close(reason: "the studio cannot write its recording")
            throw .output("cannot open the output in \(configuration.outputDirectory): \(error)")
        }

        let spanNanos = UInt64(configuration.seconds * 1e9)
        var deadline = Self.closeAfter(seconds: configuration.seconds, client: client, reason: "recording finished")
        var firstSlot: UInt64?
        var complete = false
        var ending: StudioCloseReason?
        var writeError: (any Error)?

        for await event in client.events {
            switch event {
            case .video(let frame):
                guard !complete, writeError == nil else { continue }
                if firstSlot == nil {
                    firstSlot = frame.slotTime
                    deadline.cancel()
                    deadline = Self.closeAfter(seconds: configuration.seconds + Self.graceSeconds, client: client,
                                               reason: "recording timed out")
                }
                // Slot times only grow; `firstSlot` is set just above.
                if frame.slotTime >= (firstSlot ?? frame.slotTime) + spanNanos {
                    complete = true
                    await client.close(reason: "recording finished")
                    continue
                }
                do { try output.add(frame) } catch {
                    writeError = error
                    await client.close(reason: "the studio cannot write its recording")
                }
            case .audio(let packet):
                guard !complete, writeError == nil else { continue }
                do { try output.add(packet) } catch {
                    writeError = error
                    await client.close(reason: "the studio cannot write its recording")
                }
            case .roundTrip(let nanoseconds):
                output.addRoundTrip(nanoseconds: nanoseconds)
            case .streamState(let state):
                logger.info("agent stream state: \(state)")
            case .stats(let stats):
                logger.debug("agent stats: sent \(stats.framesSent), dropped \(stats.framesDropped), repeated \(stats.framesRepeated)")
            case .peerError(let code, let reason):
                logger.info("agent error \(code): \(reason)")
            case .closed(let reason):
                ending = reason
            }
        }
        deadline.cancel()

        do {
            try output.finish(fallbackSize: (agent.width, agent.height))
        } catch {
            writeError = writeError ?? error
        }
        if let writeError {
            throw .output("cannot write the recording in \(configuration.outputDirectory): \(writeError)")
        }
        let reason = ending ?? .connectionLost("the event stream ended")
        // A close this studio asked for ends a recording normally: the span was covered, or no video came
        // within the wall-clock span, or the grace period ran out.
        if !complete && reason != .requested {
            throw .sessionEnded(reason)
        }
        if !complete && firstSlot != nil {
            logger.warning("frames stopped before \(configuration.seconds) s of slot time were covered; the recording is short")
        }
        return RecordingSummary(
            statistics: output.statistics, avOffsetMs: output.avSync.offsetMs, seconds: configuration.seconds,
            agentName: agent.agentName, codec: agent.codec.rawValue, width: agent.width, height: agent.height)
    }

    /// A task that closes `client` after `seconds` unless cancelled first.
    private static func closeAfter(seconds: Double, client: StudioClient, reason: String) -> Task<Void, Never> {
        Task {
            do {
                try await Task.sleep(for: .seconds(seconds))
            } catch {
                return
            }
            await client.close(reason: reason)
        }
    }
}
