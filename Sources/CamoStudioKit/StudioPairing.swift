import CamoWire
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The studio's half of pairing: connect to the agent's pairing port, run `Noise_XXpsk3` with the QR code's
/// secret, say who this studio is, and learn who the agent is (its id, name and proven long-term key).
public enum StudioPairing {
    /// Pairs with the agent listening at `host:port` for `payload`.
    /// - Returns: the agent to store. The agent has stored this studio when this returns.
    /// - Throws: ``StudioClientError``: `agentRefused` with the agent's reason (a closed window, another
    ///   studio's code, a wrong secret shows as a failed handshake), `connectFailed`, `handshakeTimeout`.
    public static func pair(
        host: String, port: Int, payload: PairingPayload, identity: StudioIdentity, studioName: String,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "camo.studio.pairing")
    ) async throws(StudioClientError) -> PairedAgent {
        guard identity.id == payload.studioId else {
            throw .invalidArgument("the pairing code names studio \(payload.studioId), but this studio is \(identity.id)")
        }
        var configuration = StudioClientConfiguration(identity: identity, studioName: studioName)
        configuration.handshake = .pairing(secret: payload.secret)
        configuration.decodeVideo = false
        let client = try await StudioClient.connect(host: host, port: port, configuration: configuration, group: group, logger: logger)
        let agent = client.agent
        await client.close(reason: "paired")
        guard agent.staticPublicKey.count == 32 else {
            throw .sessionEnded(.protocolError(code: WireErrorCode.handshakeFailed.rawValue, reason: "the agent's key is not 32 bytes"))
        }
        return PairedAgent(id: agent.agentId, name: agent.agentName, publicKey: agent.staticPublicKey, pairedAt: Date())
    }
}
