import CamoMedia

/// What a slot sends when the pacer runs late. Preparing a slot's new frame (a JPEG encode) takes time, and on a slow
/// machine (a small board, an emulated guest) it can end after the next slot was due. A slot that starts more than
/// ``lateSlots`` slots late sends the frame last sent again, flagged as a repeat: its encoded bytes are kept, so it
/// costs nothing, and the pacer catches up instead of falling further behind until it has to skip slots (which
/// studios see as dropped frames). The next slot then takes the newest frame. A frame the pacer offers as a repeat
/// although no studio got it (it was shed) goes out as a new frame. Two slots of slack let a short hiccup pass
/// without losing a frame; an encoder slower than a slot settles at one encode per slot it costs, about two slots
/// behind.
///
/// A plain value used by the controller's pacing loop and tested without sockets or clocks.
struct SlotCatchUp {
    /// The slot period in nanoseconds (30 fps).
    let period: UInt64
    /// A slot that starts more than this many periods late repeats the last frame.
    static let lateSlots: UInt64 = 2
    /// The frame the last slot sent.
    private(set) var lastSent: PacedFrame?
    /// How many slots went out as repeats because the pacer was late.
    private(set) var shedSlots = 0

    init(period: UInt64 = 1_000_000_000 / UInt64(MediaContract.fps)) {
        self.period = period
    }

    /// The frame slot `paced.slot` sends, when the pacing loop starts the slot at `now`.
    mutating func frame(for paced: PacedFrame, at now: UInt64) -> PacedFrame {
        var outgoing = paced
        if let last = lastSent, paced.inputIndex != last.inputIndex {
            if now > paced.slotTime &+ Self.lateSlots &* period {
                outgoing = PacedFrame(frame: last.frame, slot: paced.slot, slotTime: paced.slotTime, isRepeat: true, inputIndex: last.inputIndex)
                shedSlots += 1
            } else if paced.isRepeat {
                outgoing.isRepeat = false
            }
        }
        lastSent = outgoing
        return outgoing
    }
}
