import CamoProducerKit
import Foundation
import NIOCore
import NIOPosix

/// Sends one request to a running agent's control socket and returns its response.
public enum ControlClient {
    /// Connects to the control socket at `path`, sends `request`, and returns the answer (5 s at most).
    public static func send(_ request: ControlRequest, to path: String) async throws -> ControlResponse {
        let address: SocketAddress
        do {
            address = try SocketAddress(unixDomainSocketPath: path)
        } catch {
            throw ControlError.noAgent(path: path, reason: "\(error)")
        }
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(to: address) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ControlError.noAgent(path: path, reason: "\(error)")
        }
        var line = try ControlResponse.encoder.encode(request)
        line.append(UInt8(ascii: "\n"))
        let requestBytes = line
        // An agent that accepts but never answers (stopped with SIGSTOP, say) must not hang the command.
        let timeout = channel.channel.eventLoop.scheduleTask(in: .seconds(5)) { [channel = channel.channel] in
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        let received = try await channel.executeThenClose { inbound, outbound -> [UInt8] in
            try await outbound.write(ByteBuffer(bytes: requestBytes))
            var received: [UInt8] = []
            for try await var chunk in inbound {
                // Safe: readBytes(length: readableBytes) always succeeds.
                received += chunk.readBytes(length: chunk.readableBytes)!
                if received.contains(UInt8(ascii: "\n")) { break }
            }
            return received
        }
        guard received.contains(UInt8(ascii: "\n")) else {
            throw ControlError.noAgent(path: path, reason: "no answer within 5 seconds")
        }
        let body = received.split(separator: UInt8(ascii: "\n"), maxSplits: 1).first.map(Array.init) ?? []
        do {
            return try ControlResponse.decoder.decode(ControlResponse.self, from: Data(body))
        } catch {
            throw ControlError.badResponse(String(decoding: body, as: UTF8.self))
        }
    }
}
