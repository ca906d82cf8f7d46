import Foundation
import Testing

@testable import CamoWire

struct NoiseVector: Decodable, Sendable, CustomTestStringConvertible {
    struct Message: Decodable, Sendable {
        let payload: String
        let ciphertext: String
    }
    let protocol_name: String
    let init_prologue: String
    let init_psks: [String]?
    let init_static: String
    let init_ephemeral: String
    let init_remote_static: String?
    let resp_prologue: String
    let resp_psks: [String]?
    let resp_static: String
    let resp_ephemeral: String
    let resp_remote_static: String?
    let handshake_hash: String
    let messages: [Message]

    var testDescription: String { protocol_name }

    static func load() throws -> [NoiseVector] {
        struct File: Decodable { let vectors: [NoiseVector] }
        guard let url = Bundle.module.url(forResource: "noise-cacophony-subset", withExtension: "json", subdirectory: "Fixtures")
        else { throw CocoaError(.fileNoSuchFile) }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).vectors
    }

    static let all: [NoiseVector] = (try? load()) ?? []
}

@Suite("Noise test vectors (cacophony)")
struct NoiseVectorTests {
    @Test func allSixVectorsAreLoaded() {
        #expect(NoiseVector.all.count == 6)
        #expect(Set(NoiseVector.all.map(\.protocol_name)).count == 6)
    }

    @Test(arguments: NoiseVector.all)
    func vector(_ vector: NoiseVector) throws {
        let name = try #require(NoiseProtocolName(vector.protocol_name))
        #expect(name.name == vector.protocol_name)
        var initiator = NoiseHandshakeState(
            protocol: name, initiator: true, prologue: Hex.decode(vector.init_prologue),
            localStatic: try NoiseKeyPair(privateKey: Hex.decode(vector.init_static)),
            remoteStatic: vector.init_remote_static.map(Hex.decode),
            psk: vector.init_psks?.first.map(Hex.decode),
            ephemeral: try NoiseKeyPair(privateKey: Hex.decode(vector.init_ephemeral)))
        var responder = NoiseHandshakeState(
            protocol: name, initiator: false, prologue: Hex.decode(vector.resp_prologue),
            localStatic: try NoiseKeyPair(privateKey: Hex.decode(vector.resp_static)),
            remoteStatic: vector.resp_remote_static.map(Hex.decode),
            psk: vector.resp_psks?.first.map(Hex.decode),
            ephemeral: try NoiseKeyPair(privateKey: Hex.decode(vector.resp_ephemeral)))

        var index = 0
        // Handshake messages alternate, starting with the initiator.
        while !initiator.isComplete {
            let message = vector.messages[index]
            let payload = Hex.decode(message.payload)
            if index % 2 == 0 {
                let ciphertext = try initiator.writeMessage(payload: payload)
                #expect(Hex.encode(ciphertext) == message.ciphertext, "message \(index)")
                #expect(try responder.readMessage(ciphertext) == payload)
            } else {
                let ciphertext = try responder.writeMessage(payload: payload)
                #expect(Hex.encode(ciphertext) == message.ciphertext, "message \(index)")
                #expect(try initiator.readMessage(ciphertext) == payload)
            }
            index += 1
        }
        #expect(responder.isComplete)
        #expect(Hex.encode(initiator.handshakeHash) == vector.handshake_hash)
        #expect(Hex.encode(responder.handshakeHash) == vector.handshake_hash)
        #expect(initiator.remoteStaticPublicKey == (try NoiseKeyPair(privateKey: Hex.decode(vector.resp_static))).publicKey)
        #expect(responder.remoteStaticPublicKey == (try NoiseKeyPair(privateKey: Hex.decode(vector.init_static))).publicKey)

        // Split: the initiator sends with the first state, the responder with the second.
        var (initiatorSend, initiatorReceive) = initiator.split()
        var (responderReceive, responderSend) = responder.split()
        // Transport messages continue the alternation.
        while index < vector.messages.count {
            let message = vector.messages[index]
            let payload = Hex.decode(message.payload)
            if index % 2 == 0 {
                let ciphertext = try initiatorSend.encrypt(ad: [], plaintext: payload)
                #expect(Hex.encode(ciphertext) == message.ciphertext, "message \(index)")
                #expect(try responderReceive.decrypt(ad: [], ciphertext: ciphertext) == payload)
            } else {
                let ciphertext = try responderSend.encrypt(ad: [], plaintext: payload)
                #expect(Hex.encode(ciphertext) == message.ciphertext, "message \(index)")
                #expect(try initiatorReceive.decrypt(ad: [], ciphertext: ciphertext) == payload)
            }
            index += 1
        }
    }
}
