/// The figures the preview shows over the picture: "29.9 fps  4200 kbit/s  41 ms  streaming".
public struct PreviewFigures: Sendable, Hashable {
    /// Frames per second arriving from the agent.
    public var fps: Double
    /// The stream's bitrate in kbit/s, or nil when unknown (the figure is then left out).
    public var kbitPerSecond: Double?
    /// Capture-to-display latency in milliseconds, or nil when unknown (left out).
    public var latencyMs: Double?
    /// The connection's state in a word or two, e.g. `streaming` or `reconnecting…`.
    public var state: String

    /// Figures to show with a frame.
    public init(fps: Double, kbitPerSecond: Double? = nil, latencyMs: Double? = nil, state: String) {
        self.fps = fps
        self.kbitPerSecond = kbitPerSecond
        self.latencyMs = latencyMs
        self.state = state
    }

    /// The overlay's line: fps with one decimal, whole kbit/s and milliseconds, then the state, two spaces apart.
    public var overlayText: String {
        var parts = [Self.oneDecimal(fps) + " fps"]
        if let kbitPerSecond { parts.append("\(Self.whole(kbitPerSecond)) kbit/s") }
        if let latencyMs { parts.append("\(Self.whole(latencyMs)) ms") }
        if !state.isEmpty { parts.append(state) }
        return parts.joined(separator: "  ")
    }

    /// `value` rounded to a whole number; 0 for NaN, infinity or a negative value.
    private static func whole(_ value: Double) -> Int {
        guard value.isFinite, value > 0 else { return 0 }
        return Int(min(value, 1e12).rounded())
    }

    /// `value` with one decimal, e.g. `29.9`; `0.0` for NaN, infinity or a negative value.
    private static func oneDecimal(_ value: Double) -> String {
        let tenths = whole(value * 10)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
