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
    /// An H.264 frame (or placeholder): later frames depend on it, so the outbox queues it instead of replacing it.
    var isH264 = false
    /// An H.264 keyframe: a decoder can start here.
    var isKeyframe = false
    var totalLength: Int { header.count + data.count }
}

/// What one session still has to send, and in which order. A plain value: no sockets, no clocks.
///
/// Order of service: control messages first, then audio, then video. Each call to ``nextFragment(maxPayload:)``
/// yields one fragment, so an audio message that arrives while a large frame is half sent goes out between that
/// frame's fragments. Video keeps at most one frame in flight plus one waiting: a newer frame replaces the
/// waiting one (newest wins) and the replaced one is counted in ``droppedFrames``. Audio is never dropped; if
/// it backs up beyond ``maxAudioBytes`` the peer has stalled and ``enqueueAudio(_:)`` says so.
///
/// H.264 frames depend on the ones before them, so they are never replaced: they queue in order. The rate
/// control keeps that queue short by skipping frames before the encoder; if it still passes ``maxH264Bytes``
/// (a link that collapsed), every frame not yet started is dropped (counted) and ``takeLostReference()`` tells
/// the session to wait for the next keyframe.
struct SessionOutbox {
    /// The most audio that may wait before the session counts as stalled (about 20 s of 48 kHz stereo float).
    var maxAudioBytes: Int = 8 * 1024 * 1024
    /// The most H.264 bytes that may wait (not yet started) before they are dropped for a keyframe.
    var maxH264Bytes: Int = 1_536 * 1024

    /// H.264 frames waiting, oldest first (the in-flight one is not among them).
    private var h264Queue: [OutgoingVideo] = []
    private var h264Head = 0
    private(set) var queuedH264Bytes = 0
    private var lostReference = false

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
        control.isEmpty && audioHead == audio.count && inFlight == nil && waiting == nil && h264Head == h264Queue.count
    }

    /// Video bytes queued and not yet handed out (the rest of the frame in flight included).
    var queuedVideoBytes: Int {
        queuedH264Bytes + (waiting?.totalLength ?? 0) + (inFlight.map { $0.totalLength - inFlightOffset } ?? 0)
    }

    /// Whether H.264 frames were dropped since the last call (the session must wait for a keyframe); clears it.
    mutating func takeLostReference() -> Bool {
        defer { lostReference = false }
        return lostReference
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

    /// Offers the newest video frame. A frame already waiting (not yet started) is replaced and counted as dropped;
    /// an H.264 frame queues behind the others instead.
    mutating func offerVideo(_ video: OutgoingVideo) {
        if video.isH264 {
            offerH264(video)
            return
        }
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

    private mutating func offerH264(_ video: OutgoingVideo) {
        if inFlight == nil, h264Head == h264Queue.count {
            inFlight = video
            inFlightOffset = 0
            return
        }
        if queuedH264Bytes + video.totalLength > maxH264Bytes {
            dropQueuedH264()
            // The frame that did not fit is lost too, unless a decoder can start on it.
            guard video.isKeyframe else {
                droppedFrames += 1
                lostReference = true
                return
            }
        }
        // A keyframe restarts the chain: whatever was lost before it no longer matters.
        if video.isKeyframe { lostReference = false }
        h264Queue.append(video)
        queuedH264Bytes += video.totalLength
    }

    private mutating func dropQueuedH264() {
        let count = h264Queue.count - h264Head
        if count > 0 {
            droppedFrames += UInt64(count)
            lostReference = true
        }
        h264Queue.removeAll(keepingCapacity: true)
        h264Head = 0
        queuedH264Bytes = 0
    }

    /// Drops every frame not yet started (used when the session is paused); a started frame is finished so the
    /// peer never sees half a message.
    mutating func discardWaitingVideo() {
        if h264Head < h264Queue.count { dropQueuedH264() }
        if inFlight?.isH264 == true, inFlightOffset == 0 {
            droppedFrames += 1
            inFlight = nil
            lostReference = true
            return
        }
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
        if inFlight == nil, h264Head < h264Queue.count {
            let next = h264Queue[h264Head]
            h264Head += 1
            queuedH264Bytes -= next.totalLength
            if h264Head == h264Queue.count || h264Head > 64 {
                h264Queue.removeFirst(h264Head)
                h264Head = 0
            }
            inFlight = next
            inFlightOffset = 0
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
