import CamoProducerKit
import CamoStorage
import Foundation
import Logging
import Testing

@Suite("Agent identity and state files")
struct AgentIdentityTests {
    private let logger = Logger(label: "test")

    private func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "camo-identity-\(UUID().uuidString.prefix(8))"
        try AtomicFile.makeDirectory(path)
        return path
    }

    private func mode(_ path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test func anIdentityIsCreatedOwnerOnlyAndReloaded() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try AgentIdentity.loadOrCreate(in: directory, name: "one", logger: logger)
        let second = try AgentIdentity.loadOrCreate(in: directory, name: "two", logger: logger)
        #expect(first.id == second.id)
        #expect(first.keyPair.publicKey == second.keyPair.publicKey)
        #expect(second.name == "two")
        #expect(try mode(directory + "/identity.json") == 0o600)
        #expect(try mode(directory) == 0o700)
    }

    @Test func aCorruptIdentityIsKeptAsideNotOverwritten() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = Array("{ not json".utf8)
        try AtomicFile.write(garbage, to: directory + "/identity.json")
        _ = try AgentIdentity.loadOrCreate(in: directory, name: "x", logger: logger)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        let aside = try #require(files.first { $0.hasPrefix("identity.json.corrupt-") }, "files: \(files)")
        #expect(FileManager.default.contents(atPath: directory + "/" + aside).map(Array.init) == garbage)
    }

    @Test func anUnreadableIdentityIsNeverReplaced() throws {
        guard getuid() != 0 else {
            // Root reads any file, so "unreadable" cannot be staged; the guard in loadOrCreate is still exercised
            // by reasoning only here. Say so rather than pass silently.
            print("anUnreadableIdentityIsNeverReplaced: skipped as root (root can read a 0000 file)")
            return
        }
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try AtomicFile.write(Array("{}".utf8), to: directory + "/identity.json", permissions: 0)
        #expect(throws: IdentityError.self) { try AgentIdentity.loadOrCreate(in: directory, name: "x", logger: logger) }
    }

    @Test func oneAgentPerStateDirectory() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lock = try StateDirectoryLock(directory: directory)
        #expect(throws: StateDirectoryBusy.self) { _ = try StateDirectoryLock(directory: directory) }
        withExtendedLifetime(lock) {}
    }
}
