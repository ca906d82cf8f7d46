/// The Noise handshake patterns of wire format v1 (the preamble's pattern byte).
public enum HandshakePattern: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// `Noise_XX`: both statics are sent during the handshake. Unpaired sessions on trusted links.
    case xx = 1
    /// `Noise_XXpsk3`: XX plus a pre-shared key mixed at the end of the third message. Pairing.
    case xxpsk3 = 2
    /// `Noise_KK`: both statics are known in advance. Sessions between paired devices.
    case kk = 3

    /// The pattern's name inside a Noise protocol name: `XX`, `XXpsk3`, `KK`.
    public var noiseName: String {
        switch self {
        case .xx: "XX"
        case .xxpsk3: "XXpsk3"
        case .kk: "KK"
        }
    }

    /// The Noise name of the pattern.
    public var description: String { noiseName }

    /// The number of handshake messages (3 for XX and XXpsk3, 2 for KK).
    public var messageCount: Int { tokens.messages.count }

    var usesPSK: Bool { self == .xxpsk3 }

    enum Token: Sendable { case e, s, ee, es, se, ss, psk }

    /// Pre-messages (`initiator`: `-> s ...`, `responder`: `<- s ...`) and the message patterns, per Noise rev 34.
    var tokens: (preInitiator: [Token], preResponder: [Token], messages: [[Token]]) {
        switch self {
        case .xx: ([], [], [[.e], [.e, .ee, .s, .es], [.s, .se]])
        case .xxpsk3: ([], [], [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]])
        case .kk: ([.s], [.s], [[.e, .es, .ss], [.e, .ee, .se]])
        }
    }
}

/// The AEAD cipher of a Noise protocol.
public enum NoiseCipher: Sendable, Equatable, CustomStringConvertible {
    /// AES-256-GCM; nonce = 4 zero bytes + 64-bit big-endian counter. The cipher of wire format v1.
    case aesGCM
    /// ChaCha20-Poly1305; nonce = 4 zero bytes + 64-bit little-endian counter. Supported for the test vectors.
    case chaChaPoly

    /// `AESGCM` or `ChaChaPoly`.
    public var description: String {
        switch self {
        case .aesGCM: "AESGCM"
        case .chaChaPoly: "ChaChaPoly"
        }
    }
}

/// A parsed Noise protocol name such as `Noise_XX_25519_AESGCM_SHA256`.
/// Only DH `25519` and hash `SHA256` are supported.
public struct NoiseProtocolName: Sendable, Equatable, CustomStringConvertible {
    /// The handshake pattern.
    public var pattern: HandshakePattern
    /// The AEAD cipher.
    public var cipher: NoiseCipher

    /// A protocol name from its parts.
    public init(pattern: HandshakePattern, cipher: NoiseCipher = .aesGCM) {
        self.pattern = pattern
        self.cipher = cipher
    }

    /// Parses `Noise_<XX|XXpsk3|KK>_25519_<AESGCM|ChaChaPoly>_SHA256`; nil for anything else.
    public init?(_ name: String) {
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "Noise", parts[2] == "25519", parts[4] == "SHA256" else { return nil }
        guard let pattern = HandshakePattern.allCases.first(where: { $0.noiseName == parts[1] }) else { return nil }
        switch parts[3] {
        case "AESGCM": self.init(pattern: pattern, cipher: .aesGCM)
        case "ChaChaPoly": self.init(pattern: pattern, cipher: .chaChaPoly)
        default: return nil
        }
    }

    /// The full protocol name, e.g. `Noise_KK_25519_AESGCM_SHA256`.
    public var name: String { "Noise_\(pattern.noiseName)_25519_\(cipher)_SHA256" }

    /// Same as `name`.
    public var description: String { name }
}
