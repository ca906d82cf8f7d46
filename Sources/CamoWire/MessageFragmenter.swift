/// One fragment of an application message: a prefix of `head` bytes followed by `body` bytes.
/// The two parts let a sender fragment a small header and a large data buffer without joining them.
public struct WireFragment: Sendable {
    /// The channel of the message.
    public var channel: WireChannel
    /// True for the last fragment of the message (the FINAL flag).
    public var isFinal: Bool
    /// The first bytes of the fragment (part of a message header), possibly empty.
    public var head: ArraySlice<UInt8>
    /// The remaining bytes of the fragment (part of the bulk data), possibly empty.
    public var body: ArraySlice<UInt8>

    /// Creates a fragment.
    public init(channel: WireChannel, isFinal: Bool, head: ArraySlice<UInt8> = [], body: ArraySlice<UInt8>) {
        self.channel = channel
        self.isFinal = isFinal
        self.head = head
        self.body = body
    }

    /// The number of fragment bytes (`head.count + body.count`).
    public var count: Int { head.count + body.count }
}

/// Cuts one application message, given as a header and a data slice, into fragments of at most
/// `maxFragmentPayload` bytes, without concatenating header and data.
///
/// A sender keeps one fragmenter per channel and seals fragments one at a time, so that audio
/// messages can go between the fragments of a video frame:
/// ```swift
/// var video = MessageFragmenter(.video(frame))
/// while !video.isFinished {
///     try video.sealNext(using: &connection, into: &out)
///     if let packet = audioQueue.popFirst() { out += try connection.seal(.audio(packet)) }
/// }
/// ```
public struct MessageFragmenter: Sendable {
    /// The channel every fragment goes on.
    public let channel: WireChannel
    private var head: ArraySlice<UInt8>
    private var body: ArraySlice<UInt8>
    private let maxFragmentPayload: Int
    /// True once the final fragment has been produced.
    public private(set) var isFinished = false

    /// A fragmenter for `header` followed by `body`.
    /// - Parameter maxFragmentPayload: at most `WireLimits.maxFragmentPayload`; values below 1 are raised to 1.
    public init(
        channel: WireChannel, header: [UInt8], body: ArraySlice<UInt8> = [],
        maxFragmentPayload: Int = WireLimits.maxFragmentPayload
    ) {
        self.channel = channel
        self.head = header[...]
        self.body = body
        self.maxFragmentPayload = min(max(1, maxFragmentPayload), WireLimits.maxFragmentPayload)
    }

    /// A fragmenter for a whole message (video and audio: header, then their data without a copy).
    public init(_ message: AppMessage, maxFragmentPayload: Int = WireLimits.maxFragmentPayload) {
        self.init(
            channel: message.channel, header: message.encodeHeader(), body: message.bulkData,
            maxFragmentPayload: maxFragmentPayload)
    }

    /// Bytes not yet handed out.
    public var remainingBytes: Int { head.count + body.count }

    /// The next fragment, or nil after the final one.
    public mutating func next() -> WireFragment? {
        guard !isFinished else { return nil }
        let headPart = head.prefix(maxFragmentPayload)
        head = head.dropFirst(headPart.count)
        let bodyPart = body.prefix(maxFragmentPayload - headPart.count)
        body = body.dropFirst(bodyPart.count)
        isFinished = head.isEmpty && body.isEmpty
        return WireFragment(channel: channel, isFinal: isFinished, head: headPart, body: bodyPart)
    }

    /// Seals the next fragment as one transport record appended to `out`.
    /// - Returns: true when that was the final fragment (or nothing was left).
    @discardableResult
    public mutating func sealNext(using connection: inout WireConnection, into out: inout [UInt8]) throws(WireError) -> Bool {
        guard let fragment = next() else { return true }
        try connection.seal(fragment, into: &out)
        return fragment.isFinal
    }
}
