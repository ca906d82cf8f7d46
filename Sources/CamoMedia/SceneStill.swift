/// The still picture of the ``SyntheticScene``s: a room drawn at any size (a lit wall, a window, a picture, a
/// cabinet, a plant, a planked floor and a small lamp) with a fixed fine grain, so the motion detector sees
/// something like a camera's picture rather than flat areas.
///
/// Every colour channel lies in ``channelRange`` (56...196), except the lamp's (up to 236, ``lampArea``): a step of
/// ±40 clips nothing but the lamp, which clips white at +40 as a real highlight does under an auto-exposure change.
public enum SceneStill {
    /// Where every colour channel lies, outside the lamp.
    public static let channelRange = 56...196
    /// The lamp, as fractions of the picture: columns `u`, rows `v`.
    public static let lampArea = (u: 0.44..<0.50, v: 0.04..<0.10)

    /// The still at `size` as BGRA (`bytesPerRow = 4 * width`), every channel raised by `brightness` and clamped to
    /// 0...255. Empty for a size with a non-positive side.
    public static func render(size: VideoSize, brightness: Int = 0) -> [UInt8] {
        let width = size.width, height = size.height
        guard width > 0, height > 0 else { return [] }
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in 0..<height {
                let v = (Double(y) + 0.5) / Double(height)
                for x in 0..<width {
                    let u = (Double(x) + 0.5) / Double(width)
                    var (red, green, blue, lamp) = colour(u: u, v: v)
                    // A fixed grain of ±6, the same in every frame.
                    let grain = Int(hash(x, y) % 13) - 6
                    red += grain
                    green += grain
                    blue += grain
                    if !lamp {
                        red = min(max(red, channelRange.lowerBound), channelRange.upperBound)
                        green = min(max(green, channelRange.lowerBound), channelRange.upperBound)
                        blue = min(max(blue, channelRange.lowerBound), channelRange.upperBound)
                    }
                    let offset = (y * width + x) * 4
                    buffer[offset] = UInt8(clamping: blue + brightness)
                    buffer[offset + 1] = UInt8(clamping: green + brightness)
                    buffer[offset + 2] = UInt8(clamping: red + brightness)
                }
            }
        }
        return pixels
    }

    /// The room's colour at (`u`, `v`) (fractions of the width and height), and whether it is the lamp.
    static func colour(u: Double, v: Double) -> (red: Int, green: Int, blue: Int, lamp: Bool) {
        func inside(_ u0: Double, _ u1: Double, _ v0: Double, _ v1: Double) -> Bool { u >= u0 && u < u1 && v >= v0 && v < v1 }
        if lampArea.u.contains(u) && lampArea.v.contains(v) {
            return (236, 232, 220, true)
        }
        // The window, with its frame and glazing bars.
        if inside(0.55, 0.82, 0.08, 0.46) {
            let bar = 0.008
            if u < 0.55 + bar || u >= 0.82 - bar || v < 0.08 + bar * 1.8 || v >= 0.46 - bar * 1.8 || abs(u - 0.685) < bar / 2
                || abs(v - 0.27) < bar
            {
                return (74, 70, 66, false)
            }
            return (Int(160 + 30 * v), Int(176 + 20 * v), 192, false)
        }
        // A picture on the wall: a frame around two colours split on a diagonal.
        if inside(0.30, 0.42, 0.18, 0.36) {
            if u < 0.306 || u >= 0.414 || v < 0.19 || v >= 0.35 { return (96, 76, 60, false) }
            return u - 0.30 > (v - 0.18) * 0.66 ? (82, 150, 92, false) : (172, 92, 76, false)
        }
        // A cabinet with two handles.
        if inside(0.04, 0.20, 0.55, 0.86) {
            if inside(0.10, 0.14, 0.62, 0.63) || inside(0.10, 0.14, 0.76, 0.77) { return (150, 140, 120, false) }
            return (92, 72, 62, false)
        }
        // A plant.
        if inside(0.86, 0.93, 0.50, 0.78) {
            let leaf = (Int(u * 200) + Int(v * 120)) % 5 * 8 - 16
            return (70 + leaf / 2, 122 + leaf, 64, false)
        }
        // The floor, in planks.
        if v >= 0.78 {
            let row = ((v - 0.78) * 20).rounded(.down)
            let along = u * 10 + 0.37 * row
            let seam = along - along.rounded(.down) < 0.02 || (v - 0.78) * 20 - row < 0.06
            return seam ? (82, 64, 56, false) : (128 + Int(row) * 3, 102, 78, false)
        }
        // The wall, lit from the top right.
        return (Int(150 + 30 * u - 40 * v), Int(140 + 25 * u - 40 * v), Int(120 + 20 * u - 30 * v), false)
    }

    /// A fixed pseudo-random number per pixel.
    private static func hash(_ x: Int, _ y: Int) -> UInt32 {
        var z = UInt32(truncatingIfNeeded: x &* 0x27D4_EB2D ^ y &* 0x1656_67B1)
        z = (z ^ (z >> 15)) &* 0x2C1B_3C6D
        z = (z ^ (z >> 12)) &* 0x297A_2D39
        return z ^ (z >> 15)
    }
}
