/// What the virtual microphone plays, period by period: the agent's samples through a ``FractionalResampler``
/// steered by a ``DriftController``, and silence while there is nothing to play. A plain value, driven by the
/// playback thread (``nextPeriod(deviceDelay:)``) and the session (``receive(_:firstSampleTime:)``), tested with
/// explicit readings.
///
/// - Before playing, the buffer fills to its target (the device's buffer plus room for the packets' arrival in
///   bursts); then it plays, and the controller holds the fill at the target.
/// - The target follows the arrival's jitter. It starts with 60 ms for it (an emulated guest or a busy Wi-Fi link
///   stalls delivery for 100 ms and more now and then; the picture is held back to match, so this costs latency,
///   not sync). Each time the buffer runs dry it grows by as long as it stayed dry, at least 20 ms and at most
///   100 ms (to at most 300 ms in all), and after each 10 s without running dry it shrinks by 5 ms again, never
///   below the 60 ms it started with (so a steady stream's target, and with it the drift measured from the
///   controller's corrections, stays put).
/// - Input arriving while the buffer is far over its target (a stall of the network, then a burst) is cut back to
///   the target at once and counted, so the delay never grows.
/// - When the buffer runs dry mid-stream the period is completed with silence, counted, and the buffer fills to
///   its target again before playing on.
public struct MicrophoneFeed: Sendable {
    /// Where the feed is.
    public enum State: String, Sendable, Equatable {
        /// No agent audio: silence.
        case idle
        /// Filling to the target before playing (silence meanwhile).
        case buffering
        /// Playing the agent's samples.
        case playing
    }

    /// What happened, counted.
    public struct Counters: Sendable, Equatable {
        /// Silent frames played because the buffer ran dry while the agent was streaming.
        public var underrunFrames = 0
        /// Times the buffer ran dry while the agent was streaming.
        public var underruns = 0
        /// Input frames cut because the buffer was far over its target.
        public var trimmedFrames = 0
        /// Input frames dropped because the queue was full.
        public var droppedFrames = 0
        /// Agent frames played.
        public var playedFrames = 0
    }

    /// One period to play.
    public struct Period: Sendable {
        /// Interleaved stereo samples, exactly the period's frames.
        public var samples: [Float]
        /// The agent's capture time of the period's first frame, when it holds agent samples.
        public var captureTime: UInt64?
    }

    /// Frames per period written to the device.
    public let periodFrames: Int
    /// The fill (queued plus in the device) held while playing: the base target plus the jitter allowance.
    public var targetFrames: Int { baseTargetFrames + jitterFrames }
    /// The target without the jitter allowance.
    public let baseTargetFrames: Int
    /// The allowance for the arrival's jitter, learnt from running dry.
    public private(set) var jitterFrames: Int
    /// The most allowance.
    public let maximumJitterFrames: Int
    /// The least allowance: the one it starts with.
    public let minimumJitterFrames: Int
    private let jitterStep: Int
    private let largestJitterStep: Int
    /// Silent frames since the buffer last ran dry, while it fills again (nil when it has not run dry).
    private var drySpellFrames: Int?
    private let jitterDecay: Int
    private let decayAfterFrames: Int
    private var framesSinceRunningDry = 0
    /// The most input frames queued; beyond it the oldest are dropped.
    public let capacityFrames: Int
    /// Over the target by more than this, the buffer is cut back to the target.
    public let trimThresholdFrames: Int
    /// Where the feed is.
    public private(set) var state: State = .idle
    /// The counters.
    public private(set) var counters = Counters()
    /// The drift control.
    public private(set) var controller: DriftController
    private var resampler = FractionalResampler()
    private var streaming = false

