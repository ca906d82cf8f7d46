import CamoEvents
import Foundation
import Testing

@Suite("Activity zones: validation, the zone list, masks, JSON")
struct ZoneTests {
    static func v(_ x: UInt16, _ y: UInt16) -> ZoneVertex { ZoneVertex(x: x, y: y) }

    static func zone(_ vertices: [ZoneVertex], id: UInt16 = 1, name: String = "Porch", color: String = "#F439A0") -> ActivityZone {
        ActivityZone(id: id, name: name, vertices: vertices, color: color)
    }

    /// The error `validate()` throws, or nil.
    static func error(_ zone: ActivityZone) -> ZoneError? {
        do {
            try zone.validate()
            return nil
        } catch {
            return error
        }
    }

    static let square = ActivityZone.rectangle(left: 100, top: 100, right: 900, bottom: 700)

    @Test("a rectangle, a concave outline, and a 16-vertex outline at the space's edges are valid")
    func validZones() {
        #expect(Self.error(Self.zone(Self.square)) == nil)
        // An L shape (concave), vertices counter-clockwise.
        let l = [Self.v(0, 0), Self.v(0, 2048), Self.v(2048, 2048), Self.v(2048, 1024), Self.v(1024, 1024), Self.v(1024, 0)]
        #expect(Self.error(Self.zone(l)) == nil)
        // A 16-gon: points on a circle touching the space's edges.
        let circle = (0..<16).map { i -> ZoneVertex in
            let angle = Double(i) * 2 * Double.pi / 16
            return Self.v(UInt16((1024 + 1024 * cos(angle)).rounded()), UInt16((1024 + 1024 * sin(angle)).rounded()))
        }
        #expect(Self.error(Self.zone(circle)) == nil)
        // A vertex in the middle of a straight edge is fine.
        #expect(Self.error(Self.zone([Self.v(0, 0), Self.v(500, 0), Self.v(1000, 0), Self.v(1000, 1000)])) == nil)
    }

    @Test("vertex counts: 2 and 17 are refused, saying the limits")
    func vertexCounts() {
        let two = Self.error(Self.zone([Self.v(0, 0), Self.v(10, 10)]))
        #expect(two == .tooFewVertices(count: 2))
        #expect(two?.description.contains("at least 3") == true)
        let seventeen = (0..<17).map { i -> ZoneVertex in
            let angle = Double(i) * 2 * Double.pi / 17
            return Self.v(UInt16(1024 + 900 * cos(angle)), UInt16(1024 + 900 * sin(angle)))
        }
        let many = Self.error(Self.zone(seventeen))
        #expect(many == .tooManyVertices(count: 17))
        #expect(many?.description.contains("at most 16") == true)
    }

    @Test("a vertex beyond 2048 is refused, saying which and the range")
    func outsideSpace() {
        let error = Self.error(Self.zone([Self.v(0, 0), Self.v(2049, 0), Self.v(1000, 1000)]))
        #expect(error == .vertexOutsideSpace(index: 1, x: 2049, y: 0))
        #expect(error?.description.contains("0...2048") == true)
    }

