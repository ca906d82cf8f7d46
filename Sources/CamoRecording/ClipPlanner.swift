import CamoEvents
import CamoMedia

/// One H.264 access unit as the recorder keeps it: the shared rendition's Annex B bytes and capture time.
public struct RecordedUnit: Sendable {
    /// Annex B bytes; a keyframe carries SPS and PPS.
    public var data: [UInt8]
    /// Whether a clip may start here.
    public var isKeyframe: Bool
    /// Capture time, ns of the clock the events are timed on.
    public var time: UInt64

    /// A unit from its parts.
    public init(data: [UInt8], isKeyframe: Bool, time: UInt64) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.time = time
    }
}

/// How a clip began.
public struct ClipStart: Sendable, Hashable {
    /// Counts the planner's clips from 1.
    public var number: UInt64
    /// The mode that made it.
    public var mode: RecordingMode
    /// The event that started it (nil for a continuous segment).
    public var trigger: EventTrigger?
    /// The motion zone of that event, if any.
    public var zoneID: UInt16?
    /// When that event started, ns (nil for a segment).
    public var eventStart: UInt64?
    /// The clip's first unit (a keyframe), ns: the pre-roll is `eventStart - firstUnitTime`.
    public var firstUnitTime: UInt64
}

/// Why a clip ended.
public enum ClipEndReason: String, Sendable, Hashable, Codable {
    /// Every event it followed ended (event-based).
    case eventEnded
    /// It reached the longest clip (``RecordingOptions/maxClipSeconds``).
    case maxLength
    /// It reached its fixed length (event-triggered).
    case fixedLength
    /// A continuous segment reached its length.
    case segment
    /// The recording mode changed.
    case modeChanged
    /// The recorder stopped (the agent stops, or recording was turned off).
    case stopped
}

/// How a clip ended.
public struct ClipEnd: Sendable, Hashable {
    /// The clip's number (its ``ClipStart/number``).
    public var number: UInt64
    /// Why.
    public var reason: ClipEndReason
    /// Every event that ran during the clip, in the order they started.
    public var eventIDs: [UInt64]
    /// The last unit written, ns.
    public var lastUnitTime: UInt64
}

/// What the recorder should do next, in order.
public enum ClipAction: Sendable {
    /// Open a new clip (the pre-roll's units and audio follow).
    case begin(ClipStart)
    /// Write a unit to the open clip.
    case video(RecordedUnit)
    /// Write audio to the open clip.
    case audio(AudioChunk)
    /// Close the open clip.
    case finish(ClipEnd)
    /// Keep a still picture for this event (images mode).
    case still(Event)
}

/// Cuts the shared H.264 rendition and the audio into clips as the recording mode says: one plain value fed units,
/// audio and event notices, each with its time, and answering with ``ClipAction``s; tested with explicit times.
///
/// - **Pre-roll.** While a mode that records video is on, the last units are kept from the last keyframe at or
///   before `now - preRoll` (and the audio beside them), at most 64 MB. A clip starts at the last keyframe at or
///   before its event's start minus the pre-roll, or the oldest kept keyframe; so the pre-roll is the chosen one
///   plus less than one GOP (less when the feed has not run that long).
/// - **Event-based.** A clip follows every event that starts while it is open and ends when the last ends, or at
///   the longest clip, whichever comes first: a unit that would take it past ``RecordingOptions/maxClipSeconds``
///   ends it instead.
/// - **Event-triggered.** A clip of ``RecordingOptions/triggeredClipSeconds`` after the event's start (the longest
///   clip still caps it).
/// - **Blind.** For ``RecordingOptions/blindSeconds`` after a clip ends (after a still, in images mode), an event
///   starts nothing; it is counted in ``suppressed``.
/// - **Continuous.** Segments of ``RecordingOptions/segmentSeconds``, each ended at the first keyframe past its
///   length (which starts the next); the events during one are listed in its end.
/// - **Images.** A ``ClipAction/still(_:)`` per event, with the blind time after it.
public struct ClipPlanner: Sendable {
    private struct Open {
        var start: ClipStart
        /// The event-based clip's running events.
        var running: Set<UInt64>
        var events: [UInt64]
        var fixedEnd: UInt64?
        var lastTime: UInt64
    }

    /// The options in use (``setOptions(_:)`` changes them).
    public private(set) var options: RecordingOptions
    /// Events that started no clip because of the blind time.
    public private(set) var suppressed: Int = 0
    /// Clips begun.
    public private(set) var clips: UInt64 = 0
    /// Stills asked for.
    public private(set) var stills: Int = 0

