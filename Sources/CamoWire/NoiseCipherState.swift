import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Noise CipherState (Noise rev 34, section 5.1): a key `k` (possibly empty) and a 64-bit nonce `n`.
///
/// AES-GCM nonces are 4 zero bytes followed by `n` big-endian; ChaChaPoly nonces are 4 zero bytes
/// followed by `n` little-endian. The nonce value 2^64 − 1 is reserved: using it throws `nonceExhausted`.
/// Rekey is not used by wire format v1.
public struct NoiseCipherState: Sendable {
    /// The AEAD of this state.
    public let cipher: NoiseCipher
    private var key: SymmetricKey?
    /// The nonce the next encryption or decryption uses.
    public private(set) var nonce: UInt64 = 0

    /// A cipher state without a key (`InitializeKey(empty)`): encryption passes plaintext through.
    public init(cipher: NoiseCipher) {
        self.cipher = cipher
    }

    /// A cipher state with a 32-byte key and nonce 0.
    public init(cipher: NoiseCipher, key: [UInt8]) throws(NoiseError) {
        self.cipher = cipher
        try initializeKey(key)
    }

    /// True when a key is set (`HasKey()`).
    public var hasKey: Bool { key != nil }

    /// `InitializeKey(key)`: sets the key (nil = empty) and resets the nonce to 0.
    public mutating func initializeKey(_ newKey: [UInt8]?) throws(NoiseError) {
        if let newKey {
            guard newKey.count == 32 else { throw .invalidKey("a cipher key has 32 bytes, not \(newKey.count)") }
            key = SymmetricKey(data: newKey)
        } else {
            key = nil
        }
        nonce = 0
    }

    /// `SetNonce(n)`.
    public mutating func setNonce(_ n: UInt64) {
        nonce = n
    }

    /// `EncryptWithAd(ad, plaintext)`, appending the ciphertext and 16-byte tag to `out`.
    ///
    /// Without a key the plaintext is appended unchanged. Contiguous plaintexts (arrays, array slices,
    /// buffer pointers) are sealed in place; the only copy is the ciphertext appended to `out`.
    /// - Throws: `NoiseError.nonceExhausted` when the nonce has reached 2^64 − 1.
    public mutating func encrypt(ad: [UInt8], plaintext: some Collection<UInt8>, into out: inout [UInt8]) throws(NoiseError) {
        guard let key else {
            out.append(contentsOf: plaintext)
            return
        }
        guard nonce != UInt64.max else { throw .nonceExhausted }
        let nonceBytes = Self.nonceBytes(nonce, cipher: cipher)
        let sealed: Result<Void, NoiseError>? = plaintext.withContiguousStorageIfAvailable { buffer in
            Self.seal(UnsafeRawBufferPointer(buffer), key: key, nonce: nonceBytes, ad: ad, cipher: cipher, into: &out)
        }
        switch sealed {
        case .some(let result):
            try result.get()
        case .none:
            let contiguous = Array(plaintext)
            try contiguous.withUnsafeBytes { buffer in
                Self.seal(buffer, key: key, nonce: nonceBytes, ad: ad, cipher: cipher, into: &out)
            }.get()
        }
        nonce += 1
    }

    /// `EncryptWithAd(ad, plaintext)` returning a new array.
    public mutating func encrypt(ad: [UInt8], plaintext: some Collection<UInt8>) throws(NoiseError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(plaintext.count + 16)
        try encrypt(ad: ad, plaintext: plaintext, into: &out)
        return out
    }

    /// `DecryptWithAd(ad, ciphertext)`: the plaintext, or `decryptionFailed` (the nonce then stays unchanged).
    public mutating func decrypt(ad: [UInt8], ciphertext: some Collection<UInt8>) throws(NoiseError) -> [UInt8] {
        var out: [UInt8] = []
        try decrypt(ad: ad, ciphertext: ciphertext, into: &out)
        return out
    }

    /// `DecryptWithAd(ad, ciphertext)`, appending the plaintext to `out`.
    public mutating func decrypt(ad: [UInt8], ciphertext: some Collection<UInt8>, into out: inout [UInt8]) throws(NoiseError) {
        guard let key else {
            out.append(contentsOf: ciphertext)
            return
        }
        guard nonce != UInt64.max else { throw .nonceExhausted }
        guard ciphertext.count >= 16 else { throw .decryptionFailed }
        let nonceBytes = Self.nonceBytes(nonce, cipher: cipher)
        let opened: Result<Void, NoiseError>? = ciphertext.withContiguousStorageIfAvailable { buffer in
            Self.open(UnsafeRawBufferPointer(buffer), key: key, nonce: nonceBytes, ad: ad, cipher: cipher, into: &out)
        }
        switch opened {
        case .some(let result):
            try result.get()
        case .none:
            let contiguous = Array(ciphertext)
            try contiguous.withUnsafeBytes { buffer in
                Self.open(buffer, key: key, nonce: nonceBytes, ad: ad, cipher: cipher, into: &out)
            }.get()
        }
        nonce += 1
    }

    static func nonceBytes(_ n: UInt64, cipher: NoiseCipher) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 {
            let byte = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i)))
            switch cipher {
            case .aesGCM: bytes[11 - i] = byte  // big-endian
            case .chaChaPoly: bytes[4 + i] = byte  // little-endian
            }
        }
        return bytes
    }

    private static func appendBytes(_ data: Data, to out: inout [UInt8]) {
        data.withUnsafeBytes { raw in out.append(contentsOf: raw.bindMemory(to: UInt8.self)) }
    }

    private static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8], ad: [UInt8],
        cipher: NoiseCipher, into out: inout [UInt8]
    ) -> Result<Void, NoiseError> {
        do {
            out.reserveCapacity(out.count + plaintext.count + 16)
            switch cipher {
            case .aesGCM:
                let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: ad)
                appendBytes(box.ciphertext, to: &out)
                appendBytes(box.tag, to: &out)
            case .chaChaPoly:
                let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: ad)
                appendBytes(box.ciphertext, to: &out)
                appendBytes(box.tag, to: &out)
            }
            return .success(())
        } catch {
            return .failure(.invalidKey("sealing failed: \(error)"))
        }
    }

    private static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: [UInt8], ad: [UInt8],
        cipher: NoiseCipher, into out: inout [UInt8]
    ) -> Result<Void, NoiseError> {
        // One copy into the sealed box's combined form (nonce ‖ ciphertext ‖ tag); building it from a
        // Data avoids swift-crypto's per-element generic path for non-Data inputs.
        var combined = Data(capacity: nonce.count + ciphertext.count)
        combined.append(contentsOf: nonce)
        combined.append(ciphertext.assumingMemoryBound(to: UInt8.self))
        do {
            let plaintext: Data
            switch cipher {
            case .aesGCM:
                plaintext = try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key, authenticating: ad)
            case .chaChaPoly:
                plaintext = try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: combined), using: key, authenticating: ad)
            }
            appendBytes(plaintext, to: &out)
            return .success(())
        } catch {
            return .failure(.decryptionFailed)
        }
    }
}