    @Test("self-intersecting outlines are refused: a bow tie, a pinch, a spike folding back")
    func selfIntersection() {
        // Bow tie: edges 0 (0,0)-(1000,1000) and 2 (1000,0)-(0,1000) cross.
        let bowTie = Self.error(Self.zone([Self.v(0, 0), Self.v(1000, 1000), Self.v(1000, 0), Self.v(0, 1000)]))
        #expect(bowTie == .selfIntersecting(edge: 0, otherEdge: 2))
        #expect(bowTie?.description.contains("simple polygon") == true)
        // Two triangles touching at (500, 500): a vertex visited twice.
        let pinch = Self.error(
            Self.zone([Self.v(0, 0), Self.v(1000, 0), Self.v(500, 500), Self.v(1000, 1000), Self.v(0, 1000), Self.v(500, 500)]))
        if case .selfIntersecting = pinch {} else { Issue.record("pinch: \(String(describing: pinch))") }
        // A spike: up the right edge to (1000, 1000), then back down along it to (1000, 500).
        let spike = Self.error(Self.zone([Self.v(0, 0), Self.v(1000, 0), Self.v(1000, 1000), Self.v(1000, 500), Self.v(0, 500)]))
        if case .selfIntersecting = spike {} else { Issue.record("spike: \(String(describing: spike))") }
        // A vertex of one edge lying on another, non-adjacent edge.
        let touching = Self.error(Self.zone([Self.v(0, 0), Self.v(1000, 0), Self.v(1000, 1000), Self.v(500, 0), Self.v(0, 1000)]))
        if case .selfIntersecting = touching {} else { Issue.record("touching: \(String(describing: touching))") }
    }

    @Test("zero area and repeated vertices are refused")
    func degenerate() {
        #expect(Self.error(Self.zone([Self.v(0, 0), Self.v(500, 500), Self.v(1000, 1000)])) == .zeroArea)
        #expect(Self.error(Self.zone([Self.v(0, 0), Self.v(0, 0), Self.v(1000, 1000), Self.v(0, 1000)])) == .repeatedVertex(index: 1))
        #expect(Self.error(Self.zone([Self.v(0, 0), Self.v(1000, 0), Self.v(1000, 1000), Self.v(0, 0)])) == .repeatedVertex(index: 0))
        #expect(ZoneError.zeroArea.description.contains("enclose"))
    }

    @Test("colours must be #RRGGBB and names 1 to 32 characters", arguments: ["F439A0", "#F439A", "#F439A00", "#G439A0", "", "#f439a "])
    func badColors(color: String) {
        let error = Self.error(Self.zone(Self.square, color: color))
        #expect(error == .invalidColor(color))
        #expect(error?.description.contains("#RRGGBB") == true)
    }

    @Test("good colours and bad names")
    func colorsAndNames() {
        #expect(Self.error(Self.zone(Self.square, color: "#f439a0")) == nil)
        #expect(Self.error(Self.zone(Self.square, color: "#00FF7f")) == nil)
        #expect(Self.error(Self.zone(Self.square, name: "")) == .invalidName(""))
        let long = String(repeating: "x", count: 33)
        #expect(Self.error(Self.zone(Self.square, name: long)) == .invalidName(long))
        #expect(Self.error(Self.zone(Self.square, name: String(repeating: "é", count: 32))) == nil)
    }

    @Test("create assigns the lowest free id, up to 8 zones; remove and update by id")
    func createUpdateRemove() throws {
        var list = ZoneList()
        for i in 0..<8 {
            let zone = try list.create(name: "Zone \(i)", vertices: Self.square, color: "#112233")
            #expect(zone.id == UInt16(i))
        }
        #expect(throws: ZoneError.tooManyZones(count: 9)) {
            try list.create(name: "Ninth", vertices: Self.square, color: "#112233")
        }
        try list.remove(id: 3)
        #expect(list[id: 3] == nil)
        #expect(try list.create(name: "Again", vertices: Self.square, color: "#112233").id == 3)
        #expect(throws: ZoneError.unknownZone(42)) { try list.remove(id: 42) }

        var changed = try #require(list[id: 5])
        changed.name = "Driveway"
        changed.vertices = ActivityZone.rectangle(left: 0, top: 0, right: 2048, bottom: 1024)
        try list.update(changed)
        #expect(list[id: 5] == changed)
        #expect(list.zones.map(\.id) == [0, 1, 2, 4, 5, 6, 7, 3])

