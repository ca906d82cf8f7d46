/// A run of captured audio: interleaved stereo float32 samples and the time of the first one.
public struct AudioChunk: Sendable {
    /// Interleaved samples: left, right, left, right, ...
    public var samples: [Float]
    /// Time of the first sample frame, nanoseconds of CLOCK_MONOTONIC.
    public var firstSampleTime: UInt64
    /// Number of sample frames (`samples.count / 2`).
    public var sampleFrames: Int

    /// Creates a chunk; `sampleFrames` is derived from `samples.count` (whole stereo frames).
    public init(samples: [Float], firstSampleTime: UInt64) {
        self.samples = samples
        self.firstSampleTime = firstSampleTime
        self.sampleFrames = samples.count / MediaContract.channels
    }

    /// A chunk from raw LPCM bytes: float32 little-endian, interleaved stereo. The byte count must already have
    /// passed ``MediaContract/validateAudio(byteCount:)``.
    public init(littleEndianFloat32 bytes: [UInt8], firstSampleTime: UInt64) {
        var samples = [Float](repeating: 0, count: bytes.count / 4)
        #if _endian(little)
        samples.withUnsafeMutableBytes { destination in
            bytes.withUnsafeBytes { source in destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[..<destination.count])) }
        }
        #else
        for i in samples.indices {
            let bits = UInt32(bytes[4 * i]) | UInt32(bytes[4 * i + 1]) << 8 | UInt32(bytes[4 * i + 2]) << 16 | UInt32(bytes[4 * i + 3]) << 24
            samples[i] = Float(bitPattern: bits)
        }
        #endif
        self.init(samples: samples, firstSampleTime: firstSampleTime)
    }

    /// Creates a chunk with an explicit frame count (kept as given; ``AudioPacketizer`` trusts
    /// `samples.count`).
    public init(samples: [Float], firstSampleTime: UInt64, sampleFrames: Int) {
        self.samples = samples
        self.firstSampleTime = firstSampleTime
        self.sampleFrames = sampleFrames
    }
}

/// One outgoing audio packet: exactly the requested number of sample frames.
public struct AudioPacket: Sendable {
    /// Interleaved stereo float32 samples, `sampleFrames * 2` values.
    public var samples: [Float]
    /// Number of sample frames in the packet.
    public var sampleFrames: Int
    /// Time of the first sample frame, nanoseconds of CLOCK_MONOTONIC.
    public var firstSampleTime: UInt64
    /// Packet counter, 0, 1, 2, ... per packetizer.
    public var sequence: UInt64

    /// Creates a packet from its parts.
    public init(samples: [Float], sampleFrames: Int, firstSampleTime: UInt64, sequence: UInt64) {
        self.samples = samples
        self.sampleFrames = sampleFrames
        self.firstSampleTime = firstSampleTime
        self.sequence = sequence
    }
}
