/// A parsed float32 WAV file (the format ``WAVWriter`` produces), for tests and analysis.
public struct WAVReader: Sendable {
    /// The format and sizes from the header (`sampleFrames` from the data chunk's size).
    public var header: WAVHeader
    /// The `fact` chunk's sample frame count, if present.
    public var factSampleFrames: Int?
    /// Interleaved samples.
    public var samples: [Float]

    /// Parses a RIFF/WAVE file with a 32-bit IEEE float `fmt ` chunk; other chunks are skipped.
    public init(bytes: [UInt8]) throws(WAVError) {
        guard bytes.count >= 12, bytes.ascii(0, 4) == "RIFF", bytes.ascii(8, 4) == "WAVE" else {
            throw .malformed("no RIFF/WAVE signature")
        }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var fact: Int?
        while offset + 8 <= bytes.count {
            let id = bytes.ascii(offset, 4)
            let size = Int(bytes.le32(offset + 4))
            let body = offset + 8
            guard body + size <= bytes.count else { throw .malformed("chunk \(id) runs past the end") }
            switch id {
            case "fmt ":
                guard size >= 16 else { throw .malformed("fmt chunk too short") }
                format = (Int(bytes.le16(body)), Int(bytes.le16(body + 2)), Int(bytes.le32(body + 4)), Int(bytes.le16(body + 14)))
            case "fact":
                guard size >= 4 else { throw .malformed("fact chunk too short") }
                fact = Int(bytes.le32(body))
            case "data":
                guard let format else { throw .malformed("data before fmt") }
                guard format.tag == Int(WAVHeader.formatTagIEEEFloat), format.bits == 32, format.channels > 0 else {
                    throw .malformed("not 32-bit IEEE float (tag \(format.tag), \(format.bits) bits)")
                }
                // The whole chunk in one copy (little-endian floats, as this host stores them): a long recording is
                // not read a sample at a time.
                let count = size / 4
                var samples = [Float](repeating: 0, count: count)
                samples.withUnsafeMutableBytes { target in
                    bytes.withUnsafeBytes { source in
                        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[body..<(body + 4 * count)]))
                    }
                }
                #if _endian(big)
                    for index in samples.indices { samples[index] = Float(bitPattern: UInt32(littleEndian: samples[index].bitPattern)) }
                #endif
                header = WAVHeader(channels: format.channels, sampleRate: format.rate,
                                   sampleFrames: size / (4 * format.channels))
                factSampleFrames = fact
                self.samples = samples
                return
            default:
                break
            }
            offset = body + size + (size & 1)
        }
        throw .malformed("no data chunk")
    }
}

extension [UInt8] {
    fileprivate func ascii(_ at: Int, _ count: Int) -> String {
        String(decoding: self[at..<Swift.min(at + count, self.count)], as: UTF8.self)
    }

    fileprivate func le16(_ at: Int) -> UInt16 {
        UInt16(self[at]) | UInt16(self[at + 1]) << 8
    }

    fileprivate func le32(_ at: Int) -> UInt32 {
        UInt32(self[at]) | UInt32(self[at + 1]) << 8 | UInt32(self[at + 2]) << 16 | UInt32(self[at + 3]) << 24
    }
}
