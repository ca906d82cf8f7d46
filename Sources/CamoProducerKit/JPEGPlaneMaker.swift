import CamoMedia

/// Makes a frame's ``JPEGPlanes`` on the thread that enqueues it, so that the pacer, which encodes every JPEG
/// session's frame in its slot, only compresses. The colour conversion then runs beside the pacer's compression
/// of the previous frame instead of inside the pacer's slot (under emulation it is a quarter of a 720p encode;
/// natively about a tenth).
///
/// The planes are written into a ring of buffers. A buffer comes round again only after ``ringSize`` frames, by
/// which time the pacer has normally sent and dropped its frame, so nothing is allocated per frame in steady
/// state (a buffer still in use is copied on write, never overwritten). Every frame enqueued while a JPEG session
/// watches is converted, including frames the pacer will decimate (a camera faster than 30 fps).
///
/// Not thread-safe: the controller keeps it behind a lock, taken only to hand a buffer out and back, not while
/// converting.
struct JPEGPlaneMaker {
    /// Buffers in the ring: the pacer's pending frames (``FramePacer/maxPendingSlots``), plus the one it sends.
    static let ringSize = FramePacer.maxPendingSlots + 1

    private var ring: [[UInt8]] = []
    private var next = 0

    /// The next buffer of the ring and its place (the ring's slot is empty until ``giveBack(_:at:)``).
    mutating func take() -> (storage: [UInt8], at: Int) {
        if ring.isEmpty { ring = Array(repeating: [], count: Self.ringSize) }
        next = (next + 1) % ring.count
        let storage = ring[next]
        ring[next] = []
        return (storage, next)
    }

    /// Returns a buffer from ``take()`` to its place (dropped if ``release()`` came in between).
    mutating func giveBack(_ storage: [UInt8], at index: Int) {
        if index < ring.count { ring[index] = storage }
    }

    /// Lets the buffers go (no JPEG session any more); frames still holding planes keep theirs.
    mutating func release() {
        if !ring.isEmpty { ring = [] }
    }
}
