import CamoWire

/// One fragment the outbox hands to the sender: the channel, whether it ends its message, and its bytes as
/// slices of the queued message (a video fragment may span the header and the pixels), so nothing is copied
/// here; the wire gathers them once when it seals the record.
struct OutboxFragment: Equatable {
    var channel: WireChannel
    var isFinal: Bool
    var head: ArraySlice<UInt8> = []
    var body: ArraySlice<UInt8>

    init(channel: WireChannel, isFinal: Bool, head: ArraySlice<UInt8> = [], body: ArraySlice<UInt8>) {
        self.channel = channel
        self.isFinal = isFinal
        self.head = head
        self.body = body
    }

    init(channel: WireChannel, isFinal: Bool, bytes: [UInt8]) {
        self.init(channel: channel, isFinal: isFinal, body: bytes[...])
    }

    /// The fragment's bytes in one array (tests and diagnostics; the send path uses ``wireFragment``).
    var bytes: [UInt8] { Array(head) + Array(body) }

    /// The fragment as the wire seals it.
    var wireFragment: WireFragment { WireFragment(channel: channel, isFinal: isFinal, head: head, body: body) }

    static func == (lhs: OutboxFragment, rhs: OutboxFragment) -> Bool {
        lhs.channel == rhs.channel && lhs.isFinal == rhs.isFinal && lhs.bytes == rhs.bytes
    }
}

/// A video message waiting to be sent: its encoded header and its pixel (or JPEG) bytes, kept apart so a
/// large frame is never concatenated into one more array before it is fragmented.
struct OutgoingVideo: Sendable {
    var header: [UInt8]
    var data: [UInt8]
    var isRepeat: Bool
    var totalLength: Int { header.count + data.count }
}

/// What one session still has to send, and in which order. A plain value: no sockets, no clocks.
///
/// Order of service: control messages first, then audio, then video. Each call to ``nextFragment(maxPayload:)``
/// yields one fragment, so an audio message that arrives while a large frame is half sent goes out between that
/// frame's fragments. Video keeps at most one frame in flight plus one waiting: a newer frame replaces the
/// waiting one (newest wins) and the replaced one is counted in ``droppedFrames``. Audio is never dropped; if
/// it backs up beyond ``maxAudioBytes`` the peer has stalled and ``enqueueAudio(_:)`` says so.
struct SessionOutbox {
    /// The most audio that may wait before the session counts as stalled (about 20 s of 48 kHz stereo float).
    var maxAudioBytes: Int = 8 * 1024 * 1024

    private var control: [[UInt8]] = []
    private var audio: [[UInt8]] = []
    private var audioHead = 0
    private var audioOffset = 0
    private(set) var queuedAudioBytes = 0

    private var inFlight: OutgoingVideo?
    private var inFlightOffset = 0
    private var waiting: OutgoingVideo?

    /// Frames replaced by a newer one before they were started (newest wins).
    private(set) var droppedFrames: UInt64 = 0
    /// Frames whose last fragment has been handed out.
    private(set) var sentFrames: UInt64 = 0
    /// Frames handed out that were pacer repeats.
    private(set) var sentRepeats: UInt64 = 0
    /// Audio messages whose last fragment has been handed out.
    private(set) var sentAudioMessages: UInt64 = 0

    /// Whether anything waits to be sent.
    var isEmpty: Bool {
        control.isEmpty && audioHead == audio.count && inFlight == nil && waiting == nil
    }

    /// Queues a small control message (hello, pong, stats, state, error). It goes out before anything else.
    mutating func enqueueControl(_ message: [UInt8]) {
        control.append(message)
    }

    /// Queues one encoded audio message. Returns false (and queues nothing) when the backlog would pass
    /// ``maxAudioBytes``: the peer is not reading and the session should end as stalled.
    mutating func enqueueAudio(_ message: [UInt8]) -> Bool {
        guard queuedAudioBytes + message.count <= maxAudioBytes else { return false }
        audio.append(message)
        queuedAudioBytes += message.count
        return true
    }

