import CamoMedia

/// What a studio session tells the media fan-out: whether it takes media now (its hello was accepted and it has not
/// paused) and in what settings.
protocol MediaRecipient {
    /// True once the session streams and until it pauses or ends.
    var takesMedia: Bool { get }
    /// The size, codec and quality the studio asked for.
    var settings: VideoSettings { get }
}

/// Where media goes: the pacer that turns offered frames into 30 slots a second, the privacy switch (nothing goes
/// out while paused), the microphone mute (silence at the same cadence) and the camera-lost flag (the no-signal
/// picture), and which studios get each slot and each audio chunk.
///
/// A plain value, kept under the controller's lock and tested without sockets; `Session` is the controller's handle in
/// production and anything in tests.
struct MediaFanOut {
    /// Paces video while the controller runs; nil while it is stopped (offers are dropped then).
    private(set) var pacer: FramePacer?
    /// The privacy switch: studios stay connected and get nothing.
    var paused = false
    /// Studios get silence with the audio's timestamps and sizes.
    var microphoneMuted = false
    /// The camera is gone: slots carry the no-signal picture.
    var cameraLost = false

    /// What one slot sends, and to whom.
    struct Slot<Session> {
        /// The frame for the slot; nil before the first frame was offered.
        var frame: PacedFrame?
        /// The studios that take it (none while paused).
        var recipients: [Session]
        /// The frame is to be sent as the no-signal picture.
        var noSignal: Bool
    }

    /// Starts pacing at `startTime` (the controller started); the first frame offered sets the slots' phase.
    mutating func startPacing(at startTime: UInt64) {
        var pacer = FramePacer(startTime: startTime)
        pacer.alignsToFirstFrame = true
        self.pacer = pacer
    }

    /// Stops pacing (the controller stopped): later offers are dropped and ``emit(slot:to:)`` yields no frame.
    mutating func stopPacing() {
        pacer = nil
    }

    /// When slot `k` is due; nil while not pacing.
    func slotTime(_ k: UInt64) -> UInt64? {
        pacer?.slotTime(k)
    }

    /// Offers a frame that reached the controller at `time` (``FramePacer/assignmentTime(captureTime:arrival:)``).
    mutating func offer(_ frame: VideoFrame, at time: UInt64) {
        pacer?.offer(frame, at: time)
    }

    /// The video source started a new stream (``FramePacer/sourceRestarted()``).
    mutating func sourceRestarted() {
        pacer?.sourceRestarted()
    }

    /// Slot `k`'s frame and the sessions that take it: every session that takes media, none while paused.
    mutating func emit<Session: MediaRecipient>(slot k: UInt64, to sessions: [Session]) -> Slot<Session> {
        Slot(frame: pacer?.emit(slot: k), recipients: paused ? [] : sessions.filter(\.takesMedia), noSignal: cameraLost)
    }

    /// The sessions an audio chunk goes to (none while paused), and whether it goes as silence (muted). A lazy view:
    /// a chunk comes every few milliseconds, and picking its recipients allocates nothing.
    func audioRecipients<Session: MediaRecipient>(
        among sessions: [Session]
    ) -> (recipients: LazyFilterSequence<[Session]>, silenced: Bool) {
        ((paused ? [] : sessions).lazy.filter(\.takesMedia), microphoneMuted)
    }

    /// True while a session that takes media wants JPEG at `size` (and nothing is paused): frames of that size are
    /// worth converting to JPEG's planes before they reach the pacer.
    func wantsJPEGPlanes<Session: MediaRecipient>(for size: VideoSize, among sessions: [Session]) -> Bool {
        !paused && sessions.contains { $0.takesMedia && $0.settings.codec == .jpeg && $0.settings.size == size }
    }
}

extension SessionHandle: MediaRecipient {
    var takesMedia: Bool { info.takesMedia }
    var settings: VideoSettings { info.settings }
}
