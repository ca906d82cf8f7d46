import NIOCore
import Synchronization

/// The open connections: counted per client address against the limits, and kept so the server can close them
/// when it stops.
final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var perAddress: [String: Int] = [:]
        /// Connections over the limits that are being told so (503), per address.
        var overflow: [String: Int] = [:]
        var overflowChannels: [ObjectIdentifier: any Channel] = [:]
        var refused = 0
        var closed = false
    }

    let maxConnections: Int
    let maxPerAddress: Int
    private let state = Mutex(State())

    init(maxConnections: Int, maxPerAddress: Int) {
        self.maxConnections = max(1, maxConnections)
        self.maxPerAddress = max(1, maxPerAddress)
    }

    /// What becomes of a new connection.
    enum Admission {
        /// Served.
        case admitted
        /// Over a limit: its request is answered 503 with the reason, then it is closed (as many more again as
        /// the limit per address; beyond that a connection is closed at once).
        case overLimit
        /// Closed at once (the server stops, or even the answers over the limit are at their bound).
        case refused
    }

    /// Registers `channel` from `address`; over a limit (counted as refused) it is told so, or closed.
    func admit(_ channel: any Channel, address: String) -> Admission {
        state.withLock { state in
            if !state.closed, state.channels.count < maxConnections, state.perAddress[address, default: 0] < maxPerAddress {
                state.channels[ObjectIdentifier(channel)] = channel
                state.perAddress[address, default: 0] += 1
                return .admitted
            }
            state.refused += 1
            guard !state.closed, state.overflow[address, default: 0] < maxPerAddress else { return .refused }
            state.overflow[address, default: 0] += 1
            state.overflowChannels[ObjectIdentifier(channel)] = channel
            return .overLimit
        }
    }

    /// Forgets `channel` (it closed).
    func remove(_ channel: any Channel, address: String) {
        state.withLock { state in
            if state.overflowChannels.removeValue(forKey: ObjectIdentifier(channel)) != nil {
                let left = state.overflow[address, default: 1] - 1
                state.overflow[address] = left > 0 ? left : nil
                return
            }
            guard state.channels.removeValue(forKey: ObjectIdentifier(channel)) != nil else { return }
            let left = state.perAddress[address, default: 1] - 1
            state.perAddress[address] = left > 0 ? left : nil
        }
    }

    /// Connections open now, and connections refused so far.
    var counts: (open: Int, refused: Int) {
        state.withLock { ($0.channels.count, $0.refused) }
    }

    /// Refuses new connections from now on and returns the open ones (to close).
    func closeAll() -> [any Channel] {
        state.withLock { state in
            state.closed = true
            return Array(state.channels.values) + Array(state.overflowChannels.values)
        }
    }
}

/// The first handler of every connection: admits it through the registry or closes it at once.
final class ConnectionGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let registry: ConnectionRegistry
    private let address: String
    private let verdict: GateVerdict
    private var registered = false

    init(registry: ConnectionRegistry, address: String, verdict: GateVerdict) {
        self.registry = registry
        self.address = address
        self.verdict = verdict
    }

    func channelActive(context: ChannelHandlerContext) {
        switch registry.admit(context.channel, address: address) {
        case .admitted:
            registered = true
        case .overLimit:
            registered = true
            verdict.overLimit = "too many connections from \(address) at once (the limit is \(registry.maxPerAddress) per address, "
                + "\(registry.maxConnections) in all); close some and try again"
        case .refused:
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if registered { registry.remove(context.channel, address: address) }
        context.fireChannelInactive()
    }
}

/// What the gate decided for one connection, read by its HTTP handler (both on the connection's event loop).
final class GateVerdict {
    /// Set when the connection is over a limit: its request is answered 503 with this sentence.
    var overLimit: String?
}
