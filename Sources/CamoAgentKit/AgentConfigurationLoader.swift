import Foundation

/// Builds an ``AgentConfiguration`` from its layers: the defaults, then a JSON config file, then the command
/// line; the later layer wins, key by key. It remembers where each value came from (`camo-agent config` prints it).
///
/// The file is a JSON object whose keys are ``AgentConfiguration``'s property names, e.g.
/// `{"port": 47800, "camera": "/dev/video0", "allowUnpaired": false}`. Its default place is
/// ``defaultFile(environment:)``; a missing default file is no error, a missing file that was asked for is.
public struct AgentConfigurationLoader: Sendable {
    /// The effective configuration.
    public private(set) var configuration = AgentConfiguration()
    /// Where each key's value came from: `default`, the file's path, or the command line's description.
    public private(set) var sources: [String: String] = [:]

    /// Every key, in the order of ``AgentConfiguration``'s properties.
    public static let keys: [String] = {
        Mirror(reflecting: AgentConfiguration()).children.compactMap(\.label)
    }()

    /// The defaults only.
    public init() {
        for key in Self.keys { sources[key] = "default" }
    }

    /// The config file to read when none is named: `$CONFIGURATION_DIRECTORY/config.json` under systemd's
    /// `ConfigurationDirectory=`, `/etc/camo-agent/config.json` for root, else `$XDG_CONFIG_HOME/camo-agent/config.json`
    /// or `~/.config/camo-agent/config.json`.
    public static func defaultFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let directory = environment["CONFIGURATION_DIRECTORY"], !directory.isEmpty {
            return String(directory.split(separator: ":").first ?? Substring(directory)) + "/config.json"
        }
        if getuid() == 0 { return "/etc/camo-agent/config.json" }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return config + "/camo-agent/config.json" }
        return NSHomeDirectory() + "/.config/camo-agent/config.json"
    }

    /// Lays the file at `path` over what is there. A missing file is skipped when `required` is false.
    public mutating func apply(file path: String, required: Bool) throws(AgentConfigurationError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !required && !FileManager.default.fileExists(atPath: path) { return }
            throw .unreadable(file: path, reason: "it is missing or not readable by this user")
        }
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw AgentConfigurationError.unreadable(file: path, reason: "the top level is not an object")
            }
            object = parsed
        } catch let error as AgentConfigurationError {
            throw error
        } catch {
            throw .unreadable(file: path, reason: "it is not valid JSON")
        }
        for key in object.keys.sorted() where !Self.keys.contains(key) {
            throw .unknownKey(key, file: path, known: Self.keys)
        }
        try overlay(object, source: path, file: path)
    }

    /// Lays `values` (keys as in the file; values as JSON would give them) over what is there, as given by `source`
    /// (the command line: `--port`, say).
    public mutating func apply(_ values: [String: Any], source: (String) -> String) throws(AgentConfigurationError) {
        for key in values.keys where !Self.keys.contains(key) {
            throw .unknownKey(key, file: source(key), known: Self.keys)
        }
        for (key, value) in values {
            try overlay([key: value], source: source(key), file: source(key))
        }
    }

    private mutating func overlay(_ values: [String: Any], source: String, file: String) throws(AgentConfigurationError) {
        guard !values.isEmpty else { return }
        do {
            var merged = try JSONSerialization.jsonObject(with: JSONEncoder().encode(configuration)) as? [String: Any] ?? [:]
            for (key, value) in values { merged[key] = value }
            configuration = try JSONDecoder().decode(AgentConfiguration.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch let DecodingError.typeMismatch(type, context) {
            throw .unreadable(file: file, reason: "\(context.codingPath.map(\.stringValue).joined(separator: ".")) must be \(Self.typeName(type))")
        } catch let DecodingError.valueNotFound(type, context) {
            throw .unreadable(file: file, reason: "\(context.codingPath.map(\.stringValue).joined(separator: ".")) must be \(Self.typeName(type))")
        } catch {
            throw .unreadable(file: file, reason: "\(error)")
        }
        for key in values.keys { sources[key] = source }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        default: "\(type)"
        }
    }

    /// Each key with its effective value (as JSON text) and where it came from, in key order.
    public var effectiveValues: [(key: String, value: String, source: String)] {
        let object = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(configuration))) as? [String: Any] ?? [:]
        return Self.keys.map { key in
            let value: String
            if let v = object[key], !(v is NSNull) {
                let data = (try? JSONSerialization.data(withJSONObject: v, options: [.fragmentsAllowed, .withoutEscapingSlashes])) ?? Data()
                value = String(decoding: data, as: UTF8.self)
            } else {
                value = "null"
            }
            return (key, value, sources[key] ?? "default")
        }
    }
}
