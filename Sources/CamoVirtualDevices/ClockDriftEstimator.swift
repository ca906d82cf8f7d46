/// The drift of the agent's clock against this machine's, measured from the agent's audio: each packet's capture
/// time on the agent's clock against its arrival on ours, fitted by least squares. The arrival's jitter (the
/// network's, the scheduler's) averages out over the fit, so the estimate sharpens with time: the virtual
/// microphone reports it (snd-aloop's clock is this machine's). A plain value.
public struct ClockDriftEstimator: Sendable, Equatable {
    /// The fit is reported once its points span this long.
    public let minimumSpanNanos: UInt64
    private var origin: (local: UInt64, remote: UInt64)?
    private var n = 0.0, sumX = 0.0, sumY = 0.0, sumXX = 0.0, sumXY = 0.0
    private var lastX = 0.0

    /// An empty fit.
    public init(minimumSpanNanos: UInt64 = 20_000_000_000) {
        self.minimumSpanNanos = minimumSpanNanos
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.n == b.n && a.sumX == b.sumX && a.sumY == b.sumY && a.sumXX == b.sumXX && a.sumXY == b.sumXY
    }

    /// One packet: captured at `remote` on the agent's clock, arrived at `local` on ours (both ns).
    public mutating func add(local: UInt64, remote: UInt64) {
        guard let origin else {
            origin = (local, remote)
            n = 1
            return
        }
        let x = Double(Int64(bitPattern: local &- origin.local)) / 1e9
        // The remote clock's advance beyond ours, in seconds: small numbers, so the fit keeps its precision.
        let y = Double(Int64(bitPattern: remote &- origin.remote)) / 1e9 - x
        n += 1
        sumX += x
        sumY += y
        sumXX += x * x
        sumXY += x * y
        lastX = max(lastX, x)
    }

    /// The seconds the fit spans.
    public var spanSeconds: Double { lastX }

    /// The agent's clock against ours in ppm (positive: the agent's runs fast), once the fit spans long enough.
    public var driftPPM: Double? {
        guard lastX * 1e9 >= Double(minimumSpanNanos) else { return nil }
        let denominator = n * sumXX - sumX * sumX
        guard denominator > 0 else { return nil }
        return (n * sumXY - sumX * sumY) / denominator * 1e6
    }

    /// Starts again (a new session: the agent's clock may be another run's).
    public mutating func reset() {
        self = ClockDriftEstimator(minimumSpanNanos: minimumSpanNanos)
    }
}
