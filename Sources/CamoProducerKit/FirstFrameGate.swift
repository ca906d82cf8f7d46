import Foundation

/// Decides, for each session, whether a slot's frame may go out before the session has had any video.
///
/// A source may stop delivering while no studio watches (the camera does, to save work). The pacer's last frame
/// is then old by the time a studio connects, and the studio's first slots, before the source's next frame,
/// would repeat it. So a session starts with a new frame: repeats are held back until the session has had a
/// frame, for at most ``grace`` slots. After that a repeat goes out too, so that a source that sent one frame and
/// stopped (the no-signal picture of a lost camera, a producer that enqueued a single frame) still reaches the
/// studio. Once a session has had a frame, every slot goes out.
///
/// A plain value, owned by the pacer task.
struct FirstFrameGate {
    /// Slots a new session waits for a new frame before it takes a repeat.
    static let grace: UInt64 = 10

    private var started: Set<UUID> = []
    /// The slot in which each session that has had no frame yet was first seen.
    private var waitingSince: [UUID: UInt64] = [:]

    /// True when slot `slot`'s frame (a repeat or not) goes to `session`.
    mutating func admits(_ session: UUID, isRepeat: Bool, slot: UInt64) -> Bool {
        if started.contains(session) { return true }
        let since = waitingSince[session] ?? slot
        if isRepeat && slot - since < Self.grace {
            waitingSince[session] = since
            return false
        }
        waitingSince[session] = nil
        started.insert(session)
        return true
    }

    /// Forgets every session not in `sessions` (those that ended, or stopped taking media: when one takes media
    /// again, it starts with a new frame again).
    /// Allocates nothing unless a session is to be forgotten (it runs every slot).
    mutating func retain(_ sessions: some Collection<UUID>) {
        if started.contains(where: { !sessions.contains($0) }) { started = started.filter { sessions.contains($0) } }
        if waitingSince.keys.contains(where: { !sessions.contains($0) }) {
            waitingSince = waitingSince.filter { sessions.contains($0.key) }
        }
    }
}