    private var ring: [RecordedUnit] = []
    private var ringBytes = 0
    private var audioRing: [AudioChunk] = []
    private var open: Open?
    /// An event clip waiting for its first keyframe (the ring had none).
    private var pending: (start: ClipStart, fixedEnd: UInt64?, running: Set<UInt64>)?
    private var blindUntil: UInt64?
    private var latest: UInt64 = 0

    /// The most the pre-roll ring holds.
    public static let ringByteLimit = 64 << 20
    /// One frame at 30 fps, ns (the length a clip's last unit adds).
    public static let frameNanos: UInt64 = 33_333_333
    private static let second: UInt64 = 1_000_000_000

    /// A planner with `options` (which should be valid: ``RecordingOptions/problem()`` is nil).
    public init(options: RecordingOptions) {
        self.options = options
    }

    /// Whether a clip is open.
    public var isRecording: Bool { open != nil }

    /// The pre-roll ring's length now, ns (tests, status).
    public var ringDuration: UInt64 {
        guard let first = ring.first, let last = ring.last, last.time > first.time else { return 0 }
        return last.time - first.time
    }

    /// New options: a mode change ends the open clip (``ClipEndReason/modeChanged``) and empties the ring when the new
    /// mode records no video; other changes apply from the next unit.
    public mutating func setOptions(_ next: RecordingOptions) -> [ClipAction] {
        var actions: [ClipAction] = []
        if next.mode != options.mode {
            actions += finish(.modeChanged)
            pending = nil
            blindUntil = nil
            if !next.mode.recordsVideo {
                ring.removeAll()
                ringBytes = 0
                audioRing.removeAll()
            }
        }
        options = next
        return actions
    }

    /// A unit of the shared rendition.
    public mutating func video(_ unit: RecordedUnit) -> [ClipAction] {
        guard options.mode.recordsVideo else { return [] }
        latest = max(latest, unit.time)
        append(unit)
        var actions = limits(now: unit.time)
        if options.mode == .continuous, let current = open, unit.isKeyframe,
            unit.time >= current.start.firstUnitTime + UInt64(options.segmentSeconds) * Self.second
        {
            actions += finish(.segment)
        }
        if let current = open {
            if current.start.mode != .continuous, unit.time + Self.frameNanos > current.start.firstUnitTime + maxClipNanos {
                actions += finish(.maxLength)
            } else {
                actions.append(.video(unit))
                open?.lastTime = unit.time
            }
        } else if unit.isKeyframe, options.mode == .continuous {
            actions += begin(ClipStart(number: 0, mode: .continuous, firstUnitTime: unit.time), fixedEnd: nil, running: [], from: ring.count - 1)
        } else if unit.isKeyframe, let waiting = pending {
            pending = nil
            actions += begin(waiting.start, fixedEnd: waiting.fixedEnd, running: waiting.running, from: ring.count - 1)
        }
        return actions
    }

    /// Audio beside the video (written to an open clip, and kept for the next one's pre-roll).
    public mutating func audio(_ chunk: AudioChunk) -> [ClipAction] {
        guard options.mode.recordsVideo else { return [] }
        audioRing.append(chunk)
        trimAudio()
        guard let current = open, Self.end(of: chunk) > current.start.firstUnitTime else { return [] }
        return [.audio(chunk)]
    }

    /// An event notice (from the event detectors, in order).
    public mutating func notice(_ notice: EventNotice) -> [ClipAction] {
        let event = notice.event
        latest = max(latest, event.start)
        switch (notice.kind, options.mode) {
        case (.started, .images):
            if blinded(at: event.start) { return [] }
            stills += 1
            blindUntil = event.start + UInt64(options.blindSeconds) * Self.second
            return [.still(event)]
        case (.started, .eventBased), (.started, .eventTriggered):
            if open != nil {
                open?.events.append(event.id)
                if options.mode == .eventBased { open?.running.insert(event.id) }
                return []
            }
            if var waiting = pending {
                if options.mode == .eventBased { waiting.running.insert(event.id) }
                pending = waiting
                return []
            }
            if blinded(at: event.start) { return [] }
            let fixedEnd = options.mode == .eventTriggered ? event.start + UInt64(options.triggeredClipSeconds) * Self.second : nil
            let running: Set<UInt64> = options.mode == .eventBased ? [event.id] : []
            let start = ClipStart(
                number: 0, mode: options.mode, trigger: event.trigger, zoneID: event.zoneID, eventStart: event.start, firstUnitTime: 0)
            guard let index = preRollStart(for: event.start) else {
                pending = (start, fixedEnd, running)
                return []
            }
            return begin(start, fixedEnd: fixedEnd, running: running, from: index)
        case (.started, .continuous):
            open?.events.append(event.id)
            return []
        case (.ended, .eventBased):
            if pending != nil {
                pending?.running.remove(event.id)
                if pending?.running.isEmpty == true { pending = nil }
                return []
            }
            guard open?.running.remove(event.id) != nil, open?.running.isEmpty == true else { return [] }
            return finish(.eventEnded)
        default:
            return []
        }
    }