    /// A feed writing `periodFrames` per period to a device holding `deviceBufferFrames`, with packets of up to
    /// `packetFrames` arriving, starting with `initialJitterFrames` (60 ms when nil) for their jitter.
    public init(periodFrames: Int = 480, deviceBufferFrames: Int = 1_920, packetFrames: Int = 1_024, sampleRate: Int = 48_000,
                initialJitterFrames: Int? = nil) {
        self.periodFrames = periodFrames
        let target = deviceBufferFrames + max(2 * packetFrames, 2 * periodFrames, sampleRate / 50)
        baseTargetFrames = target
        maximumJitterFrames = sampleRate * 3 / 10
        jitterStep = sampleRate / 50
        largestJitterStep = sampleRate / 10
        minimumJitterFrames = min(maximumJitterFrames, max(0, initialJitterFrames ?? sampleRate * 6 / 100))
        jitterFrames = minimumJitterFrames
        jitterDecay = sampleRate / 200
        decayAfterFrames = sampleRate * 10
        capacityFrames = sampleRate / 2
        trimThresholdFrames = max(sampleRate / 10, 2 * packetFrames)
        controller = DriftController(targetFrames: Double(target + jitterFrames), sampleRate: Double(sampleRate))
    }

    /// The agent's samples (interleaved stereo) whose first frame was captured at `firstSampleTime`.
    public mutating func receive(_ samples: [Float], firstSampleTime: UInt64) {
        if !streaming {
            // A new session: its samples start an empty queue (what was left of the last one is dropped, as its
            // times belong to another run of the agent's clock).
            resampler.removeAll()
            streaming = true
            state = .buffering
        }
        resampler.append(samples, firstSampleTime: firstSampleTime)
        let over = Int(resampler.queuedFrames) - capacityFrames
        if over > 0 {
            resampler.skip(frames: Double(over))
            counters.droppedFrames += over
        }
    }

    /// The agent went away: what is queued plays out, then silence.
    public mutating func sessionLost() {
        streaming = false
    }

    /// The next period, given the frames the device holds now.
    public mutating func nextPeriod(deviceDelay: Int) -> Period {
        var output: [Float] = []
        output.reserveCapacity(periodFrames * 2)
        let queued = Int(resampler.queuedFrames)
        switch state {
        case .idle:
            break
        case .buffering:
            if queued + deviceDelay >= targetFrames || (!streaming && queued > 0) {
                state = .playing
                if let dry = drySpellFrames {
                    // Running dry added the least step; a longer dry spell adds the rest of its length.
                    drySpellFrames = nil
                    let extra = min(dry, largestJitterStep) - jitterStep
                    if extra > 0 {
                        jitterFrames = min(maximumJitterFrames, jitterFrames + extra)
                        controller.targetFrames = Double(targetFrames)
                    }
                }
                controller.restart()
            } else if !streaming {
                state = .idle
                drySpellFrames = nil
            } else if drySpellFrames != nil {
                drySpellFrames! += periodFrames
            }
        case .playing:
            break
        }
        var captureTime: UInt64?
        if state == .playing {
            let excess = queued + deviceDelay - targetFrames
            if streaming && excess > trimThresholdFrames {
                resampler.skip(frames: Double(excess))
                counters.trimmedFrames += excess
                controller.restart()
            }
            let step = controller.step(fill: Int(resampler.queuedFrames) + deviceDelay, elapsedFrames: periodFrames)
            captureTime = resampler.readTime
            let produced = resampler.read(frames: periodFrames, step: streaming ? step : 1, into: &output)
            counters.playedFrames += produced
            framesSinceRunningDry += produced
            if framesSinceRunningDry >= decayAfterFrames {
                framesSinceRunningDry = 0
                jitterFrames = max(minimumJitterFrames, jitterFrames - jitterDecay)
                controller.targetFrames = Double(targetFrames)
            }
            if produced < periodFrames {
                if streaming {
                    counters.underruns += 1
                    counters.underrunFrames += periodFrames - produced
                    state = .buffering
                    framesSinceRunningDry = 0
                    drySpellFrames = periodFrames - produced
                    jitterFrames = min(maximumJitterFrames, jitterFrames + jitterStep)
                    controller.targetFrames = Double(targetFrames)
                } else {
                    state = .idle
                    resampler.removeAll()
                }
            }
        }
        if output.count < periodFrames * 2 { output.append(contentsOf: repeatElement(0, count: periodFrames * 2 - output.count)) }
        return Period(samples: output, captureTime: captureTime)
    }
}
