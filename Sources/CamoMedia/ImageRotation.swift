/// Clockwise rotation of the picture.
///
/// The raw value is the angle in degrees, which is also how it is encoded (`90`, not `"quarter"`).
public enum ImageRotation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Upright, as captured.
    case none = 0
    /// A quarter turn clockwise; width and height swap.
    case quarter = 90
    /// Upside down.
    case half = 180
    /// Three quarter turns clockwise (a quarter turn counter-clockwise); width and height swap.
    case threeQuarters = 270

    /// Whether the picture's width and height swap (90 and 270).
    public var swapsSides: Bool { self == .quarter || self == .threeQuarters }

    /// The rotation by `degrees` clockwise, any multiple of 90, negative or over 360 too.
    init(normalizing degrees: Int) {
        let turned = ((degrees % 360) + 360) % 360
        self = ImageRotation(rawValue: turned) ?? .none
    }
}
