@testable import CamoProducerKit
import CamoStorage
import CamoStudioKit
import Foundation
import Logging
import Testing

@Suite("Paired-device store and studio state files")
struct PairedDeviceStoreTests {
    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "camo-store-\(UUID().uuidString.prefix(8))"
        try AtomicFile.makeDirectory(path)
        return path
    }

    static var quiet: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }

    @Test func changesPersistOwnerOnlyAndReload() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try PairedDeviceStore(directory: dir, logger: Self.quiet)
        let key = [UInt8](repeating: 3, count: 32)
        try store.add(PairedStudio(id: "a", name: "A", publicKey: key, pairedAt: Date(timeIntervalSince1970: 1)))
        try store.add(PairedStudio(id: "b", name: "B", publicKey: key, pairedAt: Date(timeIntervalSince1970: 2)))
        try store.add(PairedStudio(id: "a", name: "A again", publicKey: key, pairedAt: Date(timeIntervalSince1970: 3)))
        #expect(try store.remove(id: "b"))
        #expect(try !store.remove(id: "nobody"))
        try store.markSeen(id: "a", at: Date(timeIntervalSince1970: 10))
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/paired.json")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let reloaded = try PairedDeviceStore(directory: dir, logger: Self.quiet)
        #expect(reloaded.all.map(\.name) == ["A again"], "a studio that pairs again replaces its old record")
        #expect(reloaded.all.first?.lastSeen == Date(timeIntervalSince1970: 10))
        #expect(reloaded.studio(id: "a")?.publicKey == Data(key))
    }

    @Test func aCorruptListIsKeptAsideAndReportedNeverReplacedInPlace() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let garbage = Array("{\"version\": 1, \"content\": [{\"id\": ".utf8)
        try AtomicFile.write(garbage, to: dir + "/paired.json")
        let store = try PairedDeviceStore(directory: dir, logger: Self.quiet)
        #expect(store.all.isEmpty)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
        let aside = try #require(files.first { $0.hasPrefix("paired.json.corrupt-") }, "\(files)")
        #expect(FileManager.default.contents(atPath: dir + "/" + aside) == Data(garbage), "kept byte for byte")
        #expect(!files.contains("paired.json"), "nothing was written in its place until a change is made")
    }

    @Test func anotherVersionIsNotReadAsThisOne() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try AtomicFile.write(Array("{\"version\": 2, \"content\": []}".utf8), to: dir + "/paired.json")
        guard case .keptAside(_, let reason) = try JSONStateFile<[PairedStudio]>(path: dir + "/paired.json").load() else {
            Issue.record("a version 2 file was read")
            return
        }
        #expect(reason.contains("version 2"))
    }

    @Test func aWriteErrorChangesNothing() throws {
        let dir = try Self.directory()
        defer {
            chmod(dir, 0o700)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let store = try PairedDeviceStore(directory: dir, logger: Self.quiet)
        try store.add(PairedStudio(id: "a", name: "A", publicKey: [UInt8](repeating: 1, count: 32), pairedAt: Date()))
        guard getuid() != 0 else {
            // Root ignores directory permissions, so the failure cannot be provoked this way.
            print("aWriteErrorChangesNothing: running as root; checking only that a read-only file system path fails")
            let broken = try PairedDeviceStore(directory: "/proc/self", logger: Self.quiet)
            #expect(throws: (any Error).self) {
                try broken.add(PairedStudio(id: "x", name: "X", publicKey: [UInt8](repeating: 1, count: 32), pairedAt: Date()))
            }
            #expect(broken.all.isEmpty, "a failed write leaves the list as it was")
            return
        }
        chmod(dir, 0o500)
        #expect(throws: (any Error).self) {
            try store.add(PairedStudio(id: "b", name: "B", publicKey: [UInt8](repeating: 1, count: 32), pairedAt: Date()))
        }
        #expect(store.all.map(\.id) == ["a"])
    }

    @Test func theStudioKeepsItsIdentityAndPairedAgents() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try StudioState(directory: dir, logger: Self.quiet)
        try first.add(PairedAgent(id: "agent-1", name: "Desk", publicKey: [UInt8](repeating: 5, count: 32), pairedAt: Date()))
        let again = try StudioState(directory: dir, logger: Self.quiet)
        #expect(again.identity.id == first.identity.id)
        #expect(again.identity.publicKey == first.identity.publicKey)
        #expect(again.agent(matching: "Desk")?.id == "agent-1")
        #expect(again.agent(matching: "agent-1")?.name == "Desk")
        for file in ["studio-identity.json", "agents.json"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/" + file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
        }
        #expect(try again.remove(id: "agent-1"))
        #expect(again.pairedAgents.isEmpty)
    }
}