        // A bad update changes nothing.
        var bad = changed
        bad.vertices = [Self.v(0, 0), Self.v(1, 1)]
        #expect(throws: ZoneError.tooFewVertices(count: 2)) { try list.update(bad) }
        #expect(list[id: 5] == changed)
        var unknown = changed
        unknown.id = 99
        #expect(throws: ZoneError.unknownZone(99)) { try list.update(unknown) }
        // An invalid zone is never created either.
        try list.remove(id: 0)
        #expect(throws: ZoneError.invalidColor("red")) { try list.create(name: "Red", vertices: Self.square, color: "red") }
        #expect(list.zones.count == 7)
    }

    @Test("a list refuses duplicate ids, more than 8 zones, and invalid zones")
    func listInit() {
        #expect(throws: ZoneError.duplicateID(1)) { try ZoneList(zones: [Self.zone(Self.square), Self.zone(Self.square)]) }
        let nine = (0..<9).map { Self.zone(Self.square, id: UInt16($0)) }
        #expect(throws: ZoneError.tooManyZones(count: 9)) { try ZoneList(zones: nine) }
        #expect(throws: ZoneError.zeroArea) {
            try ZoneList(zones: [Self.zone([Self.v(0, 0), Self.v(1, 1), Self.v(2, 2)])])
        }
    }

    @Test("JSON round trip, the model's field names, and a broken file refused with the reason")
    func json() throws {
        var list = ZoneList()
        try list.create(name: "Porch", vertices: Self.square, color: "#F439A0")
        try list.create(name: "Gate", vertices: [Self.v(0, 0), Self.v(300, 0), Self.v(0, 300)], color: "#00AA00")
        let data = try JSONEncoder().encode(list)
        #expect(try JSONDecoder().decode(ZoneList.self, from: data) == list)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"use\":\"motion\""))
        #expect(text.contains("\"color\":\"#F439A0\""))
        #expect(text.contains("\"vertices\":[{"))

        let broken = ##"{"zones":[{"id":1,"name":"A","use":"motion","color":"#FFFFFF","vertices":[{"x":0,"y":0},{"x":5,"y":5}]}]}"##
        do {
            _ = try JSONDecoder().decode(ZoneList.self, from: Data(broken.utf8))
            Issue.record("a two-vertex zone was decoded")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("at least 3"))
        }
        let privacy = ##"{"zones":[{"id":1,"name":"A","use":"privacy","color":"#FFFFFF","vertices":[{"x":0,"y":0},{"x":5,"y":0},{"x":0,"y":5}]}]}"##
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ZoneList.self, from: Data(privacy.utf8)) }
    }

    @Test("masks: a left half covers half the cells; an L shape leaves its notch out")
    func masks() {
        let left = Self.zone(ActivityZone.rectangle(left: 0, top: 0, right: 1024, bottom: 2048))
        let mask = left.mask(columns: 64, rows: 36)
        #expect(mask.count == 64 * 36)
        #expect(mask.filter { $0 }.count == 32 * 36)
        #expect(mask[0] && mask[31] && !mask[32] && !mask[63])
        #expect(mask[35 * 64 + 31] && !mask[35 * 64 + 32])

        // L: everything but the top-right quarter.
        let l = Self.zone([Self.v(0, 0), Self.v(0, 2048), Self.v(2048, 2048), Self.v(2048, 1024), Self.v(1024, 1024), Self.v(1024, 0)])
        let lMask = l.mask(columns: 64, rows: 36)
        #expect(lMask.filter { $0 }.count == 64 * 36 - 32 * 18)
        #expect(!lMask[0 * 64 + 63])  // top right: the notch
        #expect(lMask[0 * 64 + 0] && lMask[35 * 64 + 63])

        // A triangle covers about half its bounding box.
        let triangle = Self.zone([Self.v(0, 0), Self.v(2048, 2048), Self.v(0, 2048)])
        let covered = triangle.mask(columns: 64, rows: 36).filter { $0 }.count
        #expect(abs(covered - 64 * 36 / 2) <= 36)
        #expect(triangle.mask(columns: 0, rows: 36).isEmpty)
    }
}
