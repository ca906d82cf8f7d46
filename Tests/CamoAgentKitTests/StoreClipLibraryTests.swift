import CamoRecording
import Foundation
import Logging
import Testing

@testable import CamoAgentKit

/// What a paired studio reaches of the store (protocol 1.4): pages newest first with `more`, pieces of the files.
@Suite("Recordings for studios: pages and pieces of the store")
struct StoreClipLibraryTests {
    static func store(clips: Int, bytes: Int) throws -> (ClipStore, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camo-library-\(UUID().uuidString)").path
        let store = try ClipStore(directory: directory, capBytes: 100 << 20, logger: Logger(label: "camo.library.tests"))
        for number in 0..<clips {
            let partial = store.partialPath(ext: "mp4")
            try Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &+ number) }).write(to: URL(fileURLWithPath: partial))
            _ = try store.commit(partial: partial, record: ClipRecord(
                kind: .video, mode: .eventBased, trigger: .motion, zoneID: 1, eventIDs: [UInt64(number)],
                startTime: 1_764_180_000 + Double(number), preRollSeconds: 3, durationSeconds: 10, hasAudio: true, endReason: .eventEnded,
                width: 320, height: 180))
        }
        return (store, directory)
    }

    @Test("five clips in pages of two: newest first, more until the last page, each older than the page before; total counts all")
    func pages() throws {
        let (store, directory) = try Self.store(clips: 5, bytes: 10)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let library = StoreClipLibrary(store: store)
        var before: UInt64 = 0
        var seen: [UInt64] = []
        var pages = 0
        while true {
            let page = library.clips(before: before, limit: 2)
            pages += 1
            #expect(page.total == 5)
            seen += page.clips.map(\.id)
            guard page.more, let last = page.clips.last else { break }
            before = last.id
        }
        #expect(pages == 3)
        #expect(seen == seen.sorted(by: >) && Set(seen).count == 5, "\(seen)")
        let first = try #require(library.clips(before: 0, limit: 1).clips.first)
        #expect(first.kind == "video" && first.mode == "eventBased" && first.trigger == "motion" && first.contentType == "video/mp4")
        #expect(first.bytes == 10 && first.hasAudio && first.endReason == "eventEnded" && first.preRollSeconds == 3)
    }

    @Test("pieces put back together are the file; past the end is no bytes; an unknown id is nil")
    func pieces() throws {
        let (store, directory) = try Self.store(clips: 1, bytes: 1_000)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let library = StoreClipLibrary(store: store)
        let record = try #require(store.list().first)
        var copy: [UInt8] = []
        var offset: UInt64 = 0
        while true {
            let piece = try #require(library.read(id: UInt64(record.id), offset: offset, length: 300))
            #expect(piece.total == 1_000)
            if piece.data.isEmpty { break }
            copy += piece.data
            offset += UInt64(piece.data.count)
        }
        #expect(copy == [UInt8](try Data(contentsOf: URL(fileURLWithPath: store.path(of: record)))))
        #expect(library.read(id: UInt64(record.id), offset: 5_000, length: 10)?.data == [])
        #expect(library.read(id: UInt64(record.id) + 1, offset: 0, length: 10) == nil)
    }
}
