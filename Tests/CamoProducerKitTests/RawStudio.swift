import CamoWire
import NIOCore
import NIOPosix

/// What `body` returns, or nil when `seconds` pass first (`body` is then cancelled).
func firstOrNil<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        // Safe: the group has two tasks, so next() returns at least once.
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// A studio driven by hand over loopback TCP, for exchanges a real studio never makes (a hello that names
/// another id than the preamble, a hello sent late): it sends what its `WireConnection` makes, feeds the
/// connection what arrives, and answers each event with the bytes the test chooses.
enum RawStudio {
    /// What the agent said, and whether it closed the connection before the time was up.
    struct Conversation: Sendable {
        var events: [WireConnection.Event]
        var closed: Bool

        /// The error the agent sent (authenticated or not), if any.
        var peerError: WireError? {
            for case .peerError(let error, _) in events { return error }
            return nil
        }

        /// The agent's goodbye, if any.
        var goodbye: WireError? {
            for case .message(.goodbye(let goodbye)) in events { return goodbye }
            return nil
        }

        /// The agent's hello, if any.
        var agentHello: AgentHello? {
            for case .message(.agentHello(let hello)) in events { return hello }
            return nil
        }
    }

    /// Connects to `port`, sends the preamble and the first handshake message, then after each event sends
    /// what `respond` returns, until the agent closes, `until` holds for the events so far (the connection is
    /// then closed by this side, and `closed` is false), or `seconds` pass.
    static func converse(
        port: Int, wire: WireConnection, seconds: Double = 10,
        until: @escaping @Sendable ([WireConnection.Event]) -> Bool = { _ in false },
        respond: @escaping @Sendable (inout WireConnection, WireConnection.Event) throws -> [UInt8]
    ) async throws -> Conversation {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await firstOrNil(within: seconds) {
                var wire = wire
                var events: [WireConnection.Event] = []
                try await outbound.write(ByteBuffer(bytes: try wire.start()))
                do {
                    for try await var chunk in inbound {
                        // Safe: readBytes(length: readableBytes) always succeeds.
                        let bytes = chunk.readBytes(length: chunk.readableBytes)!
                        var (out, found) = try wire.receive(bytes)
                        for event in found {
                            events.append(event)
                            out += try respond(&wire, event)
                        }
                        if !out.isEmpty { try await outbound.write(ByteBuffer(bytes: out)) }
                        if until(events) { return Conversation(events: events, closed: false) }
                    }
                } catch is WireError {
                    throw WireError(code: .protocolViolation, reason: "the agent's bytes did not parse: \(events)")
                } catch {
                    // The agent closed while this side was writing: what it said is in `events`.
                }
                return Conversation(events: events, closed: true)
            } ?? Conversation(events: [], closed: false)
        }
    }

    /// Answers the completed handshake with `hello`, and nothing else.
    static func sendHello(_ hello: StudioHello) -> @Sendable (inout WireConnection, WireConnection.Event) throws -> [UInt8] {
        { wire, event in
            guard case .handshakeComplete = event else { return [] }
            return try wire.seal(.studioHello(hello))
        }
    }

    /// A studio hello naming `id`.
    static func hello(id: String) -> StudioHello {
        StudioHello(
            studioId: id, studioName: "Raw studio", audioSamplesRequired: 480,
            preferredWidth: 320, preferredHeight: 180, codec: .agentDecides, jpegQuality: 0)
    }
}
