/// Why a zone or a zone list was refused. Each description says what is wrong and what is allowed.
public enum ZoneError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name is empty or longer than ``ActivityZone/maxNameLength`` characters.
    case invalidName(String)
    /// Fewer than ``ActivityZone/minVertices`` vertices.
    case tooFewVertices(count: Int)
    /// More than ``ActivityZone/maxVertices`` vertices.
    case tooManyVertices(count: Int)
    /// A vertex lies outside `0...ZoneSpace.max` on some axis.
    case vertexOutsideSpace(index: Int, x: UInt16, y: UInt16)
    /// Two consecutive vertices are the same point.
    case repeatedVertex(index: Int)
    /// Two edges cross, touch, or overlap: the outline is not a simple polygon. Edge `i` runs from vertex `i` to
    /// vertex `i + 1` (the last back to vertex 0).
    case selfIntersecting(edge: Int, otherEdge: Int)
    /// All vertices lie on one line.
    case zeroArea
    /// The colour is not `#RRGGBB`.
    case invalidColor(String)
    /// The list already holds ``ZoneList/maxZones`` zones.
    case tooManyZones(count: Int)
    /// Two zones share an id.
    case duplicateID(UInt16)
    /// No zone has this id.
    case unknownZone(UInt16)

    public var description: String {
        switch self {
        case .invalidName(let name):
            "zone name \"\(name)\" is not allowed: a name has 1 to \(ActivityZone.maxNameLength) characters"
        case .tooFewVertices(let count):
            "a zone has \(count) vertices: at least \(ActivityZone.minVertices) are needed"
        case .tooManyVertices(let count):
            "a zone has \(count) vertices: at most \(ActivityZone.maxVertices) are allowed"
        case .vertexOutsideSpace(let index, let x, let y):
            "vertex \(index) (\(x), \(y)) is outside the zone space: x and y must be in 0...\(ZoneSpace.max)"
        case .repeatedVertex(let index):
            "vertex \(index) repeats the vertex before it: consecutive vertices must differ"
        case .selfIntersecting(let edge, let otherEdge):
            "edges \(edge) and \(otherEdge) cross or touch: a zone must be a simple polygon (no edge may meet another except its neighbours at their shared vertex)"
        case .zeroArea:
            "the zone's vertices all lie on one line: a zone must enclose some area"
        case .invalidColor(let color):
            "colour \"\(color)\" is not allowed: use #RRGGBB, six hexadecimal digits after #"
        case .tooManyZones(let count):
            "\(count) zones: at most \(ZoneList.maxZones) are allowed"
        case .duplicateID(let id):
            "zone id \(id) is used twice: ids must be unique"
        case .unknownZone(let id):
            "no zone has id \(id)"
        }
    }
}
