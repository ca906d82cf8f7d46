/// `audio` (0x20, agent → studio, channel audio): one packet of interleaved stereo float32 samples.
public struct AudioMessage: Sendable, Equatable {
    /// The length of the encoded header (type byte included) that precedes `data`.
    public static let headerLength = 23
    /// `format` value: 32-bit IEEE float, little-endian, interleaved.
    public static let formatFloat32LE: UInt8 = 1
    /// `format` value (1.1): 16-bit signed integer, little-endian, interleaved.
    public static let formatS16LE: UInt8 = 2
    /// The only channel count of v1.
    public static let stereo: UInt8 = 2
    /// The only sample rate of v1.
    public static let sampleRate48k: UInt32 = 48_000

    /// Packet counter (increments by one per packet of this session).
    public var sequence: UInt32
    /// When the first sample frame was captured (CLOCK_MONOTONIC ns on the agent).
    public var firstSampleTime: UInt64
    /// Sample frames in `data`, 1...48000 (normally `audioSamplesRequired`).
    public var sampleFrames: UInt32
    /// Channels, must be 2.
    public var channels: UInt8
    /// Sample format: 1 (float32 LE interleaved) or, from 1.1, 2 (s16 LE interleaved).
    public var format: UInt8
    /// Sample rate, must be 48000.
    public var sampleRate: UInt32
    /// `sampleFrames · channels · 4` bytes (float32) or `· 2` (s16).
    public var data: [UInt8]

    /// Creates an audio message.
    public init(
        sequence: UInt32, firstSampleTime: UInt64, sampleFrames: UInt32, channels: UInt8 = AudioMessage.stereo,
        format: UInt8 = AudioMessage.formatFloat32LE, sampleRate: UInt32 = AudioMessage.sampleRate48k, data: [UInt8]
    ) {
        self.sequence = sequence
        self.firstSampleTime = firstSampleTime
        self.sampleFrames = sampleFrames
        self.channels = channels
        self.format = format
        self.sampleRate = sampleRate
        self.data = data
    }

    /// Creates an audio message from interleaved float samples (`samples.count / 2` sample frames).
    public init(sequence: UInt32, firstSampleTime: UInt64, samples: [Float]) {
        #if _endian(little)
        // Float32 in memory already is the wire's little-endian layout: one bulk copy per packet.
        let bytes = samples.withUnsafeBytes { Array($0) }
        #else
        var bytes: [UInt8] = []
        bytes.reserveCapacity(samples.count * 4)
        for sample in samples {
            let bits = sample.bitPattern.littleEndian
            withUnsafeBytes(of: bits) { bytes.append(contentsOf: $0) }
        }
        #endif
        self.init(sequence: sequence, firstSampleTime: firstSampleTime, sampleFrames: UInt32(samples.count / 2), data: bytes)
    }

    /// Creates an audio message in `format` from interleaved float samples: s16 rounds each sample to the nearest
    /// of 65536 steps, clamping to -1...1 (32767/32768 at the top).
    public init(sequence: UInt32, firstSampleTime: UInt64, samples: [Float], format: AudioSampleFormat) {
        guard format == .s16 else {
            self.init(sequence: sequence, firstSampleTime: firstSampleTime, samples: samples)
            return
        }
        var bytes = [UInt8](repeating: 0, count: samples.count * 2)
        for (index, sample) in samples.enumerated() {
            let scaled = (sample.isNaN ? 0 : sample) * 32768
            let value = Int16(max(-32768, min(32767, scaled.rounded())))
            let bits = UInt16(bitPattern: value)
            bytes[2 * index] = UInt8(truncatingIfNeeded: bits)
            bytes[2 * index + 1] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        self.init(
            sequence: sequence, firstSampleTime: firstSampleTime, sampleFrames: UInt32(samples.count / 2),
            format: Self.formatS16LE, data: bytes)
    }

    /// The samples of `data` as floats (interleaved); s16 samples are divided by 32768.
    public var samples: [Float] {
        if format == Self.formatS16LE {
            var out = [Float](repeating: 0, count: data.count / 2)
            for index in 0..<out.count {
                let bits = UInt16(data[2 * index]) | UInt16(data[2 * index + 1]) << 8
                out[index] = Float(Int16(bitPattern: bits)) / 32768
            }
            return out
        }
        var out: [Float] = []
        out.reserveCapacity(data.count / 4)
        var index = 0
        while index + 4 <= data.count {
            let bits = UInt32(data[index]) | UInt32(data[index + 1]) << 8 | UInt32(data[index + 2]) << 16
                | UInt32(data[index + 3]) << 24
            out.append(Float(bitPattern: bits))
            index += 4
        }
        return out
    }

    /// The message bytes before `data` (type byte 0x20 included, `headerLength` bytes).
    public func encodeHeader() -> [UInt8] {
        var w = ByteWriter(capacity: Self.headerLength)
        w.u8(AppMessageType.audio.rawValue)
        w.u32(sequence)
        w.u64(firstSampleTime)
        w.u32(sampleFrames)
        w.u8(channels)
        w.u8(format)
        w.u32(sampleRate)
        return w.bytes
    }

    static func decode(_ r: inout ByteReader) throws(WireError) -> AudioMessage {
        let sequence = try r.u32("sequence")
        let firstSampleTime = try r.u64("firstSampleTime")
        let sampleFrames = try r.u32("sampleFrames")
        let channels = try r.u8("channels")
        let format = try r.u8("format")
        let sampleRate = try r.u32("sampleRate")
        let data = r.rest()
        guard channels == Self.stereo else { throw .violation("audio has \(channels) channels; v1 audio is stereo (2)") }
        guard let sampleFormat = AudioSampleFormat(rawValue: format) else {
            throw .violation("audio format \(format) is unknown; 1.1 audio is 1 (float32) or 2 (s16), little-endian interleaved")
        }
        guard sampleRate == Self.sampleRate48k else { throw .violation("audio sample rate \(sampleRate) is not 48000") }
        guard (1...WireLimits.maxAudioSampleFrames).contains(sampleFrames) else {
            throw .violation("audio carries \(sampleFrames) sample frames; the range is 1...48000")
        }
        let expected = Int(sampleFrames) * Int(channels) * sampleFormat.bytesPerSample
        guard data.count == expected else {
            throw .violation("audio of \(sampleFrames) stereo \(sampleFormat) frames has \(expected) bytes of data, not \(data.count)")
        }
        return AudioMessage(
            sequence: sequence, firstSampleTime: firstSampleTime, sampleFrames: sampleFrames, channels: channels,
            format: format, sampleRate: sampleRate, data: Array(data))
    }
}
