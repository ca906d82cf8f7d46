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
///
/// Sealing and opening go through libcrypto's EVP with a context kept per key (`AEADKey`): the ciphertext is written
/// straight into the output, with no buffer of its own per call.
public struct NoiseCipherState: Sendable {
    /// The AEAD of this state.
    public let cipher: NoiseCipher
    private var key: AEADKey?
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
            key = try AEADKey(cipher: cipher, key: newKey)
        } else {
            key = nil
        }
        nonce = 0
    }

    /// `SetNonce(n)`.
    public mutating func setNonce(_ n: UInt64) {
        nonce = n
    }

    /// An empty piece for the three-piece `encrypt`.
    static var nothing: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// The bytes `encrypt` adds to a plaintext: the tag's 16 with a key, none without.
    public var overhead: Int { key == nil ? 0 : AEADKey.tagLength }

    /// `EncryptWithAd(ad, plaintext)`, appending the ciphertext and 16-byte tag to `out`.
    ///
    /// Without a key the plaintext is appended unchanged. Contiguous plaintexts (arrays, array slices,
    /// buffer pointers) are sealed straight into `out`; others are gathered into an array first.
    /// - Throws: `NoiseError.nonceExhausted` when the nonce has reached 2^64 − 1.
    public mutating func encrypt(ad: [UInt8], plaintext: some Collection<UInt8>, into out: inout [UInt8]) throws(NoiseError) {
        let sealed: Result<Void, NoiseError>? = plaintext.withContiguousStorageIfAvailable { buffer in
            let raw = UnsafeRawBufferPointer(buffer)
            return ad.withUnsafeBytes { ad in
                Result { () throws(NoiseError) in try encrypt(ad: ad, raw, Self.nothing, Self.nothing, appendingTo: &out) }
            }
        }
        switch sealed {
        case .some(let result):
            try result.get()
        case .none:
            let contiguous = Array(plaintext)
            try encrypt(ad: ad, plaintext: contiguous, into: &out)
        }
    }

    /// `EncryptWithAd(ad, plaintext)` returning a new array.
    public mutating func encrypt(ad: [UInt8], plaintext: some Collection<UInt8>) throws(NoiseError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(plaintext.count + 16)
        try encrypt(ad: ad, plaintext: plaintext, into: &out)
        return out
    }

    /// `EncryptWithAd(ad, a ‖ b ‖ c)` appended to `out`, without joining the three pieces first.
    mutating func encrypt(
        ad: UnsafeRawBufferPointer, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ c: UnsafeRawBufferPointer,
        appendingTo out: inout [UInt8]
    ) throws(NoiseError) {
        let count = a.count + b.count + c.count + overhead
        var failure: NoiseError?
        out.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                do throws(NoiseError) {
                    try encrypt(ad: ad, a, b, c, into: UnsafeMutableRawBufferPointer(buffer))
                    initialized = count
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    /// `EncryptWithAd(ad, a ‖ b ‖ c)` written to the start of `destination`, which holds at least the three pieces'
    /// length plus `overhead` bytes.
    mutating func encrypt(
        ad: UnsafeRawBufferPointer, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ c: UnsafeRawBufferPointer,
        into destination: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        guard let key else {
            // Noise passes the plaintext through while there is no key (early handshake messages).
            UnsafeMutableRawBufferPointer(rebasing: destination[0...]).copyMemory(from: a)
            UnsafeMutableRawBufferPointer(rebasing: destination[a.count...]).copyMemory(from: b)
            UnsafeMutableRawBufferPointer(rebasing: destination[(a.count + b.count)...]).copyMemory(from: c)
            return
        }
        guard nonce != UInt64.max else { throw .nonceExhausted }
        let sealed = Self.withNonce(nonce, cipher: cipher) { nonce in key.seal(nonce: nonce, ad: ad, a, b, c, into: destination) }
        guard sealed else { throw .invalidKey("libcrypto failed to seal a message") }
        nonce += 1
    }

    /// `DecryptWithAd(ad, ciphertext)`: the plaintext, or `decryptionFailed` (the nonce then stays unchanged).
    public mutating func decrypt(ad: [UInt8], ciphertext: some Collection<UInt8>) throws(NoiseError) -> [UInt8] {
        var out: [UInt8] = []
        try decrypt(ad: ad, ciphertext: ciphertext, into: &out)
        return out
    }

    /// `DecryptWithAd(ad, ciphertext)`, appending the plaintext to `out` (nothing is appended when it fails).
    public mutating func decrypt(ad: [UInt8], ciphertext: some Collection<UInt8>, into out: inout [UInt8]) throws(NoiseError) {
        guard let key else {
            out.append(contentsOf: ciphertext)
            return
        }
        guard nonce != UInt64.max else { throw .nonceExhausted }
        guard ciphertext.count >= AEADKey.tagLength else { throw .decryptionFailed }
        let nonce = self.nonce
        let cipher = self.cipher
        let opened: Bool? = ciphertext.withContiguousStorageIfAvailable { buffer in
            Self.open(UnsafeRawBufferPointer(buffer), key: key, nonce: nonce, cipher: cipher, ad: ad, appendingTo: &out)
        }
        let success =
            opened
            ?? Array(ciphertext).withUnsafeBytes { buffer in
                Self.open(buffer, key: key, nonce: nonce, cipher: cipher, ad: ad, appendingTo: &out)
            }
        guard success else { throw .decryptionFailed }
        self.nonce += 1
    }

    private static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: AEADKey, nonce: UInt64, cipher: NoiseCipher, ad: [UInt8],
        appendingTo out: inout [UInt8]
    ) -> Bool {
        let count = ciphertext.count - AEADKey.tagLength
        var opened = false
        out.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                opened = ad.withUnsafeBytes { ad in
                    withNonce(nonce, cipher: cipher) { nonce in
                        key.open(nonce: nonce, ad: ad, ciphertext: ciphertext, into: UnsafeMutableRawBufferPointer(buffer))
                    }
                }
                initialized = opened ? count : 0
            }
        }
        return opened
    }

    /// The 12-byte nonce for `n`, as an array (tests and vectors).
    static func nonceBytes(_ n: UInt64, cipher: NoiseCipher) -> [UInt8] {
        withNonce(n, cipher: cipher) { Array($0) }
    }

    /// Calls `body` with the 12-byte nonce for `n` in a temporary (stack) buffer.
    static func withNonce<T>(_ n: UInt64, cipher: NoiseCipher, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        withUnsafeTemporaryAllocation(byteCount: 12, alignment: 8) { bytes in
            bytes.storeBytes(of: 0, toByteOffset: 0, as: UInt32.self)
            switch cipher {
            case .aesGCM: bytes.storeBytes(of: n.bigEndian, toByteOffset: 4, as: UInt64.self)
            case .chaChaPoly: bytes.storeBytes(of: n.littleEndian, toByteOffset: 4, as: UInt64.self)
            }
            return body(UnsafeRawBufferPointer(bytes))
        }
    }
}
