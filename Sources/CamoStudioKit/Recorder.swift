import Foundation
import Logging
import NIOCore
import NIOPosix

/// What `camo-studio record` records.
public struct RecorderConfiguration: Sendable {
    /// The agent: where the first session goes.
    public var address: HostPort
    /// Seconds of slot time to record, counted from the first frame (wall clock when no video comes).
    public var seconds: Double
    /// The output directory.
    public var outputDirectory: String
    /// Keep pixels in `video.bgra` (otherwise only a hash per frame in `video.json`).
    public var writeVideoFile: Bool
    /// Hello, identity and timers for the client.
    public var client: StudioClientConfiguration
    /// Reconnect when the session is lost before the span is covered (default true); see ``Recorder``.
    public var reconnect = true
    /// With ``reconnect``: while streaming and not paused, nothing at all from the agent for this long is a
    /// dead link, and the recorder reconnects (default 2 s; the agent sends 30 fps and a keepalive a second).
    public var stallTimeoutNanos: UInt64 = 2_000_000_000
    /// With ``reconnect``: the TCP connect timeout of each attempt (default 1 s).
    public var reconnectConnectTimeoutNanos: UInt64 = 1_000_000_000
    /// With ``reconnect``: the least time from the start of one round of attempts to the next (default 250 ms).
    public var reconnectRoundNanos: UInt64 = 250_000_000
    /// With ``reconnect``: where the agent can be reached now, best first, asked before each round (for an
    /// agent found with mDNS, a fresh lookup: its USB address, then its network addresses). Nil: ``address``.
    public var candidates: (@Sendable () async -> [HostPort])?
    /// Called about once a second of the recording's clock with the figures so far (`record --stats`).
    public var onStats: (@Sendable (RecordingProgress) -> Void)?

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
///
/// **Reconnection.** When the session is lost before the span is covered (the connection ends or is reset, the
/// agent closes it, or a media stall: nothing at all from the agent for
/// ``RecorderConfiguration/stallTimeoutNanos`` while streaming), the recorder asks
/// ``RecorderConfiguration/candidates`` where the agent is and tries each address in turn (TCP connect timeout
/// ``RecorderConfiguration/reconnectConnectTimeoutNanos``), in rounds at least
/// ``RecorderConfiguration/reconnectRoundNanos`` apart, until the span would be covered on the wall clock (the
/// first frame's arrival plus the seconds; before any frame, the start plus the seconds). Frames and audio of the
/// new session go into the same files; the slot-time span stays counted from the very first frame. A refusal
/// that trying again will not change (``ReconnectPolicy/permanentCodes``) and a close this studio asked for end
/// the recording as they would without reconnection; so does failing to reconnect in time. The first connection
/// is not retried. Only the same agent (the same static key) is accepted on a new session.
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
        let spanNanos = UInt64(configuration.seconds * 1e9)
        let graceNanos = UInt64(Self.graceSeconds * 1e9)
        let startedAt = self.now()
        var client: StudioClient
        do {
            client = try await StudioClient.connect(
                host: configuration.address.host, port: configuration.address.port,
                configuration: sessionConfiguration(connectTimeoutNanos: nil), group: group, logger: logger)
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

        var log = ReconnectLog()
        log.established(configuration.address)
        var timeline = AgentTimeline()
        var boundary = SessionBoundary()
        // Before the first frame the studio ends the session after the seconds on the wall clock (no video came);
        // after it, a grace period past the span. Reconnecting is worth it until the span would be covered.
        var closeAt = startedAt + spanNanos
        var closeReason = "recording finished"
        var reconnectUntil = startedAt + spanNanos
        var lastMediaAt = startedAt
        var firstSlot: UInt64?
        var complete = false
        var ending: StudioCloseReason = .connectionLost("the event stream ended")
        var writeError: (any Error)?
        var failure: RecorderError?

        sessions: while true {
            var deadline = close(client, at: closeAt, reason: closeReason)
            var sessionEnding: StudioCloseReason?
            for await event in client.events {
                switch event {
                case .video(var frame):
                    let now = self.now()
                    log.media(at: now)
                    guard !complete, writeError == nil else { continue }
                    let since = now >= lastMediaAt ? now - lastMediaAt : 0
                    frame.slotTime = timeline.adjust(frame.slotTime, wallNanosSinceLatest: since)
                    let rawCapture = frame.captureTime
                    frame.captureTime = timeline.adjust(frame.captureTime, wallNanosSinceLatest: since)
                    // Receipt and decode times move with the capture time, so their differences (the latencies)
                    // stay those of the session they were measured in.
                    let shift = frame.captureTime &- rawCapture
                    if frame.receivedAt > 0 { frame.receivedAt &+= shift }
                    if frame.decodedAt > 0 { frame.decodedAt &+= shift }
                    frame.frame.captureTime = frame.captureTime
                    lastMediaAt = now
                    if firstSlot == nil {
                        firstSlot = frame.slotTime
                        closeAt = now + spanNanos + graceNanos
                        closeReason = "recording timed out"
                        reconnectUntil = now + spanNanos
                        deadline.cancel()
                        deadline = close(client, at: closeAt, reason: closeReason)
                    }
                    // Slot times only grow; `firstSlot` is set just above.
                    let spanEnd = (firstSlot ?? frame.slotTime) + spanNanos
                    if frame.slotTime >= spanEnd {
                        boundary.noteSpanEnd(frame, spanEnd: spanEnd, to: output)
                        complete = true
                        await client.close(reason: "recording finished")
                        continue
                    }
                    do { try boundary.add(frame, to: output) } catch {
                        writeError = error
                        await client.close(reason: "the studio cannot write its recording")
                    }
                case .audio(var packet):
                    let now = self.now()
                    log.media(at: now)
                    guard !complete, writeError == nil else { continue }
                    packet.firstSampleTime = timeline.adjust(
                        packet.firstSampleTime, wallNanosSinceLatest: now >= lastMediaAt ? now - lastMediaAt : 0)
                    lastMediaAt = now
                    do { try output.add(packet) } catch {
                        writeError = error
                        await client.close(reason: "the studio cannot write its recording")
                    }
                case .roundTrip(let nanoseconds):
                    output.addRoundTrip(nanoseconds: nanoseconds)
                case .clockSample(let offset, let roundTrip):
                    output.addClockSample(offsetNanos: offset, roundTripNanos: roundTrip)
                case .keyframeRequested(let reason):
                    output.noteKeyframeRequest()
                    logger.debug("asked the agent for a keyframe (\(reason))")
                case .streamState(let state):
                    logger.info("agent stream state: \(state)")
                case .stats(let stats):
                    output.addAgentStats(stats, now: self.now())
                    if let onStats = configuration.onStats {
                        onStats(RecordingProgress(seconds: Double(self.now() &- startedAt) / 1e9, statistics: output.statistics,
                                                  transport: output.transport.summary, agent: stats))
                    }
                    logger.debug("agent stats: sent \(stats.framesSent), dropped \(stats.framesDropped), repeated \(stats.framesRepeated)")
                case .settings(let snapshot):
                    logger.info("agent settings \(snapshot.reason == .change ? "changed by \(snapshot.changedBy ?? "?")" : "received"): \(snapshot.settings.map { "\($0.name)=\($0.value.map { "\($0)" } ?? "-")" }.joined(separator: " "))")
                case .settingsResult, .clipList, .clipData:
                    break  // a recording asks for neither
                case .cameraEvent(let event):
                    logger.info("camera event: \(event.summary)")
                case .peerError(let code, let reason):
                    logger.info("agent error \(code): \(reason)")
                case .closed(let reason):
                    sessionEnding = reason
                }
            }
            deadline.cancel()
            ending = sessionEnding ?? .connectionLost("the event stream ended")
            guard !complete, writeError == nil, configuration.reconnect, ReconnectPolicy.shouldReconnect(after: ending) else {
                break sessions
            }

            let lostAt = self.now()
            log.lost(at: lostAt)
            logger.notice("the session at \(log.addresses.last.map(\.description) ?? "?") was lost (\(ending)); reconnecting")
            let schedule = ReconnectSchedule(
                deadline: reconnectUntil, connectTimeoutNanos: configuration.reconnectConnectTimeoutNanos,
                roundIntervalNanos: configuration.reconnectRoundNanos)
            switch await reconnect(schedule: schedule, agent: agent, group: group) {
            case .connected(let next, let address):
                client = next
                log.established(address)
                timeline.beginSession()
                boundary.beginSession()
                output.beginSession()
                logger.notice("reconnected to \(address) \((self.now() - lostAt) / 1_000_000) ms after the loss")
                if next.agent.width != agent.width || next.agent.height != agent.height || next.agent.codec != agent.codec {
                    logger.warning("the new session sends \(next.agent.width)x\(next.agent.height) \(next.agent.codec), the first sent \(agent.width)x\(agent.height) \(agent.codec)")
                }
            case .refused(let error):
                logger.notice("reconnecting was refused: \(error)")
                failure = .connection(error)
                break sessions
            case .gaveUp(let lastAttempt):
                let lost = if case .connectionLost(let why) = ending { why } else { ending.description }
                ending = .connectionLost("\(lost); not reconnected before the end of the recording (last attempt: \(lastAttempt))")
                break sessions
            }
        }

        do {
            try output.finish(fallbackSize: (agent.width, agent.height))
        } catch {
            writeError = writeError ?? error
        }
        if let writeError {
            throw .output("cannot write the recording in \(configuration.outputDirectory): \(writeError)")
        }
        if let failure { throw failure }
        // A close this studio asked for ends a recording normally: the span was covered, or no video came
        // within the wall-clock span, or the grace period ran out.
        if !complete && ending != .requested {
            throw .sessionEnded(ending)
        }
        if !complete && firstSlot != nil {
            logger.warning("frames stopped before \(configuration.seconds) s of slot time were covered; the recording is short")
        }
        var summary = RecordingSummary(
            statistics: output.statistics, avOffsetMs: output.avSync.offsetMs, seconds: configuration.seconds,
            agentName: agent.agentName, codec: agent.codec.rawValue, width: agent.width, height: agent.height)
        summary.dropped -= boundary.dropped
        summary.sourceGaps -= boundary.sourceGaps
        summary.sourceDuplicates -= boundary.sourceDuplicates
        summary.reconnects = log.reconnects
        summary.reconnectGapsMs = log.gapsMs
        summary.addresses = log.addresses.map(\.description)
        summary.transport = output.transport.summary
        return summary
    }

