/// A Noise HandshakeState (Noise rev 34, section 5.3) for the patterns XX, XXpsk3 and KK.
///
/// Messages alternate starting with the initiator. After the last message `isComplete` is true and
/// `split()` yields the transport cipher states.
public struct NoiseHandshakeState: Sendable {
    /// The protocol this handshake runs.
    public let protocolName: NoiseProtocolName
    /// True on the initiator's side.
    public let isInitiator: Bool
    private var symmetric: NoiseSymmetricState
    private let localStatic: NoiseKeyPair?
    private var localEphemeral: NoiseKeyPair?
    private var remoteStatic: [UInt8]?
    private var remoteEphemeral: [UInt8]?
    private let psk: [UInt8]?
    private var messageIndex = 0
    /// A configuration problem found by the initializer, thrown by the first read or write.
    private let configurationError: NoiseError?

    /// `Initialize(...)`: sets up the handshake.
    ///
    /// - Parameters:
    ///   - protocol: pattern and cipher.
    ///   - initiator: which side this is.
    ///   - prologue: bytes both sides must agree on (mixed into the handshake hash).
    ///   - localStatic: this side's static key pair (needed by all three patterns).
    ///   - remoteStatic: the peer's static public key (KK only; must be known in advance).
    ///   - psk: the 32-byte pre-shared key (XXpsk3 only).
    ///   - ephemeral: a fixed ephemeral key pair (test vectors); nil generates a fresh one.
    ///
    /// Missing or malformed keys are reported by the first `writeMessage` or `readMessage`.
    public init(
        protocol protocolName: NoiseProtocolName, initiator: Bool, prologue: [UInt8],
        localStatic: NoiseKeyPair?, remoteStatic: [UInt8]?, psk: [UInt8]?, ephemeral: NoiseKeyPair? = nil
    ) {
        self.protocolName = protocolName
        self.isInitiator = initiator
        self.localStatic = localStatic
        self.remoteStatic = remoteStatic
        self.psk = psk
        self.localEphemeral = ephemeral
        symmetric = NoiseSymmetricState(protocolName: protocolName)
        symmetric.mixHash(prologue)

        let pattern = protocolName.pattern
        var problem: NoiseError?
        if localStatic == nil {
            problem = .missingKey("the \(pattern) pattern needs this side's static key pair")
        }
        if pattern.usesPSK {
            if let psk, psk.count != 32 {
                problem = .invalidKey("a pre-shared key has 32 bytes, not \(psk.count)")
            } else if psk == nil {
                problem = .missingKey("the \(pattern) pattern needs the 32-byte pre-shared key")
            }
        }
        if let remoteStatic, remoteStatic.count != 32 {
            problem = .invalidKey("the peer's static public key has 32 bytes, not \(remoteStatic.count)")
        }
        // Pre-messages: `-> s` then `<- s` (KK). The initiator's key is hashed first on both sides.
        let tokens = pattern.tokens
        let initiatorStatic = initiator ? localStatic?.publicKey : remoteStatic
        let responderStatic = initiator ? remoteStatic : localStatic?.publicKey
        for (preTokens, key) in [(tokens.preInitiator, initiatorStatic), (tokens.preResponder, responderStatic)]
        where preTokens.contains(.s) {
            if let key {
                symmetric.mixHash(key)
            } else {
                problem = .missingKey("the \(pattern) pattern needs the peer's static public key in advance")
            }
        }
        configurationError = problem
    }

    /// True when all handshake messages have been written or read.
    public var isComplete: Bool { messageIndex >= protocolName.pattern.messageCount }

    /// True when the next handshake message is this side's to write.
    public var isMyTurn: Bool { !isComplete && (messageIndex % 2 == 0) == isInitiator }

    /// The handshake hash `h` (channel binding); final once `isComplete`.
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// The peer's static public key, once known (pre-message in KK, learned in XX).
    public var remoteStaticPublicKey: [UInt8]? { remoteStatic }

    /// The length of the next handshake message with an empty payload.
    public var nextMessageLengthWithEmptyPayload: Int { nextMessageShape.length }

    /// True when the next message's payload is encrypted (a key is set by then); false when it travels in clear.
    public var nextMessageEncryptsPayload: Bool { nextMessageShape.encryptsPayload }

    private var nextMessageShape: (length: Int, encryptsPayload: Bool) {
        guard !isComplete else { return (0, false) }
        var hasKey = symmetric.cipherState.hasKey
        var length = 0
        for token in protocolName.pattern.tokens.messages[messageIndex] {
            switch token {
            case .e:
                length += 32
                if protocolName.pattern.usesPSK { hasKey = true }
            case .s: length += hasKey ? 48 : 32
            case .ee, .es, .se, .ss, .psk: hasKey = true
            }
        }
        return (length + (hasKey ? 16 : 0), hasKey)
    }