    /// The passing of time without units (the feed paused by the privacy switch): ends a clip past its length.
    public mutating func tick(now: UInt64) -> [ClipAction] {
        latest = max(latest, now)
        guard let current = open else { return [] }
        if current.start.mode != .continuous, now > current.start.firstUnitTime + maxClipNanos { return finish(.maxLength) }
        return limits(now: now)
    }

    /// Ends the open clip (``ClipEndReason/stopped``).
    public mutating func stop() -> [ClipAction] {
        pending = nil
        return finish(.stopped)
    }

    // MARK: - Clips

    private var maxClipNanos: UInt64 { UInt64(options.maxClipSeconds) * Self.second }

    /// The event-triggered clip's fixed end.
    private mutating func limits(now: UInt64) -> [ClipAction] {
        guard let current = open, let end = current.fixedEnd, now >= end else { return [] }
        return finish(.fixedLength)
    }

    /// Whether an event at `time` falls in the blind time (counted when it does).
    private mutating func blinded(at time: UInt64) -> Bool {
        guard let until = blindUntil, time < until else { return false }
        suppressed += 1
        return true
    }

    private mutating func begin(_ start: ClipStart, fixedEnd: UInt64?, running: Set<UInt64>, from index: Int) -> [ClipAction] {
        clips += 1
        var start = start
        start.number = clips
        start.firstUnitTime = ring[index].time
        open = Open(start: start, running: running, events: running.sorted(), fixedEnd: fixedEnd, lastTime: ring[ring.count - 1].time)
        var actions: [ClipAction] = [.begin(start)]
        actions.append(contentsOf: ring[index...].map { .video($0) })
        actions.append(contentsOf: audioRing.filter { Self.end(of: $0) > start.firstUnitTime }.map { .audio($0) })
        return actions
    }

    private mutating func finish(_ reason: ClipEndReason) -> [ClipAction] {
        guard let current = open else { return [] }
        open = nil
        if current.start.mode != .continuous {
            blindUntil = current.lastTime + UInt64(options.blindSeconds) * Self.second
        }
        return [.finish(ClipEnd(number: current.start.number, reason: reason, eventIDs: current.events, lastUnitTime: current.lastTime))]
    }

    // MARK: - The pre-roll ring

    /// The ring index a clip for an event at `eventStart` starts at: the last keyframe at or before `eventStart -
    /// preRoll`, else the oldest keyframe; nil when the ring has none.
    private func preRollStart(for eventStart: UInt64) -> Int? {
        let wanted = eventStart - min(eventStart, UInt64(options.preRollSeconds) * Self.second)
        var chosen: Int?
        for (index, unit) in ring.enumerated() where unit.isKeyframe {
            if chosen == nil || unit.time <= wanted { chosen = index }
            if unit.time > wanted { break }
        }
        return chosen
    }

    private mutating func append(_ unit: RecordedUnit) {
        ring.append(unit)
        ringBytes += unit.data.count
        // Keep from the last keyframe at or before now - preRoll (the whole GOP that holds the pre-roll's start).
        let horizon = unit.time - min(unit.time, UInt64(options.preRollSeconds) * Self.second)
        var cut = 0
        for (index, kept) in ring.enumerated() where kept.isKeyframe {
            if kept.time > horizon { break }
            cut = index
        }
        // An open clip has taken what it needs; a ring over its bytes drops whole GOPs from the front.
        var dropped = ring[..<cut].reduce(0) { $0 + $1.data.count }
        while ringBytes - dropped > Self.ringByteLimit,
            let next = ring.indices.dropFirst(cut + 1).first(where: { ring[$0].isKeyframe })
        {
            dropped += ring[cut..<next].reduce(0) { $0 + $1.data.count }
            cut = next
        }
        if cut > 0 {
            ringBytes -= dropped
            ring.removeFirst(cut)
        }
        trimAudio()
    }

    private mutating func trimAudio() {
        let oldest = ring.first?.time ?? latest
        let drop = audioRing.prefix { Self.end(of: $0) <= oldest }.count
        if drop > 0 { audioRing.removeFirst(drop) }
    }

    private static func end(of chunk: AudioChunk) -> UInt64 {
        chunk.firstSampleTime + UInt64(chunk.sampleFrames) * Self.second / UInt64(MediaContract.sampleRate)
    }
}
