import CamoAgentKit
import Foundation
import Testing

@Suite("The agent's configuration: defaults, a config file, then flags")
struct AgentConfigurationTests {
    static func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "camo-config-\(UInt32.random(in: 0...UInt32.max)).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func flag(_ key: String) -> String { "--" + key.replacing(/[A-Z]/) { "-" + $0.output.lowercased() } }

    @Test func theFileOverridesDefaultsAndFlagsOverrideTheFile() throws {
        let path = try Self.file(#"{"port": 5000, "camera": "/dev/video4", "mdns": false, "jpegQuality": 60}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var loader = AgentConfigurationLoader()
        try loader.apply(file: path, required: true)
        try loader.apply(["port": 6000, "allowUnpaired": true], source: Self.flag)
        let configuration = loader.configuration
        #expect(configuration.port == 6000)
        #expect(configuration.camera == "/dev/video4")
        #expect(configuration.mdns == false)
        #expect(configuration.jpegQuality == 60)
        #expect(configuration.allowUnpaired == true)
        #expect(configuration.microphone == "auto", "untouched keys keep their defaults")
        #expect(loader.sources["port"] == "--port")
        #expect(loader.sources["allowUnpaired"] == "--allow-unpaired")
        #expect(loader.sources["camera"] == path)
        #expect(loader.sources["microphone"] == "default")
        let rows = Dictionary(uniqueKeysWithValues: loader.effectiveValues.map { ($0.key, ($0.value, $0.source)) })
        #expect(rows["port"]?.0 == "6000" && rows["port"]?.1 == "--port")
        #expect(rows["camera"]?.0 == "\"/dev/video4\"")
        #expect(rows["name"]?.0 == "null")
        #expect(loader.effectiveValues.map(\.key) == AgentConfigurationLoader.keys)
    }

    @Test func aMissingDefaultFileIsNoErrorButAMissingNamedFileIs() throws {
        var loader = AgentConfigurationLoader()
        try loader.apply(file: "/nonexistent/camo/config.json", required: false)
        #expect(loader.configuration == AgentConfiguration())
        #expect(throws: AgentConfigurationError.self) { try loader.apply(file: "/nonexistent/camo/config.json", required: true) }
    }

    @Test func anUnknownKeyNamesTheKnownOnes() throws {
        let path = try Self.file(#"{"prot": 5000}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var loader = AgentConfigurationLoader()
        #expect {
            try loader.apply(file: path, required: true)
        } throws: { error in
            guard case AgentConfigurationError.unknownKey("prot", path, _) = error else { return false }
            return "\(error)".contains("port") && "\(error)".contains(path)
        }
    }

    @Test(arguments: [
        (#"{"port": "47800"}"#, "port must be a whole number"),
        (#"{"mdns": 1.5}"#, "mdns must be true or false"),
        (#"[1, 2]"#, "the top level is not an object"),
        (#"{"port": 47800"#, "not valid JSON"),
    ])
    func aBadFileSaysWhatIsWrong(text: String, expected: String) throws {
        let path = try Self.file(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var loader = AgentConfigurationLoader()
        #expect {
            try loader.apply(file: path, required: true)
        } throws: { error in
            "\(error)".contains(expected) && "\(error)".contains(path)
        }
        #expect(loader.configuration == AgentConfiguration(), "nothing of a bad file is applied")
    }

    @Test func anOutOfRangeValueNamesItsKeyAndWhereItCameFrom() throws {
        let path = try Self.file(#"{"jpegQuality": 0}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var loader = AgentConfigurationLoader()
        try loader.apply(file: path, required: true)
        #expect(throws: AgentConfigurationError.invalid(key: "jpegQuality", value: "0", rule: "1...100", source: path)) {
            try loader.configuration.validate(sources: loader.sources)
        }
        try loader.apply(["port": 70_000], source: Self.flag)
        #expect {
            try loader.configuration.validate(sources: loader.sources)
        } throws: { error in
            "\(error)" == "port is 70000 (from --port); it must be a TCP port 0...65535 (0 picks any free port)."
        }
    }

    @Test func theDefaultFileFollowsSystemdThenRootThenXDG() {
        #expect(AgentConfigurationLoader.defaultFile(environment: ["CONFIGURATION_DIRECTORY": "/etc/camo-agent"]) == "/etc/camo-agent/config.json")
        if getuid() != 0 {
            #expect(AgentConfigurationLoader.defaultFile(environment: ["XDG_CONFIG_HOME": "/home/u/.config"]) == "/home/u/.config/camo-agent/config.json")
        } else {
            #expect(AgentConfigurationLoader.defaultFile(environment: [:]) == "/etc/camo-agent/config.json")
        }
    }
}

@Suite("The shipped example config")
struct ShippedConfigTests {
    @Test func udevConfigExampleLoadsAndValidates() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let path = root.path + "/udev/config.json.example"
        var loader = AgentConfigurationLoader()
        try loader.apply(file: path, required: true)
        try loader.configuration.validate(sources: loader.sources)
        #expect(loader.configuration.pairingPort == 47801)
        #expect(loader.sources["usbTrust"] == path)
    }
}
