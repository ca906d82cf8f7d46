import CamoRecording
import Foundation
import Logging
import Testing

@Suite("Clip store: the index, the cap, crash repair")
struct ClipStoreTests {
    static let logger = Logger(label: "camo.recording.tests")

    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("camo-clips-\(UUID().uuidString)").path
    }

    /// Writes `bytes` bytes to a new partial file of `store`.
    static func partial(_ store: ClipStore, bytes: Int, ext: String = "mp4") throws -> String {
        let path = store.partialPath(ext: ext)
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func record(_ number: Int) -> ClipRecord {
        ClipRecord(
            kind: .video, mode: .eventBased, trigger: .motion, zoneID: 2, eventIDs: [UInt64(number), UInt64(number + 1)],
            startTime: 1_764_180_000 + Double(number), preRollSeconds: 3.5, durationSeconds: 12.25, hasAudio: number % 2 == 0,
            endReason: .eventEnded, width: 1280, height: 720)
    }

    /// The bytes of the store's clip files (the index not counted).
    static func filesBytes(_ directory: String) throws -> Int64 {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".mp4") || $0.hasSuffix(".jpg") }
            .reduce(0) { total, name in
                let size = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int64 ?? 0
                return total + size
            }
    }

    @Test("a committed clip is listed with every field, its file in place, and survives reopening")
    func commitAndList() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try ClipStore(directory: directory, capBytes: 10 << 20, logger: Self.logger)
        let partial = try Self.partial(store, bytes: 5_000)
        let stored = try store.commit(partial: partial, record: Self.record(2))
        #expect(stored.id > 0 && stored.bytes == 5_000 && stored.file.hasSuffix(".mp4"))
        #expect(!FileManager.default.fileExists(atPath: partial))
        #expect(FileManager.default.fileExists(atPath: store.path(of: stored)))
        let reopened = try ClipStore(directory: directory, capBytes: 10 << 20, logger: Self.logger)
        #expect(reopened.recovery == ClipStore.Recovery())
        #expect(reopened.list() == [stored])
        #expect(reopened.record(id: stored.id) == stored)
        #expect(reopened.record(id: stored.id + 1) == nil)
        #expect(reopened.totalBytes == 5_000)
        let json = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self) as String
        #expect(json.contains("\"trigger\":\"motion\"") && json.contains("\"mode\":\"eventBased\""))
    }

    @Test("200 clips into a 1 MB store: the files never pass the cap, the oldest go first, the index matches the directory")
    func capHolds() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cap: Int64 = 1 << 20
        let store = try ClipStore(directory: directory, capBytes: cap, logger: Self.logger)
        var kept: [Int64] = []
        for number in 0..<200 {
            // 30-70 kB clips, reserving room for the largest before writing, as the recorder does.
            try store.makeRoom(for: 70_000)
            #expect(try Self.filesBytes(directory) + 70_000 <= cap)
            let stored = try store.commit(partial: try Self.partial(store, bytes: 30_000 + (number * 7_919) % 40_000), record: Self.record(number))
            kept.append(stored.id)
            #expect(try Self.filesBytes(directory) <= cap)
            #expect(store.totalBytes <= cap)
        }
        let listed = store.list()
        #expect(store.evicted == 200 - listed.count)
        #expect(store.evicted > 150)
        // The newest are kept, the oldest went: the listed ids are the last ones committed, newest first.
        #expect(listed.map(\.id) == Array(kept.suffix(listed.count).reversed()))
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".mp4") })
        #expect(files == Set(listed.map(\.file)))
    }

    @Test("after a crash: partial files, rows without a file and files without a row are removed, and counted")
    func repairsAfterCrash() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var survivor: ClipRecord
        do {
            let store = try ClipStore(directory: directory, capBytes: 10 << 20, logger: Self.logger)
            survivor = try store.commit(partial: try Self.partial(store, bytes: 1_000), record: Self.record(1))
            let lost = try store.commit(partial: try Self.partial(store, bytes: 1_000), record: Self.record(2))
            try FileManager.default.removeItem(atPath: store.path(of: lost))
            _ = try Self.partial(store, bytes: 3_000)  // killed mid-write
            // Killed between the rename and the row.
            try Data(count: 10).write(to: URL(fileURLWithPath: directory + "/1764180000-deadbeef.mp4"))
        }
        let store = try ClipStore(directory: directory, capBytes: 10 << 20, logger: Self.logger)
        #expect(store.recovery.partialFilesRemoved == 1)
        #expect(store.recovery.rowsWithoutFileRemoved == 1)
        #expect(store.recovery.filesWithoutRowRemoved == 1)
        #expect(store.list() == [survivor])
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(ClipStore.indexName) }
        #expect(names == [survivor.file])
    }

    @Test("refused: a file larger than the whole cap (removed), a path that is not the store's partial, a cap under 1 MB")
    func refusals() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try ClipStore(directory: directory, capBytes: 1 << 20, logger: Self.logger)
        let big = try Self.partial(store, bytes: (1 << 20) + 1)
        let error = #expect(throws: ClipStoreError.self) { try store.commit(partial: big, record: Self.record(1)) }
        #expect(error?.description.contains("more than the whole cap") == true)
        #expect(!FileManager.default.fileExists(atPath: big))
        #expect(throws: ClipStoreError.self) { try store.commit(partial: "/tmp/elsewhere.mp4.partial", record: Self.record(1)) }
        #expect(throws: ClipStoreError.self) { try ClipStore(directory: directory, capBytes: 1_000, logger: Self.logger) }
        #expect(store.list().isEmpty)
    }
}
