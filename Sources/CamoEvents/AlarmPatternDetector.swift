import CamoMedia

/// The temporal patterns of alarm sounders (ISO 8201, NFPA 72).
public enum AlarmPattern: String, Sendable, Hashable, Codable, CaseIterable {
    /// Smoke and fire: three 0.5 s tones with 0.5 s gaps, then 1.5 s off (a 4 s cycle).
    case t3
    /// Carbon monoxide: four 0.1 s tones with 0.1 s gaps, then 5 s off (a 5.7 s cycle).
    case t4

    /// The trigger this pattern raises.
    public var trigger: EventTrigger {
        switch self {
        case .t3: .smokeAlarm
        case .t4: .coAlarm
        }
    }

    /// Tones per cycle.
    public var tones: Int { self == .t3 ? 3 : 4 }
    /// A tone's nominal length, ns.
    public var toneNanos: UInt64 { self == .t3 ? 500_000_000 : 100_000_000 }
    /// The nominal gap between tones of a cycle, ns.
    public var gapNanos: UInt64 { self == .t3 ? 500_000_000 : 100_000_000 }
    /// The nominal pause after a cycle's last tone, ns.
    public var pauseNanos: UInt64 { self == .t3 ? 1_500_000_000 : 5_000_000_000 }
}

/// One alarm pattern heard.
public struct AlarmDetection: Sendable, Hashable {
    /// Which pattern.
    public var pattern: AlarmPattern
    /// When the tone that confirmed it began (the first tone of the next cycle), ns.
    public var time: UInt64
    /// When the confirmed cycle's first tone began, ns.
    public var cycleStart: UInt64
    /// The tone's frequency, Hz, to the filter bank's 50 Hz.
    public var frequency: Float

    /// The trigger it raises.
    public var trigger: EventTrigger { pattern.trigger }
}

/// Hears smoke alarms (T3) and CO alarms (T4) in the microphone's audio, at any tone frequency from 0.5 to 4 kHz.
/// A plain value: feed it the captured chunks (48 kHz stereo) in order.
///
/// 1. **Cheap front end.** Stereo is mixed to mono and decimated by 3 (mean of 3 samples) to 16 kHz; a 10 ms frame
///    is 160 samples. Each frame goes through a Goertzel bank at 500...4000 Hz in 50 Hz steps (``ToneBank``),
///    which says whether one narrowband tone dominates it, and at which frequency: a tone at -60 dBFS or louder
///    that carries 40 % of the frame's power and stands 20 dB above the filters more than 250 Hz away. That is
///    about 11,000 multiply-adds per 10 ms: 0.3 % of a core measured (``EventsBenchmark/alarm(seconds:clock:)``).
/// 2. **Tones.** Consecutive tone frames at the same frequency (within ±100 Hz of the tone's first frame) make a
///    tone; up to 2 frames (20 ms) without it inside a tone are bridged (noise can mask a frame), 3 end it. Tones
///    shorter than 40 ms are dropped. A tone's length is measured in whole frames, so it is off by up to one
///    frame at each end.
/// 3. **Pattern.** When a tone reaches 40 ms, the tones before it are matched against each pattern: the
///    pattern's number of tones, each of the tone length, separated by the gap, the last followed by the pause
///    until the new tone (the start of the next cycle), and all within ±100 Hz of each other. Each time is
///    accepted within ±10 % of its nominal value (the standards' tolerance) plus 20 ms (the frame measurement);
///    e.g. a T3 tone from 430 to 570 ms, a T3 pause from 1330 to 1670 ms, a T4 tone from 70 to 130 ms. The
///    tone before the cycle, if any, must end at least the pause's lower bound before it, so a beeper that
///    beeps on and off without the pattern's pause (a reversing truck's 0.5 s beeps) never matches.
///
/// So an alarm is reported when its second cycle starts: about 4 s after a T3 alarm starts sounding, 5.7 s after a
/// T4 one (within two cycles), and again at every cycle after. Speech (harmonics with moving pitch), music (tones
/// of other lengths, back to back), noise and a continuous tone never match all the times and frequencies at once.
/// A gap in the chunks' times forgets the tones heard so far.
public struct AlarmPatternDetector: Sendable {
    /// A tone that ended.
    struct Tone: Sendable, Hashable {
        var start: UInt64
        var end: UInt64
        var filter: Int
        var length: UInt64 { end - start }
    }

    /// The tone being heard.
    private struct OpenTone: Sendable {
        var start: UInt64
        /// End of its last tone frame.
        var lastEnd: UInt64
        var filter: Int
        /// Whether the patterns were already matched against it.
        var matched: Bool
    }

    static let decimation = 3
    static let frameNanos: UInt64 = 10_000_000
    /// Frames without the tone that a tone bridges.
    static let bridgeNanos: UInt64 = 20_000_000
    static let minimumToneNanos: UInt64 = 40_000_000
    /// Filters (50 Hz each) a tone's frequency may drift.
    static let filterTolerance = 2
    /// Measurement slack added to each time's ±10 %.
    static let slackNanos: UInt64 = 20_000_000
    /// Tones remembered: enough for a T4 cycle and the tone before it.
    static let keptTones = 6

