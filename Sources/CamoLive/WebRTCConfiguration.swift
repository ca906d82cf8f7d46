/// Where talkback (a viewer's microphone) plays.
public enum SpeakerOutput: Sendable, Hashable {
    /// No speaker: talkback is not offered.
    case none
    /// An ALSA output device, e.g. "hw:1,0" or "plughw:CARD=Device"; "auto" or "default" is ALSA's default output.
    case alsa(device: String)
    /// A WAV file (16-bit stereo, 48 kHz), rewritten at each talkback start; for tests and diagnostics.
    case wavFile(path: String)
}

/// How ``WebRTCLiveView`` sets up its viewers.
public struct WebRTCConfiguration: Sendable, Hashable {
    /// A STUN server, "stun://host:port" or "host:port"; nil gathers host candidates only (LAN viewers).
    public var stunServer: String?
    /// Where talkback plays; `.none` turns talkback off.
    public var speaker: SpeakerOutput
    /// How many video access units a viewer may have waiting; beyond that frames are dropped and the viewer
    /// resumes at the next keyframe.
    public var videoQueueFrames: Int
    /// The UDP ports ICE may use (e.g. for a firewall rule); nil lets the system choose.
    public var portRange: ClosedRange<UInt16>?

    /// A configuration; by default host candidates only, no speaker, a 30-frame queue per viewer, any port.
    public init(
        stunServer: String? = nil, speaker: SpeakerOutput = .none, videoQueueFrames: Int = 30,
        portRange: ClosedRange<UInt16>? = nil
    ) {
        self.stunServer = stunServer
        self.speaker = speaker
        self.videoQueueFrames = videoQueueFrames
        self.portRange = portRange
    }
}

/// What ``WebRTCLiveView/viewers`` reports about one viewer.
public struct WebRTCViewerStats: Sendable, Hashable {
    /// The viewer's id (as given to ``WebRTCLiveView/answer(offer:id:)``).
    public var id: String
    /// The peer connection's state: "new", "connecting", "connected", "disconnected", "failed" or "closed".
    public var state: String
    /// Video access units handed to the viewer's pipeline.
    public var videoFramesSent: Int
    /// Video access units dropped because the viewer's queue was full (the frames skipped afterwards while it
    /// waits for the next keyframe are not counted).
    public var videoFramesDropped: Int
    /// Opus packets handed to the viewer's pipeline.
    public var audioPackets: Int
    /// Whether this viewer is the current talker.
    public var talking: Bool

    /// Stats from their parts.
    public init(id: String, state: String, videoFramesSent: Int, videoFramesDropped: Int, audioPackets: Int, talking: Bool) {
        self.id = id
        self.state = state
        self.videoFramesSent = videoFramesSent
        self.videoFramesDropped = videoFramesDropped
        self.audioPackets = audioPackets
        self.talking = talking
    }
}
