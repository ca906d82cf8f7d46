/// What the RTSP server has fed its shared stream since it started.
public struct RTSPStats: Sendable, Equatable {
    /// Video access units handed to the stream (once each, however many clients watch).
    public var videoFramesPushed = 0
    /// Video access units dropped because the stream's queue was full (the next keyframe resumes it).
    public var videoFramesDropped = 0
    /// Delta frames skipped while the stream waited for a keyframe (at its start and after a drop).
    public var videoFramesAwaitingKeyframe = 0
    /// Audio chunks handed to the stream.
    public var audioChunksPushed = 0
    /// Audio chunks dropped because the stream's queue was full.
    public var audioChunksDropped = 0
    /// How many times the shared stream was set up (its first client after none); all clients share one.
    public var streamsConfigured = 0

    /// No counts yet.
    public init() {}
}
