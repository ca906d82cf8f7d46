import NIOCore
import Synchronization

/// The open connections: counted per client address against the limits, and kept so the server can close them
/// when it stops.
final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var perAddress: [String: Int] = [:]
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

    /// Registers `channel` from `address`; false (and counted as refused) when a limit is reached or the server stops.
    func admit(_ channel: any Channel, address: String) -> Bool {
        state.withLock { state in
            guard !state.closed, state.channels.count < maxConnections, state.perAddress[address, default: 0] < maxPerAddress
            else {
                state.refused += 1
                return false
            }
            state.channels[ObjectIdentifier(channel)] = channel
            state.perAddress[address, default: 0] += 1
            return true
        }
    }

    /// Forgets `channel` (it closed).
    func remove(_ channel: any Channel, address: String) {
        state.withLock { state in
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
            return Array(state.channels.values)
        }
    }
}

/// The first handler of every connection: admits it through the registry or closes it at once.
final class ConnectionGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let registry: ConnectionRegistry
    private let address: String
    private var admitted = false

    init(registry: ConnectionRegistry, address: String) {
        self.registry = registry
        self.address = address
    }

    func channelActive(context: ChannelHandlerContext) {
        admitted = registry.admit(context.channel, address: address)
        guard admitted else {
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if admitted { registry.remove(context.channel, address: address) }
        context.fireChannelInactive()
    }
}
