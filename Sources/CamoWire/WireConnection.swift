/// One side of one connection of wire format v1, without I/O: bytes in → bytes out and events.
///
/// The initiator (studio) calls `start()` and sends the result; the responder (agent) feeds bytes to
/// `receive(_:)`, gets `.preamble`, and answers with `accept(...)` or `reject(_:)`. Both then feed every
/// received byte to `receive(_:)` and send what it returns. After `.handshakeComplete` application
/// messages go out through `seal(_:)`, `sealFragment(...)` or `MessageFragmenter`.
///
/// After any thrown error the connection is dead: every later throwing call throws the same error.
/// `errorRecord(_:)` still works once, so the caller can tell the peer why before closing.
public struct WireConnection: Sendable {
    /// Which side of the connection this is.
    public enum Role: Sendable { case initiator, responder }

    /// What `receive(_:)` found.
    public enum Event: Sendable, Equatable {
        /// Responder only: the preamble arrived; call `accept(...)` or `reject(...)` next.
        case preamble(Preamble)
        /// The handshake is complete; application messages may flow.
        case handshakeComplete(remoteStaticKey: [UInt8], handshakeHash: [UInt8])
        /// A complete application message (never `.error`, which is reported as `.peerError`).
        case message(AppMessage)
        /// The peer sent an error (`authenticated: false` for a kind 0x7F record); the connection is closed.
        case peerError(WireError, authenticated: Bool)
    }

    private enum Phase: Sendable, Equatable {
        case initiatorReady, awaitingPreamble, awaitingAccept, handshaking, established, closed
        case failed(WireError)
    }

    /// Handshake-phase record kinds: a Noise handshake message, an unauthenticated error.
    static let kindNoise: UInt8 = 0x01
    static let kindError: UInt8 = 0x7F

    /// Which side this is.
    public let role: Role
    private var phase: Phase
    /// The preamble: sent (initiator) or received (responder).
    public private(set) var preamble: Preamble?
    private var prologue: [UInt8] = []
    private var handshake: NoiseHandshakeState?
    private var sendCipher: NoiseCipherState?
    private var receiveCipher: NoiseCipherState?
    private let fixedEphemeral: NoiseKeyPair?
    private var initiatorStatic: NoiseKeyPair?
    private var initiatorRemoteStatic: [UInt8]?
    private var initiatorPSK: [UInt8]?
    private var inbox: [UInt8] = []
    private var inboxStart = 0
    private var partial: [[UInt8]] = [[], [], []]
    private var receivedHello = false
    private var peerConfirmed = false
    private var errorSent = false
    private var pendingEvents: [Event] = []
    private var receiveScratch: [UInt8] = []

    /// The largest reassembled message accepted (default `WireLimits.maxMessage`).
    public var maxMessage: Int = WireLimits.maxMessage
    /// The peer's static public key, once the handshake has revealed it.
    public private(set) var remoteStaticKey: [UInt8]?
    /// The final handshake hash, once the handshake is complete.
    public private(set) var handshakeHash: [UInt8]?

    private init(role: Role, phase: Phase, ephemeral: NoiseKeyPair?) {
        self.role = role
        self.phase = phase
        self.fixedEphemeral = ephemeral
    }

    /// The studio side. `start()` returns the preamble and the first handshake record.
    /// - Parameters:
    ///   - remoteStatic: the agent's static public key (KK).
    ///   - psk: the 32-byte pairing secret (XXpsk3).
    ///   - ephemeral: a fixed ephemeral key pair (tests, the protocol example); nil = fresh.
    public static func initiator(
        preamble: Preamble, localStatic: NoiseKeyPair, remoteStatic: [UInt8]?, psk: [UInt8]?,
        ephemeral: NoiseKeyPair? = nil
    ) -> WireConnection {
        var connection = WireConnection(role: .initiator, phase: .initiatorReady, ephemeral: ephemeral)
        connection.preamble = preamble
        connection.initiatorStatic = localStatic
        connection.initiatorRemoteStatic = remoteStatic
        connection.initiatorPSK = psk
        return connection
    }

    /// The agent side: waits for the preamble.
    public static func responder(ephemeral: NoiseKeyPair? = nil) -> WireConnection {
        WireConnection(role: .responder, phase: .awaitingPreamble, ephemeral: ephemeral)
    }

    /// True after the handshake completed and before the connection closed or failed.
    public var isEstablished: Bool { phase == .established }

