import Foundation

/// What a running `camo-studio camera` is feeding, as it writes it to its ``FeedStatusFile`` about once a second
/// and `camo-studio status` reads it back.
public struct FeedStatus: Codable, Sendable, Equatable {
    /// Where the feed is with its agent.
    public enum State: String, Codable, Sendable {
        /// Finding and connecting to the agent for the first time.
        case connecting
        /// Receiving the agent's picture and writing it to the device.
        case streaming
        /// The connection was lost; the device gets a stand-in picture until it is back.
        case reconnecting
    }

    /// The latest measured figures.
    public struct Figures: Codable, Sendable, Equatable {
        /// Frames written per second.
        public var framesPerSecond: Double
        /// The received stream's bitrate in kbit/s.
        public var kilobitsPerSecond: Double
        /// Capture-to-write latency in milliseconds, when known.
        public var latencyMilliseconds: Double?

        /// Figures with these values.
        public init(framesPerSecond: Double, kilobitsPerSecond: Double, latencyMilliseconds: Double? = nil) {
            self.framesPerSecond = framesPerSecond
            self.kilobitsPerSecond = kilobitsPerSecond
            self.latencyMilliseconds = latencyMilliseconds
        }
    }

    /// The camera process (the status file is named after it).
    public var pid: Int32
    /// The agent's name ("desk").
    public var agentName: String
    /// The agent's id, when known.
    public var agentID: String?
    /// The agent's address as HOST:PORT, once connected or given with --connect.
    public var address: String?
    /// Where the feed is.
    public var state: State
    /// The loopback device written to ("/dev/video10").
    public var videoDevice: String
    /// What is written to it ("YUYV 1280x720 at 30 fps").
    public var videoFormat: String
    /// The microphone other programs record from ("hw:CamoMic,1,0"); nil without one.
    public var microphoneDevice: String?
    /// The microphone's measured clock drift, agent against device, in ppm; nil without a microphone.
    public var microphoneDriftPPM: Double?
    /// The microphone's buffer now (its target: the device's buffer plus the allowance for the arrival's jitter), in
    /// milliseconds; nil without a microphone.
    public var microphoneBufferMilliseconds: Double?
    /// Times the microphone's buffer ran dry while the agent streamed; nil without a microphone.
    public var microphoneUnderruns: Int?
    /// Frames written to the device since the start.
    public var framesWritten: Int
    /// Of those, the stand-in frames written while reconnecting.
    public var reconnectingFramesWritten: Int
    /// How many times the connection was lost and made again.
    public var reconnects: Int
    /// The latest figures; nil before the first measurement.
    public var last: Figures?
    /// When this was written.
    public var updatedAt: Date

    /// A status with these values.
    public init(
        pid: Int32 = getpid(), agentName: String, agentID: String? = nil, address: String? = nil, state: State,
        videoDevice: String, videoFormat: String, microphoneDevice: String? = nil, framesWritten: Int = 0,
        reconnectingFramesWritten: Int = 0, reconnects: Int = 0, last: Figures? = nil, updatedAt: Date = Date()
    ) {
        self.pid = pid
        self.agentName = agentName
        self.agentID = agentID
        self.address = address
        self.state = state
        self.videoDevice = videoDevice
        self.videoFormat = videoFormat
        self.microphoneDevice = microphoneDevice
        self.framesWritten = framesWritten
        self.reconnectingFramesWritten = reconnectingFramesWritten
        self.reconnects = reconnects
        self.last = last
        self.updatedAt = updatedAt
    }

    /// One line for `camo-studio status`:
    /// `desk → /dev/video10 (YUYV 1280x720 at 30 fps, streaming, 29.9 fps, 4200 kbit/s, 41 ms) and hw:CamoMic,1,0`.
    public var summary: String {
        var parts = [videoFormat, state.rawValue]
        if let last {
            parts.append(String(format: "%.1f fps", last.framesPerSecond))
            parts.append(String(format: "%.0f kbit/s", last.kilobitsPerSecond))
            if let latency = last.latencyMilliseconds { parts.append(String(format: "%.0f ms", latency)) }
        }
        if reconnects > 0 { parts.append(reconnects == 1 ? "1 reconnect" : "\(reconnects) reconnects") }
        var sound: [String] = []
        if let drift = microphoneDriftPPM { sound.append(String(format: "drift %+.0f ppm", drift)) }
        if let buffer = microphoneBufferMilliseconds { sound.append(String(format: "buffer %.0f ms", buffer)) }
        if let underruns = microphoneUnderruns, underruns > 0 { sound.append(underruns == 1 ? "1 underrun" : "\(underruns) underruns") }
        let microphone = microphoneDevice.map { " and \($0)\(sound.isEmpty ? "" : " (\(sound.joined(separator: ", ")))")" } ?? ""
        return "\(agentName) → \(videoDevice) (\(parts.joined(separator: ", ")))\(microphone)"
    }
}
