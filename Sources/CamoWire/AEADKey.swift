import CLibCrypto
import Synchronization

/// One AEAD key in OpenSSL's libcrypto (EVP AES-256-GCM or ChaCha20-Poly1305), its context kept initialised so a
/// record only sets its nonce. Sealing reads the plaintext from up to three pieces and writes the ciphertext and tag
/// straight into the caller's buffer; opening writes the plaintext into the caller's buffer. Neither allocates.
///
/// The one file of CamoWire that calls C. The context is used under a lock, so copies of a `NoiseCipherState` that
/// share it stay correct (each call sets its own nonce).
final class AEADKey: Sendable {
    /// The tag's length in bytes (both ciphers).
    static let tagLength = 16
    /// libcrypto's `EVP_CIPHER_CTX`, only touched under `lock`.
    nonisolated(unsafe) private let context: OpaquePointer
    private let lock = Mutex(())
    /// Longest input handed to one EVP call (its lengths are `Int32`).
    private static let chunk = 1 << 30

    /// A context for `cipher` with a 32-byte `key`.
    init(cipher: NoiseCipher, key: [UInt8]) throws(NoiseError) {
        guard key.count == 32 else { throw .invalidKey("a cipher key has 32 bytes, not \(key.count)") }
        guard let context = EVP_CIPHER_CTX_new() else { throw .invalidKey("libcrypto could not make a cipher context") }
        let algorithm =
            switch cipher {
            case .aesGCM: EVP_aes_256_gcm()
            case .chaChaPoly: EVP_chacha20_poly1305()
            }
        let initialised = key.withUnsafeBufferPointer { EVP_CipherInit_ex(context, algorithm, nil, $0.baseAddress, nil, 1) }
        guard initialised == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw .invalidKey("libcrypto refused the \(cipher) key")
        }
        self.context = context
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
    }

    /// Seals `a ‖ b ‖ c` with `nonce` (12 bytes) and `ad`: the ciphertext goes to `output`'s first `a.count + b.count +
    /// c.count` bytes and the tag right after it, so `output` holds at least that plus `tagLength`. False when
    /// libcrypto fails (nothing the caller can mend).
    func seal(
        nonce: UnsafeRawBufferPointer, ad: UnsafeRawBufferPointer,
        _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ c: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        let length = a.count + b.count + c.count
        precondition(output.count >= length + Self.tagLength, "the sealed record's buffer is too short")
        return lock.withLock { _ -> Bool in
            guard EVP_CipherInit_ex(context, nil, nil, nil, nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), 1) == 1,
                Self.update(context, ad, into: nil)
            else { return false }
            guard Self.update(context, a, into: output.baseAddress!),
                Self.update(context, b, into: output.baseAddress! + a.count),
                Self.update(context, c, into: output.baseAddress! + a.count + b.count)
            else { return false }
            let offset = length
            var finalLength: Int32 = 0
            guard EVP_CipherFinal_ex(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, &finalLength) == 1,
                finalLength == 0
            else { return false }
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagLength), output.baseAddress! + length) == 1
        }
    }

    /// Opens `ciphertext` (the sealed bytes followed by the tag) with `nonce` and `ad`, writing the plaintext to
    /// `output`'s first `ciphertext.count - tagLength` bytes. False when the tag does not authenticate (then what was
    /// written must not be used).
    func open(
        nonce: UnsafeRawBufferPointer, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard ciphertext.count >= Self.tagLength else { return false }
        let length = ciphertext.count - Self.tagLength
        precondition(output.count >= length, "the opened record's buffer is too short")
        return withUnsafeTemporaryAllocation(byteCount: Self.tagLength, alignment: 1) { tag -> Bool in
            tag.copyMemory(from: UnsafeRawBufferPointer(rebasing: ciphertext[length...]))
            return lock.withLock { _ -> Bool in
                guard EVP_CipherInit_ex(context, nil, nil, nil, nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), 0) == 1,
                    Self.update(context, ad, into: nil),
                    length == 0 || Self.update(context, UnsafeRawBufferPointer(rebasing: ciphertext[..<length]), into: output.baseAddress!),
                    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagLength), tag.baseAddress) == 1
                else { return false }
                var finalLength: Int32 = 0
                var scratch: UInt8 = 0
                return EVP_CipherFinal_ex(context, &scratch, &finalLength) == 1 && finalLength == 0
            }
        }
    }

    /// One `EVP_CipherUpdate` per chunk of `input`: additional data when `output` is nil, else the text, written to
    /// `output` (GCM and ChaCha20-Poly1305 write as much as they read).
    private static func update(_ context: OpaquePointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer?) -> Bool {
        var offset = 0
        while offset < input.count {
            let count = min(chunk, input.count - offset)
            var written: Int32 = 0
            let source = input.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset
            let destination = output.map { ($0 + offset).assumingMemoryBound(to: UInt8.self) }
            guard EVP_CipherUpdate(context, destination, &written, source, Int32(count)) == 1,
                output == nil || Int(written) == count
            else { return false }
            offset += count
        }
        return true
    }
}