    /// The client configuration of a session: the stall watch when reconnecting, and `connectTimeoutNanos`.
    private func sessionConfiguration(connectTimeoutNanos: UInt64?) -> StudioClientConfiguration {
        var client = configuration.client
        if configuration.reconnect {
            client.stallTimeoutNanos = configuration.stallTimeoutNanos
        }
        if let connectTimeoutNanos { client.connectTimeoutNanos = connectTimeoutNanos }
        return client
    }

    private enum ReconnectOutcome {
        case connected(StudioClient, HostPort)
        case refused(StudioClientError)
        case gaveUp(String)
    }

    /// Tries the candidates in rounds until one gives a session with `agent`, a permanent refusal, or the deadline.
    private func reconnect(schedule: ReconnectSchedule, agent: AgentInfo, group: any EventLoopGroup) async -> ReconnectOutcome {
        var lastAttempt = "none: the deadline had passed"
        var round = 0
        while true {
            let roundStart = self.now()
            guard roundStart < schedule.deadline else { return .gaveUp(lastAttempt) }
            round += 1
            let addresses = await configuration.candidates?() ?? [configuration.address]
            if addresses.isEmpty {
                lastAttempt = "the agent was not found at any address"
                logger.debug("reconnecting, round \(round): no address")
            }
            for address in addresses {
                guard let timeout = schedule.attemptTimeout(at: self.now()) else { return .gaveUp(lastAttempt) }
                do {
                    let session = try await StudioClient.connect(
                        host: address.host, port: address.port, configuration: sessionConfiguration(connectTimeoutNanos: timeout),
                        group: group, logger: logger)
                    guard session.agent.staticPublicKey == agent.staticPublicKey else {
                        lastAttempt = "\(address): another agent (\(session.agent.agentName)) answered"
                        logger.warning("reconnecting: \(lastAttempt); not recording it")
                        await session.close(reason: "the studio is recording another agent")
                        continue
                    }
                    return .connected(session, address)
                } catch {
                    if ReconnectPolicy.isPermanent(error) { return .refused(error) }
                    lastAttempt = "\(address): \(error)"
                    logger.debug("reconnecting, round \(round): \(lastAttempt)")
                }
            }
            guard let pause = schedule.pauseAfterRound(startedAt: roundStart, now: self.now()) else { return .gaveUp(lastAttempt) }
            if pause > 0 {
                let clock = configuration.client.clock
                do { try await clock.sleep(until: clock.now.nanoseconds + pause) } catch { return .gaveUp("cancelled") }
            }
        }
    }

