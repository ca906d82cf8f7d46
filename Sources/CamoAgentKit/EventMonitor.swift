import CamoEvents
import CamoMedia
import CamoProducerKit
import CamoWeb
import Foundation
import Logging
import Synchronization

/// The agent's event detectors at work: an ``EventEngine`` on its own queue, fed through the controller's
/// ``AnalysisTap`` from bounded queues so it never slows capture or streaming, and every change of an event
/// delivered to whoever follows (`camo-agent events --follow`, the page's server-sent events, studios, the webhook).
///
/// - Video: a mailbox of one frame. A frame that arrives while the engine still judges the last replaces the one
///   waiting (counted in ``Stats/framesSkipped``), so a slow host judges fewer frames rather than falling behind.
/// - Audio: up to 64 chunks (about 1.4 s) wait; beyond that the oldest is dropped (``Stats/chunksDropped``).
/// - Time: a timer every 250 ms ends events whose time has come without further activity.
/// - History: the last 200 notices, for `camo-agent events` without `--follow` and for followers that join late.
public final class EventMonitor: Sendable {
    /// Counters, for `camo-agent status`, `/api/status` and the tests.
    public struct Stats: Sendable, Hashable, Codable {
        /// Frames the engine judged.
        public var framesAnalyzed: UInt64 = 0
        /// Frames replaced in the mailbox before the engine took them.
        public var framesSkipped: UInt64 = 0
        /// Audio chunks the engine judged.
        public var chunksAnalyzed: UInt64 = 0
        /// Audio chunks dropped from a full queue.
        public var chunksDropped: UInt64 = 0
        /// Notices made.
        public var notices: UInt64 = 0
        /// Events running now.
        public var ongoing: Int = 0
    }

    struct Inbox {
        var frame: VideoFrame?
        var frameScheduled = false
        var chunks: [AudioChunk] = []
        var audioScheduled = false
        var stats = Stats()
    }

    struct Followers {
        var history: [EventNotice] = []
        var streams: [UUID: AsyncStream<EventNotice>.Continuation] = [:]
        var sinks: [UUID: @Sendable (EventNotice) -> Void] = [:]
    }

    /// Notices kept for late followers.
    public static let historyLength = 200
    static let audioQueueChunks = 64

    private let engine: Mutex<EventEngine>
    private let inbox = Mutex(Inbox())
    private let followers = Mutex(Followers())
    private let queue = DispatchQueue(label: "camo.events", qos: .utility)
    private let timer: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let tap: Mutex<AnalysisTap?> = Mutex(nil)
    private let webhookStats: Mutex<(@Sendable () -> WebhookStats)?> = Mutex(nil)
    private let clock: any MonotonicClock
    private let wallClock: @Sendable () -> Double
    private let logger: Logger

    /// A monitor running `engine`. `wallClock` gives Unix seconds for the notices' `time`.
    public init(
        engine: EventEngine, clock: any MonotonicClock, logger: Logger,
        wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.engine = Mutex(engine)
        self.clock = clock
        self.logger = logger
        self.wallClock = wallClock
    }

    /// Starts taking `controller`'s frames and audio, and the timer.
    public func start(controller: CamoController) {
        let added = controller.addAnalysisTap(
            video: { [weak self] frame in self?.offer(frame) }, audio: { [weak self] chunk in self?.offer(chunk) })
        tap.withLock { $0 = added }
        let ticks = Task { [weak self, clock] in
            var next = clock.now.nanoseconds
            while !Task.isCancelled {
                next += 250_000_000
                do { try await clock.sleep(until: next) } catch { return }
                guard let self else { return }
                queue.async { [weak self] in self?.tick() }
            }
        }
        timer.withLock { $0 = ticks }
        let active = engine.withLock { $0.activeTriggers.map(\.rawValue).sorted() }
        logger.info("Event detectors running", metadata: ["triggers": "\(active.joined(separator: ","))"])
    }

