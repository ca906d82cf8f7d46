import CamoMedia

/// Converts interleaved little-endian samples as a microphone delivers them (FLOAT_LE, S32_LE, S24_3LE, S16_LE;
/// any channel count) to the studio's interleaved float32 stereo: integers are scaled to [-1, 1), a mono
/// microphone goes to both channels, and of more than two channels the first two are kept.
public struct MicrophoneSampleConverter: Sendable {
    /// The input sample format.
    public let format: MicrophoneSampleFormat
    /// Input channels (at least 1).
    public let channels: Int

    /// Creates a converter for one input layout.
    public init(format: MicrophoneSampleFormat, channels: Int) {
        precondition(channels >= 1, "a microphone has at least one channel")
        self.format = format
        self.channels = channels
    }

    /// Bytes of one input frame.
    public var bytesPerFrame: Int { format.bytesPerSample * channels }

    /// Converts `frames` whole frames from `input` and appends them to `output` (2 floats per frame).
    public func convert(_ input: UnsafeRawBufferPointer, frames: Int, appendingTo output: inout [Float]) {
        precondition(input.count >= frames * bytesPerFrame, "the input holds fewer frames than asked for")
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: frames * 2))
        output.withUnsafeMutableBufferPointer { buffer in
            convert(input, frames: frames, into: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Converts `frames` whole frames from `input` into `output`, which holds at least `frames * 2` floats.
    public func convert(_ input: UnsafeRawBufferPointer, frames: Int, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(output.count >= frames * 2 && input.count >= frames * bytesPerFrame)
        guard frames > 0, let source = input.baseAddress, let destination = output.baseAddress else { return }
        let step = bytesPerFrame
        let second = channels > 1 ? format.bytesPerSample : 0
        switch format {
        case .float32:
            for i in 0..<frames {
                let at = i * step
                destination[2 * i] = Float(bitPattern: UInt32(littleEndian: source.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                destination[2 * i + 1] = Float(bitPattern: UInt32(littleEndian: source.loadUnaligned(fromByteOffset: at + second, as: UInt32.self)))
            }
        case .s32:
            let scale: Float = 1.0 / 2_147_483_648.0
            for i in 0..<frames {
                let at = i * step
                destination[2 * i] = Float(Int32(littleEndian: source.loadUnaligned(fromByteOffset: at, as: Int32.self))) * scale
                destination[2 * i + 1] = Float(Int32(littleEndian: source.loadUnaligned(fromByteOffset: at + second, as: Int32.self))) * scale
            }
        case .s24Packed:
            let scale: Float = 1.0 / 8_388_608.0
            let bytes = source.assumingMemoryBound(to: UInt8.self)
            @inline(__always) func sample(_ at: Int) -> Float {
                // Three bytes, little-endian, sign-extended from bit 23.
                let raw = Int32(bytes[at]) | Int32(bytes[at + 1]) << 8 | Int32(bytes[at + 2]) << 16
                return Float((raw << 8) >> 8) * scale
            }
            for i in 0..<frames {
                let at = i * step
                destination[2 * i] = sample(at)
                destination[2 * i + 1] = sample(at + second)
            }
        case .s16:
            let scale: Float = 1.0 / 32_768.0
            for i in 0..<frames {
                let at = i * step
                destination[2 * i] = Float(Int16(littleEndian: source.loadUnaligned(fromByteOffset: at, as: Int16.self))) * scale
                destination[2 * i + 1] = Float(Int16(littleEndian: source.loadUnaligned(fromByteOffset: at + second, as: Int16.self))) * scale
            }
        }
    }
}