    /// Nanoseconds on the recording's clock (the client configuration's, ``StudioClientConfiguration/clock``).
    private func now() -> UInt64 { configuration.client.clock.now.nanoseconds }

    /// A task that closes `client` at `deadline` (clock nanoseconds) unless cancelled first.
    private func close(_ client: StudioClient, at deadline: UInt64, reason: String) -> Task<Void, Never> {
        Task { [clock = configuration.client.clock] in
            if deadline > clock.now.nanoseconds {
                do {
                    try await clock.sleep(until: deadline)
                } catch {
                    return
                }
            }
            await client.close(reason: reason)
        }
    }
}

/// What the statistics count across the boundary between two sessions, to take back out of the summary: a new
/// session numbers its frames anew (or, from the same agent process, skips the frames of the outage), so the
/// step from the last frame of one session to the first of the next is no drop, skipped camera frame or
/// duplicate. `dropped`, `sourceGaps` and `sourceDuplicates` count within sessions; the outage itself is in
/// `reconnectGapsMs`.
struct SessionBoundary {
    private(set) var dropped = 0
    private(set) var sourceGaps = 0
    private(set) var sourceDuplicates = 0
    private var awaitingFrame = false
    private var awaitingSourceFrame = false

    /// A new session starts: its first frame, and its first new camera frame, cross the boundary.
    mutating func beginSession() {
        awaitingFrame = true
        awaitingSourceFrame = true
    }

    /// The frame that ends the recording: the slots dropped before the span's end count, unless the frame is the
    /// first of a new session (a reconnection's gap is no agent drop).
    func noteSpanEnd(_ frame: ReceivedVideoFrame, spanEnd: UInt64, to output: RecordingOutput) {
        if !awaitingFrame { output.noteSpanEnd(frame, spanEnd: spanEnd) }
    }

    /// Adds `frame` to `output`, noting what the statistics counted for crossing the boundary.
    mutating func add(_ frame: ReceivedVideoFrame, to output: RecordingOutput) throws {
        guard awaitingFrame || awaitingSourceFrame else {
            try output.add(frame)
            return
        }
        let before = output.statistics
        try output.add(frame)
        let after = output.statistics
        if awaitingFrame {
            awaitingFrame = false
            dropped += after.dropped - before.dropped
        }
        if awaitingSourceFrame && after.sourceFrames > before.sourceFrames {
            awaitingSourceFrame = false
            sourceGaps += after.sourceGaps - before.sourceGaps
            sourceDuplicates += after.sourceDuplicates - before.sourceDuplicates
        }
    }
}
