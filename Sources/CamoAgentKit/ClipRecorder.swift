import CamoCodec
import CamoEvents
import CamoMedia
import CamoProducerKit
import CamoRecording
import Foundation
import Logging
import Synchronization

/// What the recordings are doing: `camo-agent clips`, the status and `GET /api/clips`.
public struct RecordingStatus: Sendable, Hashable, Codable {
    /// The selected mode.
    public var mode: RecordingMode
    /// Whether a clip is being written now.
    public var recording: Bool
    /// Recordings kept.
    public var kept: Int
    /// Their bytes, and the cap.
    public var bytes: Int64
    /// The store's size cap, bytes.
    public var capBytes: Int64
    /// Recordings removed to stay under the cap since the agent started.
    public var evicted: Int
    /// Events that started no clip because of the blind time.
    public var suppressed: Int
    /// Recordings lost because writing failed (a full disk, say); ``lastError`` says why.
    public var failed: Int
    /// Clips given up because the disk fell more than 5 s behind.
    public var abandoned: Int
    /// The last write error, if any.
    public var lastError: String?
    /// Where they are.
    public var directory: String
    /// What opening the store repaired after a crash.
    public var recovery: ClipStore.Recovery
}

/// The agent's recordings: clips cut from the shared H.264 rendition (a ``LiveFeed``: no second encode) and the
/// microphone's audio by a ``ClipPlanner`` following the event notices, written as CMAF (fragmented MP4) by
/// ``MP4Writer`` on a queue of their own, and kept in a ``ClipStore``; stills (images mode) are JPEGs of the
/// picture the studios see.
///
/// The feed exists only while the mode records video (it keeps the pre-roll), so an agent in live-view mode
/// encodes nothing for recordings. Capture and streaming never wait for the disk: the planner's actions go to the
/// writer's queue, and a clip whose writes fall more than 150 units (5 s) behind is given up and counted. A write
/// that fails (a full disk) loses that clip only, with the error in the status; the next event tries again.
final class ClipRecorder: Sendable {
    private struct State {
        var planner: ClipPlanner
        var feed: LiveFeed?
        var tap: AnalysisTap?
        var lastFrame: VideoFrame?
        /// Video units handed to the writer and not yet written.
        var queued = 0
        /// The clip whose actions are being dropped (it fell behind).
        var abandoning: UInt64?
        var currentClip: UInt64?
        var failed = 0
        var abandoned = 0
        var lastError: String?
        var stopped = false
    }