    /// True after the connection closed (peer error or goodbye, `reject`, `errorRecord`) or failed.
    public var isClosed: Bool {
        switch phase {
        case .closed, .failed: true
        default: false
        }
    }

    /// The error that killed the connection, if one did.
    public var failure: WireError? {
        if case .failed(let error) = phase { return error }
        return nil
    }

    // MARK: - Starting

    /// Initiator only: the preamble followed by the first handshake record.
    public mutating func start() throws(WireError) -> [UInt8] {
        try guarded { (this: inout WireConnection) throws(WireError) -> [UInt8] in try this.startUnguarded() }
    }

    private mutating func startUnguarded() throws(WireError) -> [UInt8] {
        guard role == .initiator, phase == .initiatorReady, let preamble, let initiatorStatic else {
            throw WireError(.internalError, "start() is only for a new initiator connection")
        }
        try preamble.validate()
        try Self.checkKeys(pattern: preamble.pattern, remoteStatic: initiatorRemoteStatic, psk: initiatorPSK)
        prologue = preamble.encoded()
        var state = NoiseHandshakeState(
            protocol: NoiseProtocolName(pattern: preamble.pattern), initiator: true, prologue: prologue,
            localStatic: initiatorStatic, remoteStatic: initiatorRemoteStatic, psk: initiatorPSK, ephemeral: fixedEphemeral)
        var out = prologue
        let message: [UInt8]
        do {
            message = try state.writeMessage(payload: [])
        } catch {
            throw WireError(.internalError, "the first handshake message could not be written: \(error)")
        }
        Self.appendHandshakeRecord(kind: Self.kindNoise, body: message, to: &out)
        handshake = state
        phase = .handshaking
        return out
    }

    /// Responder after `.preamble`: chooses the keys and processes any handshake bytes already received.
    /// - Returns: bytes to send (the next handshake record if the first one had already arrived, else empty).
    ///   Events produced here (e.g. `.handshakeComplete` for KK) are returned by the next `receive(_:)`;
    ///   use `acceptReturningEvents` to get them at once.
    public mutating func accept(localStatic: NoiseKeyPair, remoteStatic: [UInt8]?, psk: [UInt8]?) throws(WireError) -> [UInt8] {
        let (send, events) = try acceptReturningEvents(localStatic: localStatic, remoteStatic: remoteStatic, psk: psk)
        pendingEvents.append(contentsOf: events)
        return send
    }

    /// Like `accept`, but returns the events produced by already buffered bytes instead of queueing them.
    public mutating func acceptReturningEvents(
        localStatic: NoiseKeyPair, remoteStatic: [UInt8]?, psk: [UInt8]?
    ) throws(WireError) -> (send: [UInt8], events: [Event]) {
        try guarded { (this: inout WireConnection) throws(WireError) -> ([UInt8], [Event]) in
            guard this.role == .responder, this.phase == .awaitingAccept, let preamble = this.preamble else {
                throw WireError(.internalError, "accept() is only for a responder that has just received the preamble")
            }
            try Self.checkKeys(pattern: preamble.pattern, remoteStatic: remoteStatic, psk: psk)
            this.handshake = NoiseHandshakeState(
                protocol: NoiseProtocolName(pattern: preamble.pattern), initiator: false, prologue: this.prologue,
                localStatic: localStatic, remoteStatic: remoteStatic, psk: psk, ephemeral: this.fixedEphemeral)
            this.phase = .handshaking
            return try this.process()
        }
    }

    /// Responder: refuses the connection with an unauthenticated error record (kind 0x7F).
    /// The connection is then closed; send the bytes and close the socket.
    public mutating func reject(_ error: WireError) -> [UInt8] {
        errorRecord(error)
    }

    /// The record that tells the peer why this side closes: after the handshake an authenticated `error`
    /// message (0x7E); before it, on the responder, an unauthenticated error record (kind 0x7F); before it
    /// on the initiator nothing (the initiator just closes). Works once, also after a thrown error; the
    /// connection is closed afterwards.
    public mutating func errorRecord(_ error: WireError) -> [UInt8] {
        guard !errorSent else { return [] }
        errorSent = true
        if failure == nil { phase = .closed }
        if var cipher = sendCipher {
            var out: [UInt8] = []
            var fragmenter = MessageFragmenter(.error(error))
            while let fragment = fragmenter.next() {
                guard (try? Self.sealRecord(fragment, cipher: &cipher, appendingTo: &out)) != nil else {
                    return out
                }
            }
            sendCipher = cipher
            return out
        }
        guard role == .responder else { return [] }
        var body: [UInt8] = []
        ByteWriter.append(error.code.rawValue, to: &body)
        let reason = WireText.encode(error.reason, maxBytes: WireLimits.maxRecordLength - 5)
        ByteWriter.append(UInt16(reason.count), to: &body)
        body.append(contentsOf: reason)
        var out: [UInt8] = []
        Self.appendHandshakeRecord(kind: Self.kindError, body: body, to: &out)
        return out
    }

