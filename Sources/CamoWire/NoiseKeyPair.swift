import Crypto

/// An X25519 key pair as raw 32-byte strings.
public struct NoiseKeyPair: Sendable, Equatable {
    /// The 32-byte X25519 private key (the scalar, before clamping).
    public let privateKey: [UInt8]
    /// The 32-byte X25519 public key.
    public let publicKey: [UInt8]

    /// A fresh random key pair.
    public static func generate() -> NoiseKeyPair {
        let key = Curve25519.KeyAgreement.PrivateKey()
        return NoiseKeyPair(
            checkedPrivateKey: Array(key.rawRepresentation), publicKey: Array(key.publicKey.rawRepresentation))
    }

    /// The key pair of a fixed private key (stored keys, test vectors).
    /// - Throws: `NoiseError.invalidKey` unless `privateKey` is 32 bytes.
    public init(privateKey: [UInt8]) throws(NoiseError) {
        guard privateKey.count == 32 else {
            throw .invalidKey("an X25519 private key has 32 bytes, not \(privateKey.count)")
        }
        do {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
            self.init(checkedPrivateKey: privateKey, publicKey: Array(key.publicKey.rawRepresentation))
        } catch {
            throw .invalidKey("the X25519 private key was refused: \(error)")
        }
    }

    private init(checkedPrivateKey: [UInt8], publicKey: [UInt8]) {
        self.privateKey = checkedPrivateKey
        self.publicKey = publicKey
    }

    /// DH(self, publicKey) per the Noise spec: the 32-byte X25519 shared secret.
    func dh(_ remotePublicKey: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard remotePublicKey.count == 32 else {
            throw .invalidKey("an X25519 public key has 32 bytes, not \(remotePublicKey.count)")
        }
        do {
            let local = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
            let remote = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: remotePublicKey)
            let secret = try local.sharedSecretFromKeyAgreement(with: remote)
            return secret.withUnsafeBytes { Array($0) }
        } catch {
            // BoringSSL refuses low-order points (an all-zero shared secret); Noise allows failing here.
            throw .invalidKey("X25519 key agreement failed (low-order public key?): \(error)")
        }
    }
}