    /// Offers the newest video frame. A frame already waiting (not yet started) is replaced and counted as dropped.
    mutating func offerVideo(_ video: OutgoingVideo) {
        if inFlight == nil {
            inFlight = video
            inFlightOffset = 0
            return
        }
        if inFlightOffset == 0 {
            // Not a byte of it has gone out yet: the newer frame takes its place.
            droppedFrames += 1
            inFlight = video
            return
        }
        if waiting != nil { droppedFrames += 1 }
        waiting = video
    }

    /// Drops every frame not yet started (used when the session is paused); a started frame is finished so the
    /// peer never sees half a message.
    mutating func discardWaitingVideo() {
        if waiting != nil { droppedFrames += 1 }
        waiting = nil
        if inFlight != nil, inFlightOffset == 0 {
            droppedFrames += 1
            inFlight = nil
        }
    }

    /// Drops queued audio (used when the session is paused: paused means nothing is sent).
    mutating func discardAudio() {
        // A partly sent audio message must be finished; keep it, drop the rest.
        if audioOffset > 0, audioHead < audio.count {
            let current = audio[audioHead]
            audio = [current]
            audioHead = 0
            queuedAudioBytes = current.count - audioOffset
        } else {
            audio.removeAll()
            audioHead = 0
            audioOffset = 0
            queuedAudioBytes = 0
        }
    }

    /// The next fragment to send, at most `maxPayload` bytes, or nil when nothing waits.
    mutating func nextFragment(maxPayload: Int) -> OutboxFragment? {
        precondition(maxPayload > 0, "a fragment must be able to carry at least one byte")
        if !control.isEmpty {
            return nextControlFragment(maxPayload: maxPayload)
        }
        if audioHead < audio.count {
            return nextAudioFragment(maxPayload: maxPayload)
        }
        if inFlight == nil, let next = waiting {
            inFlight = next
            inFlightOffset = 0
            waiting = nil
        }
        if inFlight != nil {
            return nextVideoFragment(maxPayload: maxPayload)
        }
        return nil
    }

    // Control messages are small, but a long error reason could pass one fragment: split it like any other.
    private var controlOffset = 0

    private mutating func nextControlFragment(maxPayload: Int) -> OutboxFragment {
        let message = control[0]
        let end = min(message.count, controlOffset + maxPayload)
        let bytes = message[controlOffset..<end]
        let isFinal = end == message.count
        if isFinal {
            control.removeFirst()
            controlOffset = 0
        } else {
            controlOffset = end
        }
        return OutboxFragment(channel: .control, isFinal: isFinal, body: bytes)
    }

    private mutating func nextAudioFragment(maxPayload: Int) -> OutboxFragment {
        let message = audio[audioHead]
        let end = min(message.count, audioOffset + maxPayload)
        let bytes = message[audioOffset..<end]
        queuedAudioBytes -= end - audioOffset
        let isFinal = end == message.count
        if isFinal {
            audioHead += 1
            audioOffset = 0
            sentAudioMessages += 1
            if audioHead == audio.count || audioHead > 64 {
                audio.removeFirst(audioHead)
                audioHead = 0
            }
        } else {
            audioOffset = end
        }
        return OutboxFragment(channel: .audio, isFinal: isFinal, body: bytes)
    }

    private mutating func nextVideoFragment(maxPayload: Int) -> OutboxFragment {
        // Safe: only called when inFlight is set (checked by the caller).
        let video = inFlight!
        let total = video.totalLength
        let end = min(total, inFlightOffset + maxPayload)
        let headerCount = video.header.count
        let head = inFlightOffset < headerCount ? video.header[inFlightOffset..<min(end, headerCount)] : []
        let body = end > headerCount ? video.data[(max(inFlightOffset, headerCount) - headerCount)..<(end - headerCount)] : []
        let isFinal = end == total
        if isFinal {
            sentFrames += 1
            if video.isRepeat { sentRepeats += 1 }
            inFlight = nil
            inFlightOffset = 0
        } else {
            inFlightOffset = end
        }
        return OutboxFragment(channel: .video, isFinal: isFinal, head: head, body: body)
    }
}
