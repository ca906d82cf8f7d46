/// Re-cuts captured audio into packets of exactly `samplesPerPacket` sample frames.
///
/// Chunks of any size go in with ``append(_:)``; ``nextPacket()`` hands out whole packets while
/// enough samples are buffered. ``setSamplesPerPacket(_:)`` applies from the next packet on, so
/// a change mid-stream neither loses nor duplicates a sample. Each packet's
/// ``AudioPacket/firstSampleTime`` is derived from the chunk its first sample came from:
/// `chunk.firstSampleTime + offset * 1_000_000_000 / 48_000` (integer).
public struct AudioPacketizer: Sendable {
    private struct Anchor: Sendable {
        var firstFrame: UInt64  // absolute sample-frame index of the chunk's first frame
        var frames: UInt64
        var time: UInt64
    }

    /// Sample frames per packet from the next packet on.
    public private(set) var samplesPerPacket: Int

    private var samples: [Float] = []  // interleaved; holds frames [bufferBase, framesIn)
    private var bufferBase: UInt64 = 0
    private var framesIn: UInt64 = 0
    private var framesOut: UInt64 = 0
    private var anchors: [Anchor] = []
    private var nextSequence: UInt64 = 0

    /// Creates a packetizer; `samplesPerPacket` must be in `64...48000`.
    public init(samplesPerPacket: Int) throws(ContractError) {
        try MediaContract.validateSamplesRequired(samplesPerPacket)
        self.samplesPerPacket = samplesPerPacket
    }

    /// Sample frames buffered and not yet packetized.
    public var bufferedSampleFrames: Int { Int(framesIn - framesOut) }

    /// Sequence number the next packet will carry.
    public var sequence: UInt64 { nextSequence }

    /// Total sample frames appended so far.
    public var sampleFramesIn: UInt64 { framesIn }

    /// Adds a chunk. Its `samples.count / 2` whole stereo frames are used (validate odd-length
    /// buffers with ``MediaContract/validateAudio(byteCount:)`` before building the chunk).
    public mutating func append(_ chunk: AudioChunk) {
        let frames = chunk.samples.count / MediaContract.channels
        guard frames > 0 else { return }
        anchors.append(Anchor(firstFrame: framesIn, frames: UInt64(frames), time: chunk.firstSampleTime))
        samples.append(contentsOf: chunk.samples[0..<(frames * MediaContract.channels)])
        framesIn += UInt64(frames)
    }

    /// Changes the packet size; it applies from the next packet handed out.
    public mutating func setSamplesPerPacket(_ n: Int) throws(ContractError) {
        try MediaContract.validateSamplesRequired(n)
        samplesPerPacket = n
    }

    /// The next packet of exactly ``samplesPerPacket`` frames, or nil if fewer are buffered.
    public mutating func nextPacket() -> AudioPacket? {
        let count = samplesPerPacket
        guard bufferedSampleFrames >= count else { return nil }
        while let first = anchors.first, first.firstFrame + first.frames <= framesOut {
            anchors.removeFirst()
        }
        // The buffered frames are covered by anchors, so one contains `framesOut`.
        guard let anchor = anchors.first else { return nil }
        let offset = framesOut - anchor.firstFrame
        let time = anchor.time + offset * 1_000_000_000 / UInt64(MediaContract.sampleRate)

        let start = Int(framesOut - bufferBase) * MediaContract.channels
        let packetSamples = Array(samples[start..<(start + count * MediaContract.channels)])
        framesOut += UInt64(count)
        compactIfNeeded()

        defer { nextSequence += 1 }
        return AudioPacket(samples: packetSamples, sampleFrames: count, firstSampleTime: time, sequence: nextSequence)
    }

    /// Drops consumed samples once they are at least half the buffer, keeping appends amortized O(1).
    private mutating func compactIfNeeded() {
        let consumed = Int(framesOut - bufferBase) * MediaContract.channels
        guard consumed > 0, consumed * 2 >= samples.count else { return }
        samples.removeFirst(consumed)
        bufferBase = framesOut
    }
}
