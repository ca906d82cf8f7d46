import Crypto

/// Per-frame fingerprints for `video.json` when pixels are not kept: SHA-256 (fast even in debug
/// builds, since BoringSSL does the work) and 64-bit FNV-1a (simple to reimplement anywhere).
public enum FrameHash {
    /// SHA-256 over `rowBytes` bytes of each of `rows` rows `stride` apart (padding ignored), as 64
    /// lowercase hex digits.
    public static func sha256(_ data: [UInt8], rowBytes: Int, rows: Int, stride: Int) -> String {
        precondition(rows == 0 || (rows - 1) * stride + rowBytes <= data.count, "rows exceed the buffer")
        var hasher = SHA256()
        data.withUnsafeBytes { buffer in
            if stride == rowBytes {
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<rows * rowBytes]))
            } else {
                for row in 0..<rows {
                    hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[row * stride..<row * stride + rowBytes]))
                }
            }
        }
        return hasher.finalize().map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
    }

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
