import Foundation
import Testing

/// The README's library example is the file CI builds (`desk-camera`), and it imports only library products.
@Suite("The README's library example")
struct ReadmeExampleTests {
    static var root: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: root + "/" + path, encoding: .utf8)
    }

    @Test func theReadmeShowsExactlyTheBuiltExample() throws {
        let readme = try Self.read("README.md")
        let example = try Self.read("Examples/DeskCamera/main.swift")
        let section = try #require(readme.range(of: "## The library API").map { readme[$0.upperBound...] })
        let start = try #require(section.range(of: "```swift\n"))
        let end = try #require(section[start.upperBound...].range(of: "```\n"))
        let shown = String(section[start.upperBound..<end.lowerBound])
        #expect(shown == example, "README.md's library example differs from Examples/DeskCamera/main.swift; copy the file into the README")
        #expect(example.split(separator: "\n").count <= 45, "about 40 lines")
    }

    @Test func theExampleImportsOnlyLibraryProducts() throws {
        let manifest = try Self.read("Package.swift")
        let example = try Self.read("Examples/DeskCamera/main.swift")
        let products = Set(manifest.matches(of: /\.library\(name: "([A-Za-z]+)"/).map { String($0.output.1) })
        // Foundation ships with Swift; Logging is swift-log's library product.
        let allowed = products.union(["Foundation", "Logging"])
        let imports = example.matches(of: /(?m)^import ([A-Za-z]+)$/).map { String($0.output.1) }
        #expect(!imports.isEmpty)
        for module in imports {
            #expect(allowed.contains(module), "\(module) is imported by the example but is not a library product in Package.swift")
        }
    }
}
