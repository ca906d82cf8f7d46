/// Errors of the Noise layer. `WireConnection` turns them into `WireError`s.
public enum NoiseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The AEAD tag did not verify: wrong key, wrong associated data (handshake hash), or tampered bytes.
    case decryptionFailed
    /// The nonce reached 2^64 − 1, which Noise reserves; the cipher state cannot be used any more.
    case nonceExhausted
    /// A key had the wrong length or could not be used.
    case invalidKey(String)
    /// A handshake message was shorter than its pattern requires.
    case messageTooShort(expected: Int, actual: Int)
    /// The handshake state was used out of order (not this side's turn, or already complete).
    case invalidState(String)
    /// The handshake needs a key that was not supplied (local static, remote static, or PSK).
    case missingKey(String)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .decryptionFailed: "the message failed authentication"
        case .nonceExhausted: "the cipher nonce is exhausted (2^64 - 1 messages); no more messages can be sent"
        case .invalidKey(let why): "invalid key: \(why)"
        case .messageTooShort(let expected, let actual):
            "the handshake message has \(actual) bytes but the pattern needs at least \(expected)"
        case .invalidState(let why): "the handshake was used out of order: \(why)"
        case .missingKey(let why): "a key is missing: \(why)"
        }
    }
}
