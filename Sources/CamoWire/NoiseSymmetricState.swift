import Crypto

/// A Noise SymmetricState (Noise rev 34, section 5.2) with SHA-256 and HMAC-SHA256 HKDF.
public struct NoiseSymmetricState: Sendable {
    /// The cipher state keyed by `MixKey`.
    public private(set) var cipherState: NoiseCipherState
    /// The chaining key `ck`.
    public private(set) var chainingKey: [UInt8]
    /// The handshake hash `h`.
    public private(set) var handshakeHash: [UInt8]

    /// `InitializeSymmetric(protocol_name)`.
    public init(protocolName: NoiseProtocolName) {
        let name = Array(protocolName.name.utf8)
        let h = name.count <= 32 ? name + [UInt8](repeating: 0, count: 32 - name.count) : Self.hash(name)
        handshakeHash = h
        chainingKey = h
        cipherState = NoiseCipherState(cipher: protocolName.cipher)
    }

    /// `MixKey(ikm)`.
    public mutating func mixKey(_ inputKeyMaterial: [UInt8]) throws(NoiseError) {
        let outputs = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 2)
        chainingKey = outputs[0]
        try cipherState.initializeKey(outputs[1])
    }

    /// `MixHash(data)`.
    public mutating func mixHash(_ data: some Collection<UInt8>) {
        var hasher = SHA256()
        hasher.update(data: handshakeHash)
        hasher.update(data: Array(data))
        handshakeHash = Array(hasher.finalize())
    }

    /// `MixKeyAndHash(ikm)` (used by the `psk` token).
    public mutating func mixKeyAndHash(_ inputKeyMaterial: [UInt8]) throws(NoiseError) {
        let outputs = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 3)
        chainingKey = outputs[0]
        mixHash(outputs[1])
        try cipherState.initializeKey(outputs[2])
    }

    /// `EncryptAndHash(plaintext)`, appending to `out`.
    public mutating func encryptAndHash(_ plaintext: [UInt8], into out: inout [UInt8]) throws(NoiseError) {
        let start = out.count
        try cipherState.encrypt(ad: handshakeHash, plaintext: plaintext, into: &out)
        mixHash(out[start...])
    }

    /// `DecryptAndHash(ciphertext)`.
    public mutating func decryptAndHash(_ ciphertext: ArraySlice<UInt8>) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipherState.decrypt(ad: handshakeHash, ciphertext: ciphertext)
        mixHash(ciphertext)
        return plaintext
    }

    /// `Split()`: the initiator→responder and responder→initiator cipher states.
    public func split() -> (NoiseCipherState, NoiseCipherState) {
        let outputs = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial: [], outputs: 2)
        var first = NoiseCipherState(cipher: cipherState.cipher)
        var second = NoiseCipherState(cipher: cipherState.cipher)
        // HKDF outputs are always 32 bytes, which is exactly a valid key.
        try? first.initializeKey(outputs[0])
        try? second.initializeKey(outputs[1])
        return (first, second)
    }

    static func hash(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    /// `HKDF(chaining_key, input_key_material, num_outputs)` from Noise section 4.3.
    static func hkdf(chainingKey: [UInt8], inputKeyMaterial: [UInt8], outputs: Int) -> [[UInt8]] {
        let tempKey = hmac(key: chainingKey, data: inputKeyMaterial)
        var result: [[UInt8]] = []
        var previous: [UInt8] = []
        for i in 1...outputs {
            previous = hmac(key: tempKey, data: previous + [UInt8(i)])
            result.append(previous)
        }
        return result
    }
}
