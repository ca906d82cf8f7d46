import CamoMedia

/// Makes a frame's ``JPEGPlanes`` on the thread that enqueues it, so that the pacer, which encodes every JPEG
/// session's frame in its slot, only compresses. The colour conversion (a quarter of a 720p encode) then runs
/// beside the pacer's compression of the previous frame instead of inside the pacer's slot.
///
/// The planes are written into a ring of buffers. A buffer comes round again only after ``ringSize`` frames, by
/// which time the pacer has normally sent and dropped its frame, so nothing is allocated per frame in steady
/// state (a buffer still in use is copied on write, never overwritten).
struct JPEGPlaneMaker {
    /// Buffers in the ring: the pacer's pending frames (``FramePacer/maxPendingSlots``), plus the one it sends.
    static let ringSize = FramePacer.maxPendingSlots + 1

    private var ring: [[UInt8]] = []
    private var next = 0

    /// Sets `frame.jpegPlanes` (a frame that breaks the contract is left as it is; the encoder refuses it later).
    mutating func attach(to frame: inout VideoFrame) {
        if ring.isEmpty { ring = Array(repeating: [], count: Self.ringSize) }
        next = (next + 1) % ring.count
        var storage = ring[next]
        ring[next] = []
        frame.jpegPlanes = try? JPEGPlanes.converting(frame, into: &storage)
        ring[next] = storage
    }
}
