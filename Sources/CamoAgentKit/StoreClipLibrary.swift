import CamoProducerKit
import CamoRecording
import CamoWire
import Foundation

/// The recordings of a ``ClipStore`` as paired studios reach them (protocol 1.4): its index rows as ``WireClip``s,
/// and pieces of their files read from the disk.
struct StoreClipLibrary: ClipLibrary {
    let store: ClipStore

    func clips(before: UInt64, limit: Int) -> (clips: [WireClip], more: Bool, total: Int) {
        let bound = before == 0 || before > UInt64(Int64.max) ? Int64.max : Int64(before)
        // One more than a page, to know whether older ones follow.
        let records = store.list(before: bound, limit: limit + 1)
        return (records.prefix(limit).map(Self.wire), records.count > limit, store.count)
    }

    func read(id: UInt64, offset: UInt64, length: Int) -> (total: UInt64, data: [UInt8])? {
        guard id <= UInt64(Int64.max), let record = store.record(id: Int64(id)),
            let handle = FileHandle(forReadingAtPath: store.path(of: record))
        else { return nil }
        defer { try? handle.close() }
        let total = (try? handle.seekToEnd()) ?? UInt64(max(0, record.bytes))
        guard offset < total else { return (total, []) }
        do {
            try handle.seek(toOffset: offset)
            return (total, [UInt8](try handle.read(upToCount: length) ?? Data()))
        } catch {
            return nil
        }
    }

    static func wire(_ record: ClipRecord) -> WireClip {
        WireClip(
            id: UInt64(max(0, record.id)), kind: record.kind.rawValue, mode: record.mode.rawValue,
            trigger: record.trigger?.rawValue, zoneID: record.zoneID, startTime: record.startTime,
            durationSeconds: record.durationSeconds, preRollSeconds: record.preRollSeconds, bytes: UInt64(max(0, record.bytes)),
            hasAudio: record.hasAudio, endReason: record.endReason?.rawValue,
            contentType: record.contentType)
    }
}