    // MARK: - Receiving

    /// Feeds received bytes (any amount, any split). Returns bytes to send now (handshake replies; pongs are
    /// not automatic) and the events found.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(WireError) -> (send: [UInt8], events: [Event]) {
        switch phase {
        case .failed(let error): throw error
        case .closed: return ([], [])
        case .initiatorReady:
            return try guarded { (_: inout WireConnection) throws(WireError) -> ([UInt8], [Event]) in
                throw WireError(.internalError, "receive() was called before start()")
            }
        default: break
        }
        let appended: Void? = bytes.withContiguousStorageIfAvailable { inbox.append(contentsOf: $0) }
        if appended == nil { inbox.append(contentsOf: bytes) }
        return try guarded { (this: inout WireConnection) throws(WireError) -> ([UInt8], [Event]) in
            let (send, events) = try this.process()
            let all = this.pendingEvents + events
            this.pendingEvents = []
            return (send, all)
        }
    }

    private mutating func process() throws(WireError) -> ([UInt8], [Event]) {
        var send: [UInt8] = []
        var events: [Event] = []
        defer { compactInbox() }
        loop: while true {
            switch phase {
            case .awaitingPreamble:
                guard let (preamble, consumed) = try Preamble.decode(inbox[inboxStart...]) else { break loop }
                prologue = Array(inbox[inboxStart..<(inboxStart + consumed)])
                inboxStart += consumed
                self.preamble = preamble
                phase = .awaitingAccept
                events.append(.preamble(preamble))
            case .awaitingAccept:
                guard inbox.count - inboxStart <= 2 * (2 + WireLimits.maxRecordLength) else {
                    throw .violation("the initiator sent more than one handshake message before the responder answered")
                }
                break loop
            case .handshaking:
                guard let record = try nextRecord() else { break loop }
                try handleHandshakeRecord(record, send: &send, events: &events)
            case .established:
                guard let record = try nextRecord() else { break loop }
                try handleTransportRecord(record, events: &events)
            case .initiatorReady, .closed, .failed:
                break loop
            }
        }
        return (send, events)
    }

    private mutating func compactInbox() {
        if inboxStart >= inbox.count {
            inbox.removeAll(keepingCapacity: inbox.capacity <= 4 * (2 + WireLimits.maxRecordLength))
        } else if inboxStart > 0 {
            inbox.removeSubrange(0..<inboxStart)
        }
        inboxStart = 0
    }

    /// The next complete record's content (after the length field), or nil when it has not fully arrived.
    private mutating func nextRecord() throws(WireError) -> ArraySlice<UInt8>? {
        guard inbox.count - inboxStart >= 2 else { return nil }
        let length = Int(inbox[inboxStart]) << 8 | Int(inbox[inboxStart + 1])
        guard length > 0 else { throw .violation("a record has length 0") }
        guard inbox.count - inboxStart >= 2 + length else { return nil }
        let record = inbox[(inboxStart + 2)..<(inboxStart + 2 + length)]
        inboxStart += 2 + length
        return record
    }

    private mutating func handleHandshakeRecord(
        _ record: ArraySlice<UInt8>, send: inout [UInt8], events: inout [Event]
    ) throws(WireError) {
        // nextRecord() never returns an empty record.
        let kind = record[record.startIndex]
        let body = record.dropFirst()
        switch kind {
        case Self.kindNoise:
            guard var state = handshake, !state.isComplete, !state.isMyTurn else {
                throw .violation("a handshake message arrived when it was not the peer's turn")
            }
            let expected = state.nextMessageLengthWithEmptyPayload
            let encryptsPayload = state.nextMessageEncryptsPayload
            let pattern = state.protocolName.pattern
            let payload: [UInt8]
            do {
                payload = try state.readMessage(Array(body))
            } catch {
                throw Self.handshakeError(error, pattern: pattern, length: body.count, expected: expected)
            }
            guard payload.isEmpty else {
                if encryptsPayload {
                    throw .violation("the peer's handshake message carries a \(payload.count)-byte payload; v1 payloads are empty")
                }
                throw WireError(
                    .handshakeFailed,
                    "a \(pattern) handshake message has \(expected) bytes, but \(body.count) arrived; the peer runs a different pattern or the preamble was altered")
            }
            remoteStaticKey = state.remoteStaticPublicKey
            if state.isComplete {
                finishHandshake(state, completedByRead: true, events: &events)
                return
            }
            let reply: [UInt8]
            do {
                reply = try state.writeMessage(payload: [])
            } catch {
                throw WireError(.handshakeFailed, "the handshake reply could not be written: \(error)")
            }
            Self.appendHandshakeRecord(kind: Self.kindNoise, body: reply, to: &send)
            if state.isComplete {
                finishHandshake(state, completedByRead: false, events: &events)
            } else {
                handshake = state
            }
        case Self.kindError:
            guard role == .initiator else {
                throw .violation("the initiator sent an unauthenticated error record; only the responder may")
            }
            let error = try Self.parseUnauthenticatedError(body)
            events.append(.peerError(error, authenticated: false))
            phase = .closed
        default:
            throw .violation("record kind 0x\(String(kind, radix: 16)) is unknown in the handshake phase")
        }
    }

    private static func handshakeError(_ error: NoiseError, pattern: HandshakePattern, length: Int, expected: Int) -> WireError {
        switch error {
        case .decryptionFailed:
            WireError(
                .handshakeFailed,
                "the peer's \(pattern) handshake message failed authentication: a wrong static key or pre-shared key, or an altered preamble or message")
        case .messageTooShort:
            WireError(
                .handshakeFailed,
                "a \(pattern) handshake message has \(expected) bytes, but \(length) arrived; the peer runs a different pattern or the preamble was altered")
        default:
            WireError(.handshakeFailed, "the \(pattern) handshake failed: \(error)")
        }
    }

    private mutating func finishHandshake(_ state: NoiseHandshakeState, completedByRead: Bool, events: inout [Event]) {
        let (initiatorToResponder, responderToInitiator) = state.split()
        switch role {
        case .initiator:
            sendCipher = initiatorToResponder
            receiveCipher = responderToInitiator
        case .responder:
            sendCipher = responderToInitiator
            receiveCipher = initiatorToResponder
        }
        remoteStaticKey = state.remoteStaticPublicKey
        handshakeHash = state.handshakeHash
        handshake = nil
        peerConfirmed = completedByRead
        phase = .established
        events.append(.handshakeComplete(remoteStaticKey: state.remoteStaticPublicKey ?? [], handshakeHash: state.handshakeHash))
    }

    private static func parseUnauthenticatedError(_ body: ArraySlice<UInt8>) throws(WireError) -> WireError {
        var reader = ByteReader(body, context: "the unauthenticated error record")
        let codeValue = try reader.u16("code")
        let reasonLength = Int(try reader.u16("reasonLength"))
        let reason = try WireText.decode(try reader.bytes(reasonLength, "reason"), field: "the unauthenticated error reason")
        try reader.expectEnd()
        guard let code = WireErrorCode(rawValue: codeValue) else {
            throw .violation("the unauthenticated error record carries code \(codeValue), which v1 does not define")
        }
        return WireError(code: code, reason: reason)
    }

    private mutating func handleTransportRecord(_ record: ArraySlice<UInt8>, events: inout [Event]) throws(WireError) {
        guard var cipher = receiveCipher else { throw WireError(.internalError, "no receive cipher in the transport phase") }
        receiveScratch.removeAll(keepingCapacity: true)
        do {
            try cipher.decrypt(ad: [], ciphertext: record, into: &receiveScratch)
        } catch {
            if role == .initiator, !peerConfirmed {
                // Before the agent's first authenticated record, an XX responder may still refuse with 0x7F.
                if record.first == Self.kindError, let refusal = try? Self.parseUnauthenticatedError(record.dropFirst()) {
                    events.append(.peerError(refusal, authenticated: false))
                    phase = .closed
                    return
                }
                throw WireError(
                    .handshakeFailed,
                    "the agent's first transport message failed authentication; the handshake did not succeed (wrong key or pre-shared key)")
            }
            if error == .nonceExhausted {
                throw WireError(.limitExceeded, "the receive nonce is exhausted; no more messages can be received")
            }
            throw .violation("a transport message failed authentication")
        }
        receiveCipher = cipher
        peerConfirmed = true
        guard receiveScratch.count >= WireLimits.fragmentHeaderLength else {
            throw .violation("a transport message of \(receiveScratch.count) bytes has no fragment header")
        }
        guard let channel = WireChannel(rawValue: receiveScratch[0]) else {
            throw .violation("fragment channel \(receiveScratch[0]) is unknown; v1 has 0 (control), 1 (video), 2 (audio)")
        }
        let flags = receiveScratch[1]
        guard flags & ~1 == 0 else {
            throw .violation("fragment flags 0x\(String(flags, radix: 16)) set bits other than FINAL")
        }
        let index = Int(channel.rawValue)
        let fragmentLength = receiveScratch.count - WireLimits.fragmentHeaderLength
        guard partial[index].count + fragmentLength <= maxMessage else {
            throw WireError(
                .limitExceeded,
                "a message on the \(channel) channel grew beyond \(maxMessage) bytes, the largest message allowed")
        }
        partial[index].append(contentsOf: receiveScratch[WireLimits.fragmentHeaderLength...])
        guard flags & 1 == 1 else { return }
        // Decoding copies what it keeps, so the reassembly buffer keeps its capacity for the next message.
        let message = try AppMessage.decode(partial[index])
        partial[index].removeAll(keepingCapacity: true)
        try deliver(message, channel: channel, events: &events)
    }

    private mutating func deliver(_ message: AppMessage, channel: WireChannel, events: inout [Event]) throws(WireError) {
        let type = message.type
        guard message.channel == channel else {
            throw .violation("a \(type) message arrived on the \(channel) channel; it belongs on \(message.channel)")
        }
        let peerIsStudio = role == .responder
        if let byStudio = type.sentByStudio, byStudio != peerIsStudio {
            throw .violation("the \(peerIsStudio ? "studio" : "agent") must not send \(type)")
        }
        let isHello = type == .studioHello || type == .agentHello
        if isHello {
            guard !receivedHello else { throw .violation("the peer sent a second \(type)") }
            receivedHello = true
        } else if !receivedHello && type != .error && type != .goodbye {
            throw .violation("the first message must be the \(peerIsStudio ? "studioHello" : "agentHello"), not \(type)")
        }
        switch message {
        case .error(let error):
            events.append(.peerError(error, authenticated: true))
            phase = .closed
        case .goodbye:
            events.append(.message(message))
            phase = .closed
        default:
            events.append(.message(message))
        }
    }

    // MARK: - Sending

    /// Transport: appends one record carrying one fragment to `out`.
    /// `payload.count` must be at most `WireLimits.maxFragmentPayload`.
    public mutating func sealFragment(
        channel: WireChannel, final: Bool, payload: some Collection<UInt8>, into out: inout [UInt8]
    ) throws(WireError) {
        let body: ArraySlice<UInt8> =
            payload.withContiguousStorageIfAvailable { ArraySlice($0) } ?? ArraySlice(payload)
        try seal(WireFragment(channel: channel, isFinal: final, body: body), into: &out)
    }

    /// Transport: appends one record carrying `fragment` to `out`.
    public mutating func seal(_ fragment: WireFragment, into out: inout [UInt8]) throws(WireError) {
        let length = Self.recordLength(of: fragment)
        var failure: WireError?
        out.append(addingCapacity: length) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                do throws(WireError) {
                    initialized = try seal(fragment, into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    /// Transport: the length of the record that carries `fragment` (its 2-byte length, the fragment header, the
    /// fragment and the tag).
    public static func recordLength(of fragment: WireFragment) -> Int {
        2 + WireLimits.fragmentHeaderLength + fragment.count + WireLimits.tagLength
    }

    /// Transport: writes the record carrying `fragment` to the start of `destination`, which holds at least
    /// `recordLength(of:)` bytes, and returns its length. The fragment is sealed straight from its slices into
    /// `destination`: no other copy and no allocation.
    public mutating func seal(_ fragment: WireFragment, into destination: UnsafeMutableRawBufferPointer) throws(WireError) -> Int {
        try guarded { (this: inout WireConnection) throws(WireError) -> Int in
            guard fragment.count <= WireLimits.maxFragmentPayload else {
                throw WireError(
                    .limitExceeded, "a fragment has \(fragment.count) bytes; the limit is \(WireLimits.maxFragmentPayload)")
            }
            let length = Self.recordLength(of: fragment)
            guard destination.count >= length else {
                throw WireError(.internalError, "a record of \(length) bytes does not fit the \(destination.count) bytes given for it")
            }
            guard !this.errorSent else {
                throw WireError(.internalError, "the connection was closed with an error record; nothing more can be sent")
            }
            guard var cipher = this.sendCipher else {
                throw WireError(.internalError, "application data cannot be sent before the handshake completes")
            }
            do {
                try Self.sealRecord(fragment, cipher: &cipher, into: destination)
            } catch {
                throw WireError(.limitExceeded, "the send nonce is exhausted; no more messages can be sent")
            }
            this.sendCipher = cipher
            return length
        }
    }

    /// Convenience: a whole message as records (split into fragments as needed).
    public mutating func seal(_ message: AppMessage) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        var fragmenter = MessageFragmenter(message)
        while !fragmenter.isFinished {
            try fragmenter.sealNext(using: &self, into: &out)
        }
        return out
    }

    /// Tests only: seals `plaintext` as a transport record without checking that it is a valid fragment.
    mutating func sealRawPlaintextForTesting(_ plaintext: [UInt8], into out: inout [UInt8]) throws {
        guard var cipher = sendCipher else { throw WireError(.internalError, "no send cipher") }
        let length = plaintext.count + WireLimits.tagLength
        out.append(UInt8(length >> 8))
        out.append(UInt8(length & 0xFF))
        try cipher.encrypt(ad: [], plaintext: plaintext, into: &out)
        sendCipher = cipher
    }

    /// The record carrying `fragment` (its 2-byte length, then the fragment header, head and body sealed straight
    /// from where they are), written to the start of `destination` (`recordLength(of:)` bytes).
    private static func sealRecord(
        _ fragment: WireFragment, cipher: inout NoiseCipherState, into destination: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        let sealedLength = WireLimits.fragmentHeaderLength + fragment.count + cipher.overhead
        destination[0] = UInt8(sealedLength >> 8)
        destination[1] = UInt8(sealedLength & 0xFF)
        var header = (fragment.channel.rawValue, fragment.isFinal ? UInt8(1) : 0)
        let result = withUnsafeBytes(of: &header) { header in
            fragment.head.withUnsafeBytes { head in
                fragment.body.withUnsafeBytes { body in
                    Result { () throws(NoiseError) in
                        try cipher.encrypt(
                            ad: NoiseCipherState.nothing, header, head, body,
                            into: UnsafeMutableRawBufferPointer(rebasing: destination[2...]))
                    }
                }
            }
        }
        try result.get()
    }

    /// `sealRecord` appended to `out`.
    private static func sealRecord(
        _ fragment: WireFragment, cipher: inout NoiseCipherState, appendingTo out: inout [UInt8]
    ) throws(NoiseError) {
        let length = recordLength(of: fragment)
        var failure: NoiseError?
        out.append(addingCapacity: length) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                do throws(NoiseError) {
                    try sealRecord(fragment, cipher: &cipher, into: UnsafeMutableRawBufferPointer(buffer))
                    initialized = length
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    private static func appendHandshakeRecord(kind: UInt8, body: [UInt8], to out: inout [UInt8]) {
        let length = 1 + body.count
        out.append(UInt8(length >> 8))
        out.append(UInt8(length & 0xFF))
        out.append(kind)
        out.append(contentsOf: body)
    }

    private static func checkKeys(pattern: HandshakePattern, remoteStatic: [UInt8]?, psk: [UInt8]?) throws(WireError) {
        if pattern == .kk {
            guard let remoteStatic, remoteStatic.count == 32 else {
                throw WireError(.internalError, "KK needs the peer's 32-byte static public key")
            }
        }
        if pattern == .xxpsk3 {
            guard let psk, psk.count == 32 else {
                throw WireError(.internalError, "XXpsk3 needs the 32-byte pre-shared key")
            }
        }
    }

    /// Runs `body`; if it throws, the connection is dead and remembers the error.
    private mutating func guarded<T>(_ body: (inout WireConnection) throws(WireError) -> T) throws(WireError) -> T {
        if case .failed(let error) = phase { throw error }
        do {
            return try body(&self)
        } catch {
            phase = .failed(error)
            throw error
        }
    }
}
