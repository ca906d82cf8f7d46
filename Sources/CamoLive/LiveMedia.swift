import CamoMedia

/// One H.264 access unit of the agent's shared rendition, as live view (WebRTC viewers, the RTSP server) takes it.
/// Every viewer gets the same bytes: live view packetizes and encrypts, it never encodes video again.
public struct LiveAccessUnit: Sendable {
    /// Annex B bytes; a keyframe carries SPS and PPS before its IDR slice.
    public var data: [UInt8]
    /// Whether it is a keyframe (IDR): a viewer that starts or lost frames resumes here.
    public var isKeyframe: Bool
    /// When the frame was captured, agent monotonic clock, ns.
    public var captureTime: UInt64
    /// The picture size.
    public var size: VideoSize

    /// An access unit from its parts.
    public init(data: [UInt8], isKeyframe: Bool, captureTime: UInt64, size: VideoSize) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.captureTime = captureTime
        self.size = size
    }
}