    /// `WriteMessage(payload)`: the next handshake message.
    public mutating func writeMessage(payload: [UInt8]) throws(NoiseError) -> [UInt8] {
        if let configurationError { throw configurationError }
        guard isMyTurn else {
            throw .invalidState(isComplete ? "the handshake is already complete" : "it is the peer's turn to write")
        }
        var out: [UInt8] = []
        for token in protocolName.pattern.tokens.messages[messageIndex] {
            switch token {
            case .e:
                let ephemeral = localEphemeral ?? NoiseKeyPair.generate()
                localEphemeral = ephemeral
                out.append(contentsOf: ephemeral.publicKey)
                symmetric.mixHash(ephemeral.publicKey)
                if protocolName.pattern.usesPSK { try symmetric.mixKey(ephemeral.publicKey) }
            case .s:
                guard let localStatic else { throw .missingKey("this side's static key pair") }
                try symmetric.encryptAndHash(localStatic.publicKey, into: &out)
            default:
                try mix(token)
            }
        }
        try symmetric.encryptAndHash(payload, into: &out)
        messageIndex += 1
        return out
    }

    /// `ReadMessage(message)`: processes the peer's handshake message and returns its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        if let configurationError { throw configurationError }
        guard !isComplete, !isMyTurn else {
            throw .invalidState(isComplete ? "the handshake is already complete" : "it is this side's turn to write")
        }
        let minimum = nextMessageLengthWithEmptyPayload
        guard message.count >= minimum else { throw .messageTooShort(expected: minimum, actual: message.count) }
        var rest = message[...]
        for token in protocolName.pattern.tokens.messages[messageIndex] {
            switch token {
            case .e:
                let key = Array(rest.prefix(32))
                rest = rest.dropFirst(32)
                remoteEphemeral = key
                symmetric.mixHash(key)
                if protocolName.pattern.usesPSK { try symmetric.mixKey(key) }
            case .s:
                let length = symmetric.cipherState.hasKey ? 48 : 32
                let encrypted = rest.prefix(length)
                rest = rest.dropFirst(length)
                remoteStatic = try symmetric.decryptAndHash(encrypted)
            default:
                try mix(token)
            }
        }
        let payload = try symmetric.decryptAndHash(rest)
        messageIndex += 1
        return payload
    }

    /// `Split()`: (initiator → responder, responder → initiator). Meaningful once `isComplete`.
    public func split() -> (initiatorToResponder: NoiseCipherState, responderToInitiator: NoiseCipherState) {
        let (first, second) = symmetric.split()
        return (first, second)
    }

    /// The DH and PSK tokens.
    private mutating func mix(_ token: HandshakePattern.Token) throws(NoiseError) {
        switch token {
        case .ee:
            try symmetric.mixKey(try ephemeralKey().dh(try remote(remoteEphemeral, "ephemeral")))
        case .ss:
            try symmetric.mixKey(try staticKey().dh(try remote(remoteStatic, "static")))
        case .es:
            // Initiator: DH(e, rs); responder: DH(s, re).
            if isInitiator {
                try symmetric.mixKey(try ephemeralKey().dh(try remote(remoteStatic, "static")))
            } else {
                try symmetric.mixKey(try staticKey().dh(try remote(remoteEphemeral, "ephemeral")))
            }
        case .se:
            // Initiator: DH(s, re); responder: DH(e, rs).
            if isInitiator {
                try symmetric.mixKey(try staticKey().dh(try remote(remoteEphemeral, "ephemeral")))
            } else {
                try symmetric.mixKey(try ephemeralKey().dh(try remote(remoteStatic, "static")))
            }
        case .psk:
            guard let psk else { throw .missingKey("the pre-shared key") }
            try symmetric.mixKeyAndHash(psk)
        case .e, .s:
            throw .invalidState("token \(token) is not a DH token")
        }
    }

    private func ephemeralKey() throws(NoiseError) -> NoiseKeyPair {
        guard let localEphemeral else { throw .missingKey("this side's ephemeral key") }
        return localEphemeral
    }

    private func staticKey() throws(NoiseError) -> NoiseKeyPair {
        guard let localStatic else { throw .missingKey("this side's static key pair") }
        return localStatic
    }

    private func remote(_ key: [UInt8]?, _ what: String) throws(NoiseError) -> [UInt8] {
        guard let key else { throw .missingKey("the peer's \(what) public key") }
        return key
    }
}
