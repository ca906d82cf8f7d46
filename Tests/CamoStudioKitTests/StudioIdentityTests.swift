import CamoStudioKit
import Foundation
import Testing

@Suite("Studio identity, addresses, configuration")
struct StudioIdentityTests {
    @Test("derived UUIDs are well-formed and stable")
    func uuidShape() {
        let a = StudioIdentity.uuid(hashing: [1, 2, 3])
        #expect(a == StudioIdentity.uuid(hashing: [1, 2, 3]))
        #expect(a != StudioIdentity.uuid(hashing: [1, 2, 4]))
        #expect(UUID(uuidString: a) != nil)
        #expect(a.count == 36)
        #expect(Array(a)[14] == "5")
        #expect("89ab".contains(Array(a)[19]))
        #expect(StudioIdentity.stableMachineId() == StudioIdentity.stableMachineId())
    }

    @Test("a missing key file is created owner-only and reloads to the same key and id")
    func keyFile() throws {
        let path = temporaryPath("studio.key")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try StudioIdentity.load(keyFile: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let second = try StudioIdentity.load(keyFile: path)
        #expect(first.publicKey == second.publicKey)
        #expect(first.id == second.id)
        #expect(first.publicKey.count == 32)
        #expect(StudioIdentity.generated().publicKey != StudioIdentity.generated().publicKey)
    }

    @Test("a malformed key file is refused")
    func badKeyFile() throws {
        let path = temporaryPath("bad.key")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: (any Error).self) { try StudioIdentity.load(keyFile: path) }
    }

    @Test("HOST:PORT parsing")
    func hostPort() {
        #expect(HostPort(parsing: "127.0.0.1:5000") == HostPort(host: "127.0.0.1", port: 5000))
        #expect(HostPort(parsing: "[::1]:5000") == HostPort(host: "::1", port: 5000))
        #expect(HostPort(parsing: "agent.local:1") == HostPort(host: "agent.local", port: 1))
        for bad in ["", "host", "host:", ":5000", "host:0", "host:65536", "::1:5000", "[::1]5000", "host:x"] {
            #expect(HostPort(parsing: bad) == nil, "\(bad)")
        }
        #expect(HostPort(host: "::1", port: 7).description == "[::1]:7")
    }

    @Test("configuration ranges")
    func configuration() throws {
        var config = StudioClientConfiguration(identity: .generated(id: "test"))
        #expect(config.preferredWidth == 1280 && config.preferredHeight == 720 && config.codec == .agentDecides)
        try config.validate()
        config.audioSamplesRequired = 63
        #expect(throws: StudioClientError.self) { try config.validate() }
        config.audioSamplesRequired = 48_000
        config.jpegQuality = 101
        #expect(throws: StudioClientError.self) { try config.validate() }
        config.jpegQuality = 100
        config.preferredWidth = 4097
        #expect(throws: StudioClientError.self) { try config.validate() }
    }

    @Test("refusal and close messages")
    func messages() {
        #expect(StudioClientError.agentRefused(code: 13, reason: "no").description == "agent refused: no (code 13)")
        #expect(RecorderError.sessionEnded(.agentError(code: 10, reason: "bye")).description
                == "agent closed the session: bye (code 10)")
        #expect(!StudioCloseReason.requested.isError)
        #expect(StudioCloseReason.keepaliveTimeout.isError)
    }
}
