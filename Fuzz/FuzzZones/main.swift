import CamoEvents
import CamoMedia
import Foundation
import FuzzSupport

// Activity zones as the agent accepts them: the `zones` setting's JSON (an array of zones or {"zones": [...]}, from
// `camo-agent events zones`, the page, a studio's settings write) read the way the agent's settings provider reads
// it, then checked into a ZoneList. What passes is used as the motion detector uses it: each zone's mask over the
// grid, points inside, two frames through a detector, and the list edited (create, update, remove).
//
// Input: the JSON text.

let black = VideoFrame(width: 64, height: 36, bytesPerRow: 256, data: [UInt8](repeating: 0, count: 256 * 36), captureTime: 0)
let bright = VideoFrame(
    width: 64, height: 36, bytesPerRow: 256, data: (0..<(256 * 36)).map { UInt8(truncatingIfNeeded: $0 &* 7) }, captureTime: 0)

/// The agent's reading of the `zones` text (its settings provider): a list, else an array of zones checked as one.
func zones(_ data: Data) -> ZoneList? {
    if let list = try? JSONDecoder().decode(ZoneList.self, from: data) { return list }
    guard let zones = try? JSONDecoder().decode([ActivityZone].self, from: data) else { return nil }
    return try? ZoneList(zones: zones)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZones(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    guard var list = zones(data) else { return 0 }
    for zone in list.zones {
        _ = zone.mask(columns: 16, rows: 9)
        _ = zone.mask(columns: 1, rows: 1)
        for vertex in zone.vertices { _ = zone.contains(x: Double(vertex.x) + 0.5, y: Double(vertex.y) - 0.5) }
        _ = zone.contains(x: 1024, y: 1024)
    }
    var detector = MotionDetector(zones: list)
    _ = detector.process(black, now: 0)
    _ = detector.process(bright, now: 33_333_333)
    // Edits as the model's commands make them: a new zone from the first's outline, the first moved, the last removed.
    if let first = list.zones.first {
        _ = try? list.create(name: "copy", vertices: first.vertices.reversed(), color: "#00FF00")
        var moved = first
        moved.vertices = moved.vertices.map { ZoneVertex(x: $0.y, y: $0.x) }
        try? list.update(moved)
    }
    if let last = list.zones.last { try? list.remove(id: last.id) }
    _ = try? JSONEncoder().encode(list)
    return 0
}

/// Seeds: zones as the tests and the README write them, in both forms.
func writeSeeds() throws {
    var list = ZoneList()
    try list.create(name: "door", vertices: [ZoneVertex(x: 0, y: 0), ZoneVertex(x: 1024, y: 0), ZoneVertex(x: 1024, y: 2048)], color: "#F439A0")
    try list.create(name: "block", vertices: ActivityZone.rectangle(left: 512, top: 512, right: 1536, bottom: 1536), color: "#00aa00")
    try list.create(
        name: "L-shaped drive", vertices: [
            ZoneVertex(x: 100, y: 1200), ZoneVertex(x: 900, y: 1200), ZoneVertex(x: 900, y: 1600), ZoneVertex(x: 2048, y: 1600),
            ZoneVertex(x: 2048, y: 2048), ZoneVertex(x: 100, y: 2048),
        ], color: "#123ABC")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    FuzzSeeds.write(Array(try encoder.encode(list)), name: "list")
    FuzzSeeds.write(Array(try encoder.encode(list.zones)), name: "array")
    FuzzSeeds.write(Array(##"[{"id":1,"name":"door","use":"motion","vertices":[{"x":0,"y":0},{"x":1024,"y":0},{"x":1024,"y":2048}],"color":"#F439A0"}]"##.utf8), name: "readme")
}

if FuzzSeeds.directory != nil {
    do { try writeSeeds() } catch { fatalError("seeds: \(error)") }
    exit(0)
}

runFuzzDriver { fuzzZones($0, $1) }
