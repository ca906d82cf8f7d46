/// 64-bit FNV-1a, the per-frame fingerprint written to `video.json` when pixels are not kept.
public enum FrameHash {
    private static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// FNV-1a over `rowBytes` bytes of each of `rows` rows `stride` apart (so padding is ignored),
    /// as 16 lowercase hex digits.
    public static func fnv1a(_ data: [UInt8], rowBytes: Int, rows: Int, stride: Int) -> String {
        var hash = offsetBasis
        data.withUnsafeBufferPointer { buffer in
            for row in 0..<rows {
                let start = row * stride
                for byte in buffer[start..<start + rowBytes] {
                    hash = (hash ^ UInt64(byte)) &* prime
                }
            }
        }
        return hex(hash)
    }

    /// FNV-1a over all of `data`, as 16 lowercase hex digits.
    public static func fnv1a(_ data: [UInt8]) -> String {
        fnv1a(data, rowBytes: data.count, rows: 1, stride: data.count)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
