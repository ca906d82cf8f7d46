/// Holds the virtual microphone's buffer at its target by steering the resampling ratio: a PI controller on the
/// buffer's fill, which is how two sample clocks (the agent's capture card and the loopback's timer) that differ by
/// a few hundred parts per million are held together without a gap or a growing delay.
///
/// The fill (frames queued plus frames in the device) is low-pass filtered first, so the saw-tooth of packet arrival
/// does not reach the pitch. The correction, averaged over everything played, is the clocks' true difference:
/// ``driftPPM``. (The integral term alone swings around it: with whole packets arriving, the fill steps by a packet
/// every few tens of seconds at a few hundred ppm, and a ten-second loop follows each step.) A plain value; the
/// caller feeds it one reading per period.
public struct DriftController: Sendable, Equatable {
    /// The fill to hold, in frames.
    public var targetFrames: Double
    /// The sample rate (frames per second) the fill is read at.
    public let sampleRate: Double
    /// Proportional gain: correction per frame of error.
    public let proportionalGain: Double
    /// Integral gain: correction per frame of error per second.
    public let integralGain: Double
    /// Time constant of the fill's low-pass filter, in seconds.
    public let filterSeconds: Double
    /// The largest correction either way (0.005 = 0.5 %, about 9 cents of pitch).
    public let limit: Double
    /// The largest share of the proportional term (0.001): a burst or a stall moves the pitch at most this much,
    /// the integral term follows the clocks' real difference up to ``limit``.
    public let proportionalLimit: Double

    /// The filtered fill, once there is one.
    public private(set) var filteredFill: Double?
    /// The integral term: the drift found so far (consumed input frames per output frame, minus one).
    public private(set) var integral: Double = 0
    /// The last correction given.
    public private(set) var correction: Double = 0
    /// Σ correction · frames and Σ frames over every step: their ratio is the drift.
    private var correctionFrames: Double = 0
    private var framesStepped: Double = 0

    /// A controller holding `targetFrames`. The default gains make a critically damped loop with a time constant
    /// of about ten seconds at 48 kHz: slow enough to be inaudible, fast enough to take up 1000 ppm in a minute.
    public init(targetFrames: Double, sampleRate: Double = 48_000, proportionalGain: Double? = nil, integralGain: Double? = nil,
                filterSeconds: Double = 1, limit: Double = 0.005, proportionalLimit: Double = 0.001) {
        self.targetFrames = targetFrames
        self.sampleRate = sampleRate
        // s² + R·Kp·s + R·Ki = 0 with ωn = 0.1 rad/s and ζ = 1: R·Kp = 2ζωn, R·Ki = ωn².
        self.proportionalGain = proportionalGain ?? 0.2 / sampleRate
        self.integralGain = integralGain ?? 0.01 / sampleRate
        self.filterSeconds = filterSeconds
        self.limit = limit
        self.proportionalLimit = proportionalLimit
    }

    /// The measured clock difference in parts per million: the mean correction over every frame played, positive
    /// when the agent's clock runs fast against the device's (more input arrives than the device plays, so more is
    /// consumed per output frame). Its error is the fill's change over the frames played: under 10 ppm after ten
    /// minutes, about 1 ppm after an hour.
    public var driftPPM: Double { framesStepped > 0 ? correctionFrames / framesStepped * 1e6 : 0 }

    /// Takes one reading of the fill after `elapsedFrames` output frames and returns the step to resample the next
    /// period with: input frames consumed per output frame (1 + correction).
    public mutating func step(fill: Int, elapsedFrames: Int) -> Double {
        let dt = Double(elapsedFrames) / sampleRate
        let alpha = min(1, dt / max(dt, filterSeconds))
        let filtered = filteredFill.map { $0 + alpha * (Double(fill) - $0) } ?? Double(fill)
        filteredFill = filtered
        let error = filtered - targetFrames
        integral = min(limit, max(-limit, integral + integralGain * error * dt))
        let proportional = min(proportionalLimit, max(-proportionalLimit, proportionalGain * error))
        correction = min(limit, max(-limit, proportional + integral))
        correctionFrames += correction * Double(elapsedFrames)
        framesStepped += Double(elapsedFrames)
        return 1 + correction
    }

    /// Forgets the filtered fill (after the buffer was refilled or trimmed) but keeps the integral term: the clocks
    /// are the same ones. (Seeding it from a measurement was tried: under emulation the timestamps' fit swings by
    /// thousands of ppm in its first minutes and pulled the pitch off by 0.5 %.)
    public mutating func restart() {
        filteredFill = nil
        correction = integral
    }
}
