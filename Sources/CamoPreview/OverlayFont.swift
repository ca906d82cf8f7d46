/// A 5x7 bitmap font for the preview's overlay line: digits, lowercase letters and a little punctuation.
///
/// Each glyph is drawn below as seven rows of five columns (`#` = on). Text is normalised before drawing:
/// uppercase letters become lowercase, `…` becomes `...`, and any other character without a glyph becomes `?`.
enum OverlayFont {
    /// Columns per glyph.
    static let glyphWidth = 5
    /// Rows per glyph.
    static let glyphHeight = 7
    /// Columns from the start of one glyph to the next (one empty column between glyphs).
    static let advance = 6

    /// The glyphs as drawn: seven rows of five columns each.
    static let drawings: [Character: [String]] = [
        "0": [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
        "1": ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
        "2": [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
        "3": ["#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."],
        "4": ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
        "5": ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
        "6": ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
        "7": ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
        "8": [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
        "9": [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
        "a": [".....", ".....", ".###.", "....#", ".####", "#...#", ".####"],
        "b": ["#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."],
        "c": [".....", ".....", ".###.", "#....", "#....", "#...#", ".###."],
        "d": ["....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"],
        "e": [".....", ".....", ".###.", "#...#", "#####", "#....", ".###."],
        "f": ["..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."],
        "g": [".....", ".####", "#...#", "#...#", ".####", "....#", ".###."],
        "h": ["#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"],
        "i": ["..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."],
        "j": ["...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."],
        "k": ["#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."],
        "l": [".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."],
        "m": [".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"],
        "n": [".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"],
        "o": [".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."],
        "p": [".....", ".....", "####.", "#...#", "####.", "#....", "#...."],
        "q": [".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"],
        "r": [".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."],
        "s": [".....", ".....", ".###.", "#....", ".###.", "....#", "####."],
        "t": [".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."],
        "u": [".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"],
        "v": [".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."],
        "w": [".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."],
        "x": [".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"],
        "y": [".....", ".....", "#...#", "#...#", ".####", "....#", ".###."],
        "z": [".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"],
        ".": [".....", ".....", ".....", ".....", ".....", ".##..", ".##.."],
        "/": [".....", "....#", "...#.", "..#..", ".#...", "#....", "....."],
        " ": [".....", ".....", ".....", ".....", ".....", ".....", "....."],
        "-": [".....", ".....", ".....", ".###.", ".....", ".....", "....."],
        ":": [".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."],
        "%": ["##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"],
        "?": [".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."],
    ]

    /// The characters drawn for `text`: lowercase, `…` as `...`, `?` for a character without a glyph.
    static func normalized(_ text: String) -> [Character] {
        var characters: [Character] = []
        for character in text.lowercased() {
            if character == "…" {
                characters.append(contentsOf: "...")
            } else {
                characters.append(drawings[character] == nil ? "?" : character)
            }
        }
        return characters
    }

    /// The text's pixels at scale 1: `glyphHeight` rows of `width(of: text)` columns, true where ink is.
    static func bitmap(of text: String) -> [[Bool]] {
        let characters = normalized(text)
        var rows = [[Bool]](repeating: [Bool](repeating: false, count: width(of: text)), count: glyphHeight)
        for (index, character) in characters.enumerated() {
            // `normalized` only returns characters that have a drawing ("?" has one).
            let drawing = drawings[character] ?? []
            for (row, line) in drawing.enumerated() {
                for (column, mark) in line.enumerated() where mark == "#" {
                    rows[row][index * advance + column] = true
                }
            }
        }
        return rows
    }

    /// The width of `text` in pixels at `scale`, without a trailing gap after the last glyph.
    static func width(of text: String, scale: Int = 1) -> Int {
        let count = normalized(text).count
        return count == 0 ? 0 : (count * advance - 1) * scale
    }

    /// The rectangles that draw `text` with its top-left corner at (`x`, `y`), each glyph pixel `scale` x `scale`
    /// screen pixels; neighbouring ink pixels in a row become one rectangle.
    static func rects(for text: String, x: Int, y: Int, scale: Int) -> [PixelRect] {
        var rects: [PixelRect] = []
        for (row, pixels) in bitmap(of: text).enumerated() {
            var column = 0
            while column < pixels.count {
                guard pixels[column] else {
                    column += 1
                    continue
                }
                let start = column
                while column < pixels.count && pixels[column] { column += 1 }
                rects.append(PixelRect(x: x + start * scale, y: y + row * scale, width: (column - start) * scale, height: scale))
            }
        }
        return rects
    }
}
