/// The 58-byte header of a RIFF/WAVE file holding 32-bit IEEE float samples
/// (`WAVE_FORMAT_IEEE_FLOAT`), with the `fact` chunk that non-PCM formats require.
///
/// Layout (all integers little-endian):
/// ```
/// 0  "RIFF"  4 riffSize (= 50 + dataSize)  8 "WAVE"
/// 12 "fmt "  16 18  20 formatTag 3  22 channels  24 sampleRate  28 byteRate  32 blockAlign  34 bits 32  36 cbSize 0
/// 38 "fact"  42 4   46 sampleFrames (per channel)
/// 50 "data"  54 dataSize  58 samples...
/// ```
public struct WAVHeader: Sendable, Equatable {
    /// `WAVE_FORMAT_IEEE_FLOAT`.
    public static let formatTagIEEEFloat: UInt16 = 3
    /// Bytes before the first sample.
    public static let byteCount = 58
    /// Largest sample data a RIFF file can describe (its sizes are 32-bit).
    public static let maxDataBytes = Int(UInt32.max) - (byteCount - 8)

    /// Interleaved channels.
    public var channels: Int
    /// Sample frames per second.
    public var sampleRate: Int
    /// Sample frames (one sample per channel each) in the data chunk.
    public var sampleFrames: Int

    /// A header for `sampleFrames` float32 frames of `channels` channels at `sampleRate`.
    public init(channels: Int = 2, sampleRate: Int = 48_000, sampleFrames: Int = 0) {
        self.channels = channels
        self.sampleRate = sampleRate
        self.sampleFrames = sampleFrames
    }

    /// Bytes per sample frame (4 per channel).
    public var blockAlign: Int { channels * 4 }
    /// Bytes of sample data.
    public var dataBytes: Int { sampleFrames * blockAlign }

    /// The header bytes. Sizes saturate at the 32-bit limit of RIFF.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.byteCount)
        let data = UInt32(clamping: dataBytes)
        out.appendASCII("RIFF")
        out.appendLE(UInt32(clamping: UInt64(data) + UInt64(Self.byteCount - 8)))
        out.appendASCII("WAVE")
        out.appendASCII("fmt ")
        out.appendLE(UInt32(18))
        out.appendLE(Self.formatTagIEEEFloat)
        out.appendLE(UInt16(clamping: channels))
        out.appendLE(UInt32(clamping: sampleRate))
        out.appendLE(UInt32(clamping: sampleRate * blockAlign))
        out.appendLE(UInt16(clamping: blockAlign))
        out.appendLE(UInt16(32))
        out.appendLE(UInt16(0))
        out.appendASCII("fact")
        out.appendLE(UInt32(4))
        out.appendLE(UInt32(clamping: sampleFrames))
        out.appendASCII("data")
        out.appendLE(data)
        return out
    }
}

extension [UInt8] {
    mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