    /// Stops: no more frames or audio, the timer off, followers' streams finished.
    public func stop() {
        tap.withLock { tap in
            tap?.remove()
            tap = nil
        }
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        let streams = followers.withLock { followers in
            defer { followers.streams = [:] }
            return Array(followers.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    // MARK: Input

    /// A captured frame (the tap's callback): into the mailbox, judged on the monitor's queue.
    func offer(_ frame: VideoFrame) {
        let schedule = inbox.withLock { inbox -> Bool in
            if inbox.frame != nil { inbox.stats.framesSkipped += 1 }
            inbox.frame = frame
            defer { inbox.frameScheduled = true }
            return !inbox.frameScheduled
        }
        if schedule { queue.async { [weak self] in self?.judgeFrame() } }
    }

    /// A captured audio chunk (the tap's callback): into the bounded queue.
    func offer(_ chunk: AudioChunk) {
        let schedule = inbox.withLock { inbox -> Bool in
            if inbox.chunks.count >= Self.audioQueueChunks {
                inbox.chunks.removeFirst()
                inbox.stats.chunksDropped += 1
            }
            inbox.chunks.append(chunk)
            defer { inbox.audioScheduled = true }
            return !inbox.audioScheduled
        }
        if schedule { queue.async { [weak self] in self?.judgeAudio() } }
    }

    /// A doorbell press at `time` (ns of the monotonic clock).
    public func doorbellPressed(at time: UInt64) {
        queue.async { [weak self] in
            guard let self else { return }
            deliver(engine.withLock { $0.doorbellPress(at: time) })
        }
    }

    private func judgeFrame() {
        guard let frame = inbox.withLock({ inbox -> VideoFrame? in
            defer {
                inbox.frame = nil
                inbox.frameScheduled = false
            }
            return inbox.frame
        }) else { return }
        let now = max(frame.captureTime, 1)
        let (notices, analyzed) = engine.withLock { engine in (engine.video(frame, now: now), engine.framesAnalyzed) }
        inbox.withLock { $0.stats.framesAnalyzed = analyzed }
        deliver(notices)
    }

    private func judgeAudio() {
        let chunks = inbox.withLock { inbox -> [AudioChunk] in
            defer {
                inbox.chunks = []
                inbox.audioScheduled = false
            }
            return inbox.chunks
        }
        var notices: [EventNotice] = []
        let analyzed = engine.withLock { engine in
            for chunk in chunks { notices += engine.audio(chunk) }
            return engine.chunksAnalyzed
        }
        inbox.withLock { $0.stats.chunksAnalyzed = analyzed }
        deliver(notices)
    }

    private func tick() {
        let now = clock.now.nanoseconds
        deliver(engine.withLock { $0.tick(now: now) })
    }

    // MARK: Settings

    /// What the engine runs now.
    public var settings: EventSettings { engine.withLock { $0.settings } }

    /// The triggers that run (enabled and supported).
    public var activeTriggers: Set<EventTrigger> { engine.withLock { $0.activeTriggers } }

    /// Whether a doorbell button is configured.
    public var doorbellButtonConfigured: Bool { engine.withLock { $0.doorbellButtonConfigured } }

    /// Uses `settings` from now on (events of triggers turned off end at once).
    public func apply(_ settings: EventSettings) {
        let now = clock.now.nanoseconds
        let notices = engine.withLock { $0.apply(settings, now: now) }
        queue.async { [weak self] in self?.deliver(notices) }
    }

    // MARK: Output

    /// The counters now.
    public var stats: Stats {
        var stats = inbox.withLock { $0.stats }
        stats.notices = followers.withLock { $0.history.last?.sequence ?? 0 }
        stats.ongoing = engine.withLock { $0.ongoing.count }
        return stats
    }

    /// The events running now.
    public var ongoing: [Event] { engine.withLock { $0.ongoing } }

    /// What `camo-agent status` shows of the detectors (and of the webhook, once ``reportWebhook(_:)`` gave it).
    public var status: EventsStatus {
        EventsStatus(
            triggers: EventTrigger.allCases.filter(activeTriggers.contains).map(\.rawValue), counters: stats,
            webhook: webhookStats.withLock { $0 }?())
    }

    /// Gives the webhook's counters to ``status``.
    public func reportWebhook(_ stats: @escaping @Sendable () -> WebhookStats) {
        webhookStats.withLock { $0 = stats }
    }

    /// The last notices (at most ``historyLength``), oldest first.
    public var history: [EventNotice] { followers.withLock { $0.history } }

    /// Every notice from now on (after the ones in `history` when `replay`), until ``stop()`` or the consumer
    /// stops reading. A consumer that falls 256 notices behind loses the oldest (it sees a gap in the sequence).
    public func follow(replay: Bool = false) -> AsyncStream<EventNotice> {
        let (stream, continuation) = AsyncStream<EventNotice>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        followers.withLock { followers in
            if replay { for notice in followers.history { continuation.yield(notice) } }
            followers.streams[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.followers.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `sink` with every notice from now on, on the monitor's queue (it must not block: the studios'
    /// sessions and the webhook queue what they send). Returns a function that removes it.
    @discardableResult
    public func addSink(_ sink: @escaping @Sendable (EventNotice) -> Void) -> @Sendable () -> Void {
        let id = UUID()
        followers.withLock { $0.sinks[id] = sink }
        return { [weak self] in _ = self?.followers.withLock { $0.sinks.removeValue(forKey: id) } }
    }

    private func deliver(_ notices: [EventNotice]) {
        guard !notices.isEmpty else { return }
        let time = wallClock()
        let stamped = notices.map { notice -> EventNotice in
            var notice = notice
            notice.time = time
            return notice
        }
        let (streams, sinks) = followers.withLock { followers in
            followers.history.append(contentsOf: stamped)
            if followers.history.count > Self.historyLength {
                followers.history.removeFirst(followers.history.count - Self.historyLength)
            }
            return (Array(followers.streams.values), Array(followers.sinks.values))
        }
        for notice in stamped {
            logger.info(
                "Event \(notice.kind.rawValue)",
                metadata: [
                    "trigger": "\(notice.event.trigger.rawValue)", "event": "\(notice.event.id)",
                    "zone": "\(notice.event.zoneID.map(String.init) ?? "-")",
                ])
            for stream in streams { stream.yield(notice) }
            for sink in sinks { sink(notice) }
        }
    }
}