    private let bank = ToneBank()
    private var clock = SampleClock()
    /// Input frames in the current decimation sum.
    private var decimationCount = 0
    private var decimationSum: Float = 0
    /// Decimated samples of the current frame.
    private var frame: [Float] = []
    /// Input frame index (of ``clock``) at which the current frame began.
    private var frameStartIndex: UInt64 = 0
    private var tones: [Tone] = []
    private var openTone: OpenTone?

    /// Frames analyzed so far (for tests and stats).
    public private(set) var framesAnalyzed = 0
    /// Frames that held a dominant tone so far (for tests and stats).
    public private(set) var toneFrames = 0
    /// Tones of 40 ms or more heard so far (for tests and stats).
    public private(set) var tonesHeard = 0

    /// A detector with nothing heard yet.
    public init() {
        frame.reserveCapacity(ToneBank.frameLength)
    }

    /// Takes the next chunk; returns the patterns it completed, in order.
    public mutating func process(_ chunk: AudioChunk) -> [AlarmDetection] {
        if !clock.begin(chunkAt: chunk.firstSampleTime) {
            decimationCount = 0
            decimationSum = 0
            frame.removeAll(keepingCapacity: true)
            tones.removeAll()
            openTone = nil
        }
        var detections: [AlarmDetection] = []
        let frames = min(chunk.sampleFrames, chunk.samples.count / 2)
        for i in 0..<frames {
            if frame.isEmpty && decimationCount == 0 { frameStartIndex = clock.count + UInt64(i) }
            decimationSum += chunk.samples[2 * i] + chunk.samples[2 * i + 1]
            decimationCount += 1
            guard decimationCount == Self.decimation else { continue }
            frame.append(decimationSum / Float(2 * Self.decimation))
            decimationSum = 0
            decimationCount = 0
            guard frame.count == ToneBank.frameLength else { continue }
            let result = frame.withUnsafeBufferPointer { bank.analyze($0) }
            framesAnalyzed += 1
            if result.isTone { toneFrames += 1 }
            let start = clock.time(ofFrame: frameStartIndex)
            frame.removeAll(keepingCapacity: true)
            if let detection = take(result, at: start) { detections.append(detection) }
        }
        clock.advance(by: frames)
        return detections
    }

    /// Follows tones through one analyzed frame beginning at `start`.
    private mutating func take(_ result: ToneBank.Result, at start: UInt64) -> AlarmDetection? {
        let end = start + Self.frameNanos
        if var open = openTone {
            let continues = result.isTone && abs(result.filter - open.filter) <= Self.filterTolerance
                && start <= open.lastEnd + Self.bridgeNanos
            if continues {
                open.lastEnd = end
                openTone = open
                return checkOpenTone()
            }
            if result.isTone || start >= open.lastEnd + Self.bridgeNanos {
                close(open)
                openTone = nil
            }
        }
        if openTone == nil, result.isTone {
            openTone = OpenTone(start: start, lastEnd: end, filter: result.filter, matched: false)
            return checkOpenTone()
        }
        return nil
    }

    private mutating func close(_ open: OpenTone) {
        guard open.lastEnd - open.start >= Self.minimumToneNanos else { return }
        tonesHeard += 1
        tones.append(Tone(start: open.start, end: open.lastEnd, filter: open.filter))
        if tones.count > Self.keptTones { tones.removeFirst(tones.count - Self.keptTones) }
    }

    /// Matches the patterns once the open tone is long enough to count.
    private mutating func checkOpenTone() -> AlarmDetection? {
        guard var tone = openTone, !tone.matched, tone.lastEnd - tone.start >= Self.minimumToneNanos else { return nil }
        tone.matched = true
        openTone = tone
        for pattern in AlarmPattern.allCases {
            if let detection = Self.match(pattern, tones: tones, next: tone.start, nextFilter: tone.filter) {
                return detection
            }
        }
        return nil
    }

    /// Whether `value` is within ±10 % of `nominal` plus the measurement slack.
    static func accepts(_ value: UInt64, nominal: UInt64) -> Bool {
        let low = nominal - nominal / 10 - slackNanos
        let high = nominal + nominal / 10 + slackNanos
        return value >= low && value <= high
    }

    /// Whether the last tones form one cycle of `pattern` followed by a tone starting at `next`.
    static func match(_ pattern: AlarmPattern, tones: [Tone], next: UInt64, nextFilter: Int) -> AlarmDetection? {
        let count = pattern.tones
        guard tones.count >= count else { return nil }
        let cycle = Array(tones.suffix(count))
        for tone in cycle {
            guard accepts(tone.length, nominal: pattern.toneNanos), abs(tone.filter - nextFilter) <= filterTolerance else {
                return nil
            }
        }
        for i in 1..<count {
            guard cycle[i].start >= cycle[i - 1].end, accepts(cycle[i].start - cycle[i - 1].end, nominal: pattern.gapNanos) else {
                return nil
            }
        }
        guard let last = cycle.last, next >= last.end, accepts(next - last.end, nominal: pattern.pauseNanos) else { return nil }
        if tones.count > count {
            let before = tones[tones.count - count - 1]
            let quietBefore = pattern.pauseNanos - pattern.pauseNanos / 10 - slackNanos
            guard cycle[0].start >= before.end, cycle[0].start - before.end >= quietBefore else { return nil }
        }
        let frequency = ToneBank.lowestFrequency + Float(cycle[0].filter) * ToneBank.frequencyStep
        return AlarmDetection(pattern: pattern, time: next, cycleStart: cycle[0].start, frequency: frequency)
    }
}
