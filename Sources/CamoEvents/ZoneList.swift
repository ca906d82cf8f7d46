/// The camera's activity zones: the model's ZoneManagement `zones` with `createTwoDCartesianZone`,
/// `updateTwoDCartesianZone` and `removeZone`. A plain value that only ever holds valid zones
/// (``ActivityZone/validate()``) with unique ids, at most ``maxZones`` of them.
///
/// Codable as `{"zones": [...]}`, the JSON the agent persists; decoding checks the same rules and fails with the
/// ``ZoneError``'s description, so a hand-edited file that breaks them is refused rather than half used.
public struct ZoneList: Sendable, Hashable, Codable {
    /// The most zones a camera holds: 8. Motion is judged per zone on every frame, and apps show a zone list, not
    /// a map; Google's cameras allow a handful of zones too.
    public static let maxZones = 8

    /// The zones, in the order they were created.
    public private(set) var zones: [ActivityZone]

    /// No zones: motion is judged over the whole picture.
    public init() {
        zones = []
    }

    /// The given zones, each valid, ids unique, at most ``maxZones``.
    public init(zones: [ActivityZone]) throws(ZoneError) {
        guard zones.count <= Self.maxZones else { throw .tooManyZones(count: zones.count) }
        var seen = Set<UInt16>()
        for zone in zones {
            try zone.validate()
            guard seen.insert(zone.id).inserted else { throw .duplicateID(zone.id) }
        }
        self.zones = zones
    }

    /// Whether there are no zones.
    public var isEmpty: Bool { zones.isEmpty }

    /// The zone with this id, if any.
    public subscript(id id: UInt16) -> ActivityZone? {
        zones.first { $0.id == id }
    }

    /// `createTwoDCartesianZone`: adds a zone with the lowest unused id and returns it.
    @discardableResult
    public mutating func create(name: String, use: ZoneUse = .motion, vertices: [ZoneVertex], color: String) throws(ZoneError) -> ActivityZone {
        guard zones.count < Self.maxZones else { throw .tooManyZones(count: zones.count + 1) }
        let used = Set(zones.map(\.id))
        // At most 8 zones, so one of 0...8 is free.
        var id: UInt16 = 0
        while used.contains(id) { id += 1 }
        let zone = ActivityZone(id: id, name: name, use: use, vertices: vertices, color: color)
        try zone.validate()
        zones.append(zone)
        return zone
    }

    /// `updateTwoDCartesianZone`: replaces the zone whose id is `zone.id`, keeping its place in the list.
    public mutating func update(_ zone: ActivityZone) throws(ZoneError) {
        guard let index = zones.firstIndex(where: { $0.id == zone.id }) else { throw .unknownZone(zone.id) }
        try zone.validate()
        zones[index] = zone
    }

    /// `removeZone`: removes the zone with this id.
    public mutating func remove(id: UInt16) throws(ZoneError) {
        guard let index = zones.firstIndex(where: { $0.id == id }) else { throw .unknownZone(id) }
        zones.remove(at: index)
    }

    private enum CodingKeys: String, CodingKey {
        case zones
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let zones = try container.decode([ActivityZone].self, forKey: .zones)
        do {
            try self.init(zones: zones)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [CodingKeys.zones], debugDescription: error.description, underlyingError: error))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(zones, forKey: .zones)
    }
}
