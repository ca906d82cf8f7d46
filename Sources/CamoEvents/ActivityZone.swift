/// What a zone is for: the model's ZoneUse. Only motion zones exist here (Matter also names privacy and focus
/// zones, which this camera does not implement; decoding them fails).
public enum ZoneUse: String, Sendable, Hashable, Codable {
    /// Motion in the zone triggers motion events.
    case motion
}

/// An activity zone: the model's TwoDCartesianZone with its zone id. A polygon in the zone space
/// (``ZoneSpace``: 0...2048 on both axes, origin top-left) that motion events are filtered by.
///
/// A plain value: ``validate()`` says whether it is acceptable (``ZoneList`` only holds valid zones), and
/// ``mask(columns:rows:)`` says which cells of a grid laid over the picture it covers.
public struct ActivityZone: Sendable, Hashable, Codable {
    /// Fewest vertices: a triangle.
    public static let minVertices = 3
    /// Most vertices.
    public static let maxVertices = 16
    /// Longest name, in characters (Matter's limit for a zone name).
    public static let maxNameLength = 32

    /// The zone's id, unique in its ``ZoneList``.
    public var id: UInt16
    /// A name people chose, 1 to 32 characters.
    public var name: String
    /// What the zone is for.
    public var use: ZoneUse
    /// The outline, in order (either direction); the last vertex joins the first.
    public var vertices: [ZoneVertex]
    /// The colour apps draw the zone in, `#RRGGBB` (e.g. `#F439A0`).
    public var color: String

    /// A zone from its parts; nothing is checked until ``validate()``.
    public init(id: UInt16, name: String, use: ZoneUse = .motion, vertices: [ZoneVertex], color: String) {
        self.id = id
        self.name = name
        self.use = use
        self.vertices = vertices
        self.color = color
    }

    /// Throws the first thing wrong with the zone: its name (1 to 32 characters), its vertex count (3 to 16), a
    /// vertex outside the zone space, a vertex repeating the one before it, crossing or touching edges, an
    /// outline that encloses no area, or a colour that is not `#RRGGBB`.
    public func validate() throws(ZoneError) {
        guard !name.isEmpty, name.count <= Self.maxNameLength else { throw .invalidName(name) }
        guard vertices.count >= Self.minVertices else { throw .tooFewVertices(count: vertices.count) }
        guard vertices.count <= Self.maxVertices else { throw .tooManyVertices(count: vertices.count) }
        for (index, vertex) in vertices.enumerated() where vertex.x > ZoneSpace.max || vertex.y > ZoneSpace.max {
            throw .vertexOutsideSpace(index: index, x: vertex.x, y: vertex.y)
        }
        try Polygon.checkSimple(vertices)
        guard Self.isColor(color) else { throw .invalidColor(color) }
    }

    /// Whether `color` is `#` and six hexadecimal digits (either case).
    public static func isColor(_ color: String) -> Bool {
        let utf8 = Array(color.utf8)
        guard utf8.count == 7, utf8[0] == UInt8(ascii: "#") else { return false }
        return utf8.dropFirst().allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    /// Whether the point (`x`, `y`) of the zone space lies inside the outline (even-odd rule; a point exactly on an
    /// edge may fall either way).
    public func contains(x: Double, y: Double) -> Bool {
        var inside = false
        var previous = vertices.last.map { (Double($0.x), Double($0.y)) } ?? (0, 0)
        for vertex in vertices {
            let current = (Double(vertex.x), Double(vertex.y))
            if (current.1 > y) != (previous.1 > y) {
                let crossingX = current.0 + (y - current.1) * (previous.0 - current.0) / (previous.1 - current.1)
                if x < crossingX { inside.toggle() }
            }
            previous = current
        }
        return inside
    }

    /// The cells of a `columns` x `rows` grid laid over the whole picture that the zone covers, row by row from
    /// the top-left: a cell is covered when its centre lies inside the outline. Cell (c, r)'s centre is at
    /// ((c + 0.5) / columns, (r + 0.5) / rows) of the zone space. Empty for a grid with no cells.
    public func mask(columns: Int, rows: Int) -> [Bool] {
        guard columns > 0, rows > 0 else { return [] }
        let scale = Double(ZoneSpace.max)
        var mask = [Bool](repeating: false, count: columns * rows)
        for row in 0..<rows {
            let y = (Double(row) + 0.5) / Double(rows) * scale
            for column in 0..<columns {
                mask[row * columns + column] = contains(x: (Double(column) + 0.5) / Double(columns) * scale, y: y)
            }
        }
        return mask
    }

    /// An axis-aligned rectangle from (`left`, `top`) to (`right`, `bottom`) in the zone space, clockwise from the
    /// top-left.
    public static func rectangle(left: UInt16, top: UInt16, right: UInt16, bottom: UInt16) -> [ZoneVertex] {
        [ZoneVertex(x: left, y: top), ZoneVertex(x: right, y: top), ZoneVertex(x: right, y: bottom), ZoneVertex(x: left, y: bottom)]
    }
}

/// Exact integer geometry on zone outlines.
enum Polygon {
    /// Twice the signed area (shoelace).
    static func doubleArea(_ vertices: [ZoneVertex]) -> Int64 {
        var sum: Int64 = 0
        for i in vertices.indices {
            let a = vertices[i], b = vertices[(i + 1) % vertices.count]
            sum += Int64(a.x) * Int64(b.y) - Int64(b.x) * Int64(a.y)
        }
        return sum
    }

