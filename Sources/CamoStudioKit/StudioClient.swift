import CamoWire
import Logging
import NIOCore
import NIOPosix

/// A connection from this studio to one agent: TCP, the cleartext preamble, a Noise handshake as
/// initiator (XX, KK or XXpsk3, as ``StudioClientConfiguration/handshake`` says), the hello exchange, then a
/// stream of ``StudioEvent``s.
///
/// Unpaired XX is what an agent accepts from loopback with `--allow-unpaired`; KK is for paired agents. The client answers
/// pings, pings every second itself (round trips arrive as ``StudioEvent/roundTrip(nanoseconds:)``),
/// and closes with a keepalive timeout when nothing arrives for 10 s.
///
/// ```swift
/// let client = try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: config)
/// for await event in client.events { ... }
/// ```
/// A consumer that falls behind makes the client stop reading (see ``StudioEventStream``).
public final class StudioClient: Sendable {
    /// The agent, from its hello.
    public let agent: AgentInfo
    /// Events in arrival order; ends after ``StudioEvent/closed(_:)``.
    public let events: StudioEventStream
    private let channel: any Channel

    private init(agent: AgentInfo, events: StudioEventStream, channel: any Channel) {
        self.agent = agent
        self.events = events
        self.channel = channel
    }

    /// Connects, handshakes and exchanges hellos; returns once the agent's hello has arrived.
    ///
    /// - Throws: ``StudioClientError/agentRefused(code:reason:)`` when the agent refuses before the
    ///   handshake completes, ``StudioClientError/connectFailed(_:)`` when TCP fails,
    ///   ``StudioClientError/handshakeTimeout`` and ``StudioClientError/sessionEnded(_:)`` otherwise.
    public static func connect(
        host: String, port: Int, configuration: StudioClientConfiguration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "camo.studio.client")
    ) async throws(StudioClientError) -> StudioClient {
        try configuration.validate()
        let (stream, continuation) = AsyncStream<StudioEvent>.makeStream()
        let backlog = EventBacklog(highWater: configuration.backlogHighWaterBytes,
                                   lowWater: configuration.backlogLowWaterBytes)
        let events = StudioEventStream(stream: stream, backlog: backlog)
        let eventLoop = group.next()
        let hello = eventLoop.makePromise(of: AgentInfo.self)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.nanoseconds(Int64(configuration.connectTimeoutNanos ?? configuration.handshakeTimeoutNanos)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StudioClientHandler(
                        configuration: configuration, continuation: continuation, backlog: backlog, hello: hello,
                        logger: logger))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            hello.fail(error)
            continuation.finish()
            throw .connectFailed("\(host):\(port): \(error)")
        }
        // A consumer that stops listening (drops or cancels the stream) ends the session.
        continuation.onTermination = { _ in channel.close(promise: nil) }
        do {
            let agent = try await hello.futureResult.get()
            logger.info("connected to \(agent.agentName) (\(agent.model), \(agent.softwareVersion)): \(agent.width)x\(agent.height) \(agent.codec), \(agent.audioSamplesRequired) samples per packet")
            return StudioClient(agent: agent, events: events, channel: channel)
        } catch let error as StudioClientError {
            channel.close(promise: nil)
            throw error
        } catch {
            channel.close(promise: nil)
            throw .sessionEnded(.connectionLost("\(error)"))
        }
    }

    /// Asks for audio packets of `sampleFrames` frames (64...48000), effective at the agent's next packet boundary.
    public func setAudioSamples(_ sampleFrames: Int) async throws(StudioClientError) {
        guard (64...48_000).contains(sampleFrames) else {
            throw .invalidArgument("audio samples must be 64...48000, got \(sampleFrames)")
        }
        try await send(.send(.setAudioSamples(UInt32(sampleFrames))))
    }

    /// Asks the agent to pause this session.
    public func pause() async throws(StudioClientError) {
        try await send(.send(.pauseRequest(true)))
    }

    /// Asks the agent to resume this session.
    public func resume() async throws(StudioClientError) {
        try await send(.send(.pauseRequest(false)))
    }

    /// Asks for the agent's whole settings model; it arrives as ``StudioEvent/settings(_:)`` (protocol 1.2:
    /// ``AgentInfo/capabilities`` contains `.settings`).
    public func requestSettings() async throws(StudioClientError) {
        try await send(.send(.settingsRequest))
    }

    /// Writes settings; the outcome arrives as ``StudioEvent/settingsResult(_:)`` with `requestId`, and every
    /// studio (this one too) gets the change as ``StudioEvent/settings(_:)``.
    public func writeSettings(_ values: [String: SettingValue], requestId: UInt32) async throws(StudioClientError) {
        guard !values.isEmpty, values.count <= SettingsWrite.maxValues else {
            throw .invalidArgument("a settings write sets 1...\(SettingsWrite.maxValues) settings, got \(values.count)")
        }
        try await send(.send(.settingsWrite(SettingsWrite(requestId: requestId, values: values))))
    }

    /// Asks for the camera's events from now on (with `replay`, the ones the agent kept first); each arrives as
    /// ``StudioEvent/cameraEvent(_:)`` (protocol 1.3: ``AgentInfo/capabilities`` contains `.events`).
    public func requestEvents(replay: Bool = false) async throws(StudioClientError) {
        try await send(.send(.eventsRequest(replay: replay)))
    }

    /// Connects for a session without media (protocol 1.2's settings-only purpose, no video decoding): what the
    /// settings, events and recordings commands use.
    public static func connectWithoutMedia(
        host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger
    ) async throws(StudioClientError) -> StudioClient {
        var configuration = configuration
        configuration.purpose = .settingsOnly
        configuration.decodeVideo = false
        return try await connect(host: host, port: port, configuration: configuration, logger: logger)
    }

    /// Asks for a page of the agent's recordings older than `before` (0: from the newest); it arrives as
    /// ``StudioEvent/clipList(_:)`` (protocol 1.4: ``AgentInfo/capabilities`` contains `.clips`).
    public func requestClipList(before: UInt64 = 0) async throws(StudioClientError) {
        try await send(.send(.clipListRequest(before: before)))
    }

    /// Asks for a piece of a recording; it arrives as ``StudioEvent/clipData(_:)`` (protocol 1.4).
    public func fetchClip(_ fetch: ClipFetch) async throws(StudioClientError) {
        guard (1...ClipFetch.maxLength).contains(fetch.length) else {
            throw .invalidArgument("a clip piece is 1...\(ClipFetch.maxLength) bytes, got \(fetch.length)")
        }
        try await send(.send(.clipFetch(fetch)))
    }

    /// Says goodbye and closes; returns when the connection is closed. Safe to call more than once.
    public func close(reason: String = "the studio closed the session") async {
        try? await channel.triggerUserOutboundEvent(StudioCommand.goodbye(reason: reason)).get()
        try? await channel.closeFuture.get()
    }

    private func send(_ command: StudioCommand) async throws(StudioClientError) {
        do {
            try await channel.triggerUserOutboundEvent(command).get()
        } catch let error as StudioClientError {
            throw error
        } catch {
            throw .sessionEnded(.connectionLost("\(error)"))
        }
    }
}