    let store: ClipStore
    private let controller: CamoController
    private let request: LiveFeedRequest
    private let clock: any MonotonicClock
    private let logger: Logger
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "camo.recordings.writer")
    private let writer: ClipFileWriter
    private let ticker = Mutex<Task<Void, Never>?>(nil)
    private let removeSink = Mutex<(@Sendable () -> Void)?>(nil)
    private let monitor = Mutex<EventMonitor?>(nil)

    /// Units that may wait for the writer before the clip is given up.
    static let queueLimit = 150

    /// A recorder writing to `store`, taking the rendition at `request`'s size.
    init(controller: CamoController, store: ClipStore, request: LiveFeedRequest, options: RecordingOptions, clock: any MonotonicClock, logger: Logger) {
        self.controller = controller
        self.store = store
        self.request = request
        self.clock = clock
        self.logger = logger
        self.state = Mutex(State(planner: ClipPlanner(options: options)))
        self.writer = ClipFileWriter(store: store, bitrate: request.bitrate, clock: clock, logger: logger)
    }

    /// Starts following `events` (nil: the detectors are off) and the mode's feed; a 1 s tick ends clips while the
    /// feed pauses.
    func start(events: EventMonitor?) {
        monitor.withLock { $0 = events }
        if let events {
            let remove = events.addSink { [weak self] notice in self?.notice(notice) }
            removeSink.withLock { $0 = remove }
        }
        apply(state.withLock { $0.planner.options })
        let task = Task { [weak self, clock] in
            while !Task.isCancelled {
                try? await clock.sleep(until: clock.now.nanoseconds + 1_000_000_000)
                guard let self else { return }
                self.state.withLock { state in self.dispatch(state.planner.tick(now: clock.now.nanoseconds), state: &state) }
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Calls `kept` (on the writer's queue) with each recording once it is in the store, and its path.
    func onKept(_ kept: @escaping @Sendable (ClipRecord, String) -> Void) {
        writer.onKept.withLock { $0 = kept }
    }

    /// Ends the open clip (it is kept) and lets go of the feed; waits for the writer.
    func stop() async {
        ticker.withLock { $0 }?.cancel()
        removeSink.withLock { $0 }?()
        let (feed, tap) = state.withLock { state in
            state.stopped = true
            dispatch(state.planner.stop(), state: &state)
            defer {
                state.feed = nil
                state.tap = nil
            }
            return (state.feed, state.tap)
        }
        feed?.remove()
        tap?.remove()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    /// New options (from the settings): the mode's feed is added or removed to match.
    func apply(_ options: RecordingOptions) {
        // Events already under way when an event mode is chosen get their clip (it starts at the first keyframe).
        let ongoing = monitor.withLock { $0 }?.ongoing ?? []
        let (oldFeed, oldTap, needFeed, needTap) = state.withLock { state in
            let changed = state.planner.options.mode != options.mode
            dispatch(state.planner.setOptions(options), state: &state)
            if changed && options.mode.followsEvents {
                for event in ongoing { dispatch(state.planner.notice(EventNotice(sequence: 0, kind: .started, event: event)), state: &state) }
            }
            var oldFeed: LiveFeed?, oldTap: AnalysisTap?
            if !options.mode.recordsVideo || state.stopped {
                oldFeed = state.feed
                state.feed = nil
            }
            if options.mode != .images || state.stopped {
                oldTap = state.tap
                state.tap = nil
                state.lastFrame = nil
            }
            return (oldFeed, oldTap, !state.stopped && options.mode.recordsVideo && state.feed == nil,
                    !state.stopped && options.mode == .images && state.tap == nil)
        }
        oldFeed?.remove()
        oldTap?.remove()
        if needFeed {
            do {
                let feed = try controller.addLiveFeed(
                    request, video: { [weak self] video in self?.video(video) }, audio: { [weak self] chunk in self?.audio(chunk) })
                state.withLock { $0.feed = feed }
            } catch {
                state.withLock { $0.lastError = "\(error)" }
                logger.error("Recordings cannot take the H.264 rendition", metadata: ["error": "\(error)"])
            }
        }
        if needTap {
            let tap = controller.addAnalysisTap(video: { [weak self] frame in self?.state.withLock { $0.lastFrame = frame } }, audio: { _ in })
            state.withLock { $0.tap = tap }
        }
    }

    /// The status now.
    var status: RecordingStatus {
        let (mode, recording, failed, abandoned, lastError, suppressed) = state.withLock {
            ($0.planner.options.mode, $0.planner.isRecording, $0.failed + writer.failed, $0.abandoned, writer.lastError ?? $0.lastError,
             $0.planner.suppressed)
        }
        return RecordingStatus(
            mode: mode, recording: recording, kept: store.count, bytes: store.totalBytes, capBytes: store.capBytes, evicted: store.evicted,
            suppressed: suppressed, failed: failed, abandoned: abandoned, lastError: lastError, directory: store.directory,
            recovery: store.recovery)
    }

    // MARK: - Inputs (the pacer, the audio thread, the event monitor's queue)

    private func video(_ video: LiveVideo) {
        let unit = RecordedUnit(data: video.data, isKeyframe: video.isKeyframe, time: video.captureTime)
        state.withLock { state in
            writer.size.withLock { $0 = video.size }
            dispatch(state.planner.video(unit), state: &state)
        }
    }

    private func audio(_ chunk: AudioChunk) {
        state.withLock { state in dispatch(state.planner.audio(chunk), state: &state) }
    }

    private func notice(_ notice: EventNotice) {
        state.withLock { state in dispatch(state.planner.notice(notice), state: &state) }
    }

    /// Hands the planner's actions to the writer's queue in order (called under the lock, so two threads' actions
    /// never interleave out of order); a clip that falls behind is given up.
    private func dispatch(_ actions: [ClipAction], state: inout State) {
        for action in actions {
            switch action {
            case .begin(let start):
                state.currentClip = start.number
                state.abandoning = nil
            case .video:
                if state.abandoning == state.currentClip, state.currentClip != nil { continue }
                if state.queued >= Self.queueLimit {
                    state.abandoning = state.currentClip
                    state.abandoned += 1
                    logger.warning("The disk fell 5 s behind: this clip is given up", metadata: ["clip": "\(state.currentClip ?? 0)"])
                    queue.async { [writer] in writer.abandon() }
                    continue
                }
                state.queued += 1
            case .audio:
                if state.abandoning == state.currentClip, state.currentClip != nil { continue }
            case .finish:
                if state.abandoning == state.currentClip, state.currentClip != nil {
                    state.abandoning = nil
                    continue
                }
            case .still:
                break
            }
            // Only a still needs the last picture.
            let frame: VideoFrame? = if case .still = action { state.lastFrame } else { nil }
            let options = state.planner.options
            queue.async { [weak self, writer] in
                writer.perform(action, options: options, still: frame)
                if case .video = action { self?.state.withLock { $0.queued -= 1 } }
            }
        }
    }
}

/// The writer's side: the open MP4 file and the store, touched only on the recorder's queue (hence unchecked).
final class ClipFileWriter: @unchecked Sendable {
    private let store: ClipStore
    private let bitrate: Int
    private let clock: any MonotonicClock
    private let logger: Logger
    private var file: MP4Writer?
    private var partial: String?
    private var start: ClipStart?
    private var fileSize: VideoSize?
    private var hasAudio = false
    private let errors = Mutex<(failed: Int, last: String?)>((0, nil))
    /// The size of the rendition's units now (set by the feed's thread).
    let size = Mutex<VideoSize>(.hd720)
    /// Told of each recording kept (the push transports).
    let onKept = Mutex<(@Sendable (ClipRecord, String) -> Void)?>(nil)

    init(store: ClipStore, bitrate: Int, clock: any MonotonicClock, logger: Logger) {
        self.store = store
        self.bitrate = bitrate
        self.clock = clock
        self.logger = logger
    }

    var failed: Int { errors.withLock { $0.failed } }
    var lastError: String? { errors.withLock { $0.last } }

    func perform(_ action: ClipAction, options: RecordingOptions, still: VideoFrame?) {
        switch action {
        case .begin(let start):
            self.start = start
            do {
                // Room for the longest clip at twice the bitrate before writing (the cap holds while it is written).
                let seconds = start.mode == .continuous ? options.segmentSeconds + 2 : options.maxClipSeconds
                try store.makeRoom(for: min(store.capBytes / 2, Int64(bitrate / 8 * 2 * seconds)))
            } catch {
                fail("\(error)")
                return
            }
            let size = self.size.withLock { $0 }
            let path = store.partialPath(ext: "mp4")
            do {
                file = try MP4Writer(
                    path: path, width: size.width, height: size.height, audio: !options.microphoneMuted, fragmented: true, logger: logger)
                partial = path
                fileSize = size
                hasAudio = !options.microphoneMuted
            } catch {
                store.discard(partial: path)
                fail("cannot start a clip at \(path): \(error)")
            }
        case .video(let unit):
            guard let file else { return }
            do {
                try file.writeVideo(unit.data, isKeyframe: unit.isKeyframe, timeNanos: unit.time)
            } catch {
                fail("writing a clip: \(error)")
            }
        case .audio(let chunk):
            guard let file else { return }
            do {
                try file.writeAudio(chunk.samples, timeNanos: chunk.firstSampleTime)
            } catch {
                fail("writing a clip's audio: \(error)")
            }
        case .finish(let end):
            guard let file, let partial, let start, let size = fileSize else { return }
            self.file = nil
            self.partial = nil
            do {
                try file.finish()
            } catch {
                store.discard(partial: partial)
                fail("finishing a clip: \(error)")
                return
            }
            let duration = Double(end.lastUnitTime + ClipPlanner.frameNanos - min(start.firstUnitTime, end.lastUnitTime)) / 1e9
            let record = ClipRecord(
                kind: .video, mode: start.mode, trigger: start.trigger, zoneID: start.zoneID, eventIDs: end.eventIDs,
                startTime: wallTime(of: start.firstUnitTime), preRollSeconds: start.eventStart.map { $0 > start.firstUnitTime ? Double($0 - start.firstUnitTime) / 1e9 : 0 },
                durationSeconds: duration, hasAudio: hasAudio, endReason: end.reason, width: size.width, height: size.height)
            keep(partial: partial, record: record)
        case .still(let event):
            guard let frame = still else {
                fail("no picture for event \(event.id)'s still (no frame has come yet)")
                return
            }
            do {
                let jpeg = try JPEGEncoder().encode(frame, quality: 85)
                try store.makeRoom(for: Int64(jpeg.count))
                let path = store.partialPath(ext: "jpg")
                try Data(jpeg).write(to: URL(fileURLWithPath: path))
                let record = ClipRecord(
                    kind: .image, mode: .images, trigger: event.trigger, zoneID: event.zoneID, eventIDs: [event.id],
                    startTime: wallTime(of: frame.captureTime), durationSeconds: 0, hasAudio: false, width: frame.size.width,
                    height: frame.size.height)
                keep(partial: path, record: record)
            } catch {
                fail("keeping event \(event.id)'s still: \(error)")
            }
        }
    }

    /// Drops the open clip (it fell behind, or a write failed).
    func abandon() {
        file = nil
        if let partial { store.discard(partial: partial) }
        partial = nil
    }

    private func keep(partial: String, record: ClipRecord) {
        do {
            let kept = try store.commit(partial: partial, record: record)
            onKept.withLock { $0 }?(kept, store.path(of: kept))
            logger.info("Recording kept", metadata: [
                "id": "\(kept.id)", "file": "\(kept.file)", "seconds": "\(String(format: "%.1f", kept.durationSeconds))",
                "bytes": "\(kept.bytes)", "trigger": "\(kept.trigger?.rawValue ?? "-")",
            ])
        } catch {
            fail("\(error)")
        }
    }

    private func fail(_ message: String) {
        abandon()
        errors.withLock {
            $0.failed += 1
            $0.last = message
        }
        logger.error("A recording was lost; streaming goes on", metadata: ["reason": "\(message)"])
    }

    /// The wall clock (Unix seconds) of a time on the agent's monotonic clock.
    private func wallTime(of time: UInt64) -> Double {
        let now = clock.now.nanoseconds
        return Date().timeIntervalSince1970 - (Double(now) - Double(time)) / 1e9
    }
}
