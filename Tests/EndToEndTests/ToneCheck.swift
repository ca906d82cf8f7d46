import Foundation

/// Reads a 32-bit float stereo WAV (our own minimal reader, independent of the studio's) and checks that each
/// channel is one continuous-phase sine: any lost or doubled sample shifts the phase and shows as residual.
struct ToneCheck {
    var left: [Float] = []
    var right: [Float] = []

    init(wavPath: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wavPath)))
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46][...], bytes[8..<12] == [0x57, 0x41, 0x56, 0x45][...]
        else { throw CheckError("not a RIFF/WAVE file") }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                format = (u16(body), u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                guard let format, format.tag == 3, format.channels == 2, format.rate == 48_000, format.bits == 32 else {
                    throw CheckError("expected IEEE float, 2 channels, 48 kHz, 32 bit; got \(String(describing: format))")
                }
                let end = min(bytes.count, body + size)
                let count = (end - body) / 8
                left.reserveCapacity(count)
                right.reserveCapacity(count)
                bytes.withUnsafeBytes { raw in
                    for i in 0..<count {
                        left.append(Float(bitPattern: raw.loadUnaligned(fromByteOffset: body + i * 8, as: UInt32.self).littleEndian))
                        right.append(Float(bitPattern: raw.loadUnaligned(fromByteOffset: body + i * 8 + 4, as: UInt32.self).littleEndian))
                    }
                }
                return
            }
            offset = body + size + (size & 1)
        }
        throw CheckError("no data chunk")
    }

    var sampleFrames: Int { left.count }

    /// The indexes of the clicks (the first sample of each run above the tone's amplitude).
    func clicks(threshold: Float = 0.5) -> [Int] {
        var result: [Int] = []
        var i = 0
        while i < left.count {
            if abs(left[i]) > threshold {
                result.append(i)
                i += 48
            } else {
                i += 1
            }
        }
        return result
    }

    struct Fit {
        var amplitude: Double
        /// The worst residual RMS over 100 ms blocks, in dBFS.
        var worstBlockResidualDB: Double
    }

    /// Least-squares fit of one sine of `frequency` to a channel, skipping the clicks (and a margin around them).
    func fit(channel: Int, frequency: Double) -> Fit {
        let x = channel == 0 ? left : right
        var masked = [Bool](repeating: false, count: x.count)
        for click in clicks() {
            for i in max(0, click - 4)..<min(x.count, click + 56) { masked[i] = true }
        }
        let omega = 2 * Double.pi * frequency / 48_000
        var ss = 0.0, cc = 0.0, sc = 0.0, xs = 0.0, xc = 0.0
        for i in 0..<x.count where !masked[i] {
            let s = sin(omega * Double(i)), c = cos(omega * Double(i))
            ss += s * s; cc += c * c; sc += s * c
            xs += Double(x[i]) * s; xc += Double(x[i]) * c
        }
        let det = ss * cc - sc * sc
        let a = (xs * cc - xc * sc) / det
        let b = (xc * ss - xs * sc) / det
        var worst = 0.0
        let block = 4_800
        var start = 0
        while start < x.count {
            var sum = 0.0
            var n = 0
            for i in start..<min(x.count, start + block) where !masked[i] {
                let r = Double(x[i]) - (a * sin(omega * Double(i)) + b * cos(omega * Double(i)))
                sum += r * r
                n += 1
            }
            if n > 0 { worst = max(worst, (sum / Double(n)).squareRoot()) }
            start += block
        }
        return Fit(amplitude: (a * a + b * b).squareRoot(), worstBlockResidualDB: 20 * log10(max(worst, 1e-12)))
    }
}

struct CheckError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