    /// The sign of the cross product (b - a) x (c - a): 1 counter-clockwise (in x-right, y-up terms), -1 the other
    /// way, 0 collinear.
    static func orientation(_ a: ZoneVertex, _ b: ZoneVertex, _ c: ZoneVertex) -> Int {
        let cross = (Int64(b.x) - Int64(a.x)) * (Int64(c.y) - Int64(a.y)) - (Int64(b.y) - Int64(a.y)) * (Int64(c.x) - Int64(a.x))
        return cross > 0 ? 1 : cross < 0 ? -1 : 0
    }

    /// Whether `p`, collinear with `a` and `b`, lies within their bounding box (so on the segment).
    static func onSegment(_ a: ZoneVertex, _ b: ZoneVertex, _ p: ZoneVertex) -> Bool {
        min(a.x, b.x) <= p.x && p.x <= max(a.x, b.x) && min(a.y, b.y) <= p.y && p.y <= max(a.y, b.y)
    }

    /// Whether the closed segments ab and cd share any point.
    static func segmentsMeet(_ a: ZoneVertex, _ b: ZoneVertex, _ c: ZoneVertex, _ d: ZoneVertex) -> Bool {
        let o1 = orientation(a, b, c), o2 = orientation(a, b, d), o3 = orientation(c, d, a), o4 = orientation(c, d, b)
        if o1 != o2 && o3 != o4 && o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 { return true }
        if o1 == 0 && onSegment(a, b, c) { return true }
        if o2 == 0 && onSegment(a, b, d) { return true }
        if o3 == 0 && onSegment(c, d, a) { return true }
        if o4 == 0 && onSegment(c, d, b) { return true }
        return false
    }

    /// Throws unless the closed outline is a simple polygon with some area: consecutive vertices differ, edges
    /// meet only their neighbours and only at the shared vertex (an edge folding back onto the one before it
    /// counts as meeting it elsewhere), and the area is not zero.
    static func checkSimple(_ vertices: [ZoneVertex]) throws(ZoneError) {
        let n = vertices.count
        for i in 0..<n where vertices[i] == vertices[(i + 1) % n] {
            throw .repeatedVertex(index: (i + 1) % n)
        }
        // All on one line: say so, rather than which edges fold back onto each other.
        if let other = vertices.first(where: { $0 != vertices[0] }), vertices.allSatisfy({ orientation(vertices[0], other, $0) == 0 }) {
            throw .zeroArea
        }
        for i in 0..<n {
            let a = vertices[i], b = vertices[(i + 1) % n]
            // The next edge shares b: it may only meet edge i there, so it must not fold back along it.
            let c = vertices[(i + 2) % n]
            if orientation(a, b, c) == 0 {
                let dot = (Int64(b.x) - Int64(a.x)) * (Int64(c.x) - Int64(b.x)) + (Int64(b.y) - Int64(a.y)) * (Int64(c.y) - Int64(b.y))
                if dot < 0 { throw .selfIntersecting(edge: i, otherEdge: (i + 1) % n) }
            }
            // Edges that share no vertex must not meet at all.
            var j = i + 2
            while j < n {
                if (j + 1) % n != i {
                    let d = vertices[j], e = vertices[(j + 1) % n]
                    if segmentsMeet(a, b, d, e) { throw .selfIntersecting(edge: i, otherEdge: j) }
                }
                j += 1
            }
        }
        // A simple polygon whose vertices are not all on one line has area; kept as a guard.
        guard doubleArea(vertices) != 0 else { throw .zeroArea }
    }
}
