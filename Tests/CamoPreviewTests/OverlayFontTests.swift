@testable import CamoPreview
import Testing

@Suite("OverlayFont")
struct OverlayFontTests {
    static let neededCharacters: [Character] = Array("0123456789abcdefghijklmnopqrstuvwxyz./ ")

    @Test("every character the overlay needs has a glyph", arguments: neededCharacters)
    func defined(_ character: Character) {
        #expect(OverlayFont.drawings[character] != nil)
    }

    @Test("every glyph is seven rows of five columns drawn with # and .")
    func shapes() {
        for (character, drawing) in OverlayFont.drawings {
            #expect(drawing.count == OverlayFont.glyphHeight, "\(character)")
            for line in drawing {
                #expect(line.count == OverlayFont.glyphWidth, "\(character): \(line)")
                #expect(line.allSatisfy { $0 == "#" || $0 == "." }, "\(character): \(line)")
            }
        }
    }

    @Test("no two characters share a glyph, and only the space is blank")
    func distinct() {
        var seen: [[String]: Character] = [:]
        for (character, drawing) in OverlayFont.drawings {
            #expect(seen[drawing] == nil, "\(character) looks like \(seen[drawing].map(String.init) ?? "")")
            seen[drawing] = character
            #expect(drawing.joined().contains("#") == (character != " "), "\(character)")
        }
    }

    @Test("text is lowercased, … becomes ..., and a character without a glyph becomes ?")
    func normalized() {
        #expect(OverlayFont.normalized("Reconnecting…") == Array("reconnecting..."))
        #expect(OverlayFont.normalized("a@b") == Array("a?b"))
    }

    @Test("a string is six columns a character less the last gap, times the scale")
    func width() {
        #expect(OverlayFont.width(of: "") == 0)
        #expect(OverlayFont.width(of: "7") == 5)
        #expect(OverlayFont.width(of: "30.0 fps") == 47)
        #expect(OverlayFont.width(of: "30.0 fps", scale: 2) == 94)
        #expect(OverlayFont.width(of: "…") == OverlayFont.width(of: "..."))
    }

    @Test("the bitmap places each glyph six columns after the previous one")
    func bitmap() {
        let bitmap = OverlayFont.bitmap(of: "1.")
        #expect(bitmap.count == 7)
        #expect(bitmap.allSatisfy { $0.count == 11 })
        // The "1"'s top row (..#..) and the "."'s bottom row (.##..) shifted by 6.
        #expect(bitmap[0] == [false, false, true, false, false, false, false, false, false, false, false])
        #expect(bitmap[6].enumerated().filter(\.element).map(\.offset) == [1, 2, 3, 7, 8])
    }

    @Test("the rectangles cover exactly the bitmap's ink, scaled", arguments: [1, 2, 3])
    func rects(scale: Int) {
        let text = "29.9 fps  4200 kbit/s  41 ms  reconnecting…"
        let bitmap = OverlayFont.bitmap(of: text)
        let rects = OverlayFont.rects(for: text, x: 10, y: 20, scale: scale)
        var covered = [[Int]](repeating: [Int](repeating: 0, count: bitmap[0].count * scale), count: 7 * scale)
        for rect in rects {
            for y in rect.y..<(rect.y + rect.height) {
                for x in rect.x..<(rect.x + rect.width) { covered[y - 20][x - 10] += 1 }
            }
        }
        for y in 0..<(7 * scale) {
            for x in 0..<(bitmap[0].count * scale) {
                #expect(covered[y][x] == (bitmap[y / scale][x / scale] ? 1 : 0), "pixel \(x),\(y)")
            }
        }
        // Runs in a row are merged: fewer rectangles than ink pixels.
        #expect(rects.count < bitmap.joined().filter { $0 }.count)
    }
}
