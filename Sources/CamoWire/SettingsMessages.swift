import Foundation

/// The value of one camera setting, as JSON carries it: a boolean, an integer, a text (a choice such as `auto`),
/// a rectangle (the viewport) or, for read-only facts, an object of texts.
public enum SettingValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `true` / `false`.
    case bool(Bool)
    /// A whole number.
    case int(Int)
    /// A text: one of a setting's choices, or a read-only fact.
    case text(String)
    /// A rectangle `x1,y1` (inclusive) to `x2,y2` (exclusive) in pixels of a `width` x `height` space.
    case rectangle(SettingRectangle)
    /// A read-only group of facts (the power source, for example).
    case facts([String: String])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(String.self) {
            self = .text(value)
        } else if let value = try? container.decode(SettingRectangle.self) {
            self = .rectangle(value)
        } else if let value = try? container.decode([String: String].self) {
            self = .facts(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a setting's value is a boolean, an integer, a text or a rectangle {x1,y1,x2,y2}")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        case .rectangle(let value): try container.encode(value)
        case .facts(let value): try container.encode(value)
        }
    }

    /// How the value reads in a table: `true`, `42`, `auto`, `320,180-960,540`.
    public var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .text(let value): value
        case .rectangle(let value): "\(value)"
        case .facts(let value): value.keys.sorted().map { "\($0)=\(value[$0]!)" }.joined(separator: " ")
        }
    }
}

/// A rectangle in pixels: `x1,y1` inclusive, `x2,y2` exclusive, in a `width` x `height` space (the camera's capture
/// size; 0 when the writer leaves it to the agent).
public struct SettingRectangle: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Left edge.
    public var x1: Int
    /// Top edge.
    public var y1: Int
    /// Right edge (exclusive).
    public var x2: Int
    /// Bottom edge (exclusive).
    public var y2: Int
    /// The width of the space the coordinates are in (0: the camera's current size).
    public var width: Int
    /// The height of that space (0: the camera's current size).
    public var height: Int

    /// Creates a rectangle.
    public init(x1: Int, y1: Int, x2: Int, y2: Int, width: Int = 0, height: Int = 0) {
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
        self.width = width
        self.height = height
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        x1 = try container.decode(Int.self, forKey: .x1)
        y1 = try container.decode(Int.self, forKey: .y1)
        x2 = try container.decode(Int.self, forKey: .x2)
        y2 = try container.decode(Int.self, forKey: .y2)
        width = try container.decodeIfPresent(Int.self, forKey: .width) ?? 0
        height = try container.decodeIfPresent(Int.self, forKey: .height) ?? 0
    }

    /// `x1,y1-x2,y2`, and `@WxH` when the space is given.
    public var description: String { "\(x1),\(y1)-\(x2),\(y2)" + (width > 0 ? "@\(width)x\(height)" : "") }

    /// Parses `x1,y1-x2,y2` or `x1,y1,x2,y2` (command-line form), optionally followed by `@WIDTHxHEIGHT`.
    public init?(parsing text: String) {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        var space = (0, 0)
        if let at = body.firstIndex(of: "@") {
            let parts = body[body.index(after: at)...].split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
            space = (w, h)
            body = body[..<at]
        }
        let numbers = body.split(whereSeparator: { $0 == "," || $0 == "-" }).map { Int($0) }
        guard numbers.count == 4, !numbers.contains(nil), !body.hasPrefix("-") else { return nil }
        self.init(x1: numbers[0]!, y1: numbers[1]!, x2: numbers[2]!, y2: numbers[3]!, width: space.0, height: space.1)
    }
}

/// One attribute of the camera's settings model: what it is, what it may hold, and whether this camera has it.
public struct SettingDescriptor: Sendable, Hashable, Codable {
    /// What kind of value the setting holds.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// `true` / `false`.
        case bool
        /// An integer in `minimum...maximum` on `step`, or one of `allowed`.
        case int
        /// One of `choices`.
        case choice
        /// A rectangle (the viewport).
        case rectangle
        /// A read-only text or group of facts.
        case info
        /// An action: writing any value triggers it (a camera's button control).
        case button
        /// A text the setting checks itself: a list (`enabledEventTriggers`: `motion,smokeAlarm`) or a JSON document
        /// (`zones`); the note says its form.
        case text
    }

    /// The name used to read and write it: camelCase for the camera model's attributes (`microphoneMuted`,
    /// `imageRotation`), the V4L2 name for the camera's own controls (`brightness`, `white_balance_temperature`).
    public var name: String
    /// A human label.
    public var label: String
    /// The group it is listed under: `privacy`, `audio`, `image`, `lights`, `camera`, `power`, `info`.
    public var group: String
    /// The kind of value.
    public var kind: Kind
    /// The current value (nil when unsupported or unknown).
    public var value: SettingValue?
    /// The value it returns to (nil when it has none).
    public var defaultValue: SettingValue?
    /// The smallest integer (int kind).
    public var minimum: Int?
    /// The largest integer (int kind).
    public var maximum: Int?
    /// The step between integers (int kind), when not 1.
    public var step: Int?
    /// The only integers allowed (int kind), when it is a short list (rotation: 0, 90, 180, 270).
    public var allowed: [Int]?
    /// The texts allowed (choice kind); for a camera menu control, its entries' names.
    public var choices: [String]?
    /// Whether it can be written (by a studio that may write).
    public var writable: Bool
    /// Whether this camera and host have it. Unsupported settings are listed, never silently ignored.
    public var supported: Bool
    /// Why it is unsupported, or a note (`inactive while auto exposure is on`, `the camera refused 300: 0...255`).
    public var note: String?

    /// Creates a descriptor.
    public init(
        name: String, label: String, group: String, kind: Kind, value: SettingValue? = nil, defaultValue: SettingValue? = nil,
        minimum: Int? = nil, maximum: Int? = nil, step: Int? = nil, allowed: [Int]? = nil, choices: [String]? = nil,
        writable: Bool = true, supported: Bool = true, note: String? = nil
    ) {
        self.name = name
        self.label = label
        self.group = group
        self.kind = kind
        self.value = value
        self.defaultValue = defaultValue
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.allowed = allowed
        self.choices = choices
        self.writable = writable
        self.supported = supported
        self.note = note
    }

    /// What may be written, for tables and error messages: `true/false`, `0...255`, `one of off, on, auto`.
    public var range: String {
        switch kind {
        case .bool: return "true/false"
        case .int:
            if let allowed { return "one of " + allowed.map(String.init).joined(separator: ", ") }
            return "\(minimum ?? 0)...\(maximum ?? 0)" + ((step ?? 1) > 1 ? " step \(step!)" : "")
        case .choice: return "one of " + (choices ?? []).joined(separator: ", ")
        case .rectangle: return "x1,y1-x2,y2 inside the frame"
        case .info: return "read-only"
        case .button: return "any value triggers it"
        case .text: return note ?? "a text"
        }
    }
}

extension SettingDescriptor {
    /// Parses the command-line form of a value: `true`/`on`/`1`, a number, a choice, `x1,y1-x2,y2`. Text that fits
    /// no form comes back as `.text`, which the agent refuses naming what is allowed.
    public func parse(_ text: String) -> SettingValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .bool:
            switch trimmed.lowercased() {
            case "true", "on", "yes", "1": return .bool(true)
            case "false", "off", "no", "0": return .bool(false)
            default: return .text(trimmed)
            }
        case .int, .button:
            return Int(trimmed).map { .int($0) } ?? .text(trimmed)
        case .rectangle:
            return SettingRectangle(parsing: trimmed).map { .rectangle($0) } ?? .text(trimmed)
        case .choice, .info, .text:
            return .text(trimmed)
        }
    }
}

/// The settings model as the agent sends it (`settings`, 0x0E, 1.2): every attribute, or on a change the changed ones.
public struct SettingsSnapshot: Sendable, Hashable, Codable {
    /// Why it was sent.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The answer to `settingsRequest`: every attribute.
        case answer
        /// Something changed (a studio, the host's CLI, `auto` night vision, a replugged camera): the changed ones.
        case change
    }

    /// Why it was sent.
    public var reason: Reason
    /// Counts every change on the agent; a studio that sees a gap asks for the whole model again.
    public var revision: UInt64
    /// Whether the studio receiving it may write.
    public var studioMayWrite: Bool
    /// Who made the change (`studio NAME`, `camo-agent settings`, `night vision auto`), for change notifications.
    public var changedBy: String?
    /// The attributes.
    public var settings: [SettingDescriptor]

    /// Creates a snapshot.
    public init(reason: Reason, revision: UInt64, studioMayWrite: Bool, changedBy: String? = nil, settings: [SettingDescriptor]) {
        self.reason = reason
        self.revision = revision
        self.studioMayWrite = studioMayWrite
        self.changedBy = changedBy
        self.settings = settings
    }
}

/// A studio's write (`settingsWrite`, 0x0F, 1.2): several settings at once.
public struct SettingsWrite: Sendable, Hashable, Codable {
    /// The most settings one write may set.
    public static let maxValues = 256
    /// Echoed in the result.
    public var requestId: UInt32
    /// Name → new value.
    public var values: [String: SettingValue]

    /// Creates a write.
    public init(requestId: UInt32, values: [String: SettingValue]) {
        self.requestId = requestId
        self.values = values
    }
}

/// One refused write: the setting and a reason naming what is allowed.
public struct SettingRefusal: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The setting's name as written.
    public var name: String
    /// Why, e.g. `brightness must be in 0...255 (got 300)`.
    public var reason: String

    /// Creates a refusal.
    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }

    public var description: String { "\(name): \(reason)" }
}

/// The agent's answer to a write (`settingsResult`, 0x11, 1.2): what was applied and what was refused, and why.
public struct SettingsResult: Sendable, Hashable, Codable {
    /// The write's `requestId`.
    public var requestId: UInt32
    /// The settings now as written (with the camera's own rounding).
    public var applied: [SettingDescriptor]
    /// The settings that were not changed.
    public var refused: [SettingRefusal]

    /// Creates a result.
    public init(requestId: UInt32, applied: [SettingDescriptor], refused: [SettingRefusal]) {
        self.requestId = requestId
        self.applied = applied
        self.refused = refused
    }
}

/// JSON bodies of the settings messages: a `u32` length and that many bytes of UTF-8 JSON, at most 256 KiB.
enum SettingsJSON {
    /// The largest JSON body.
    static let maxBytes = 262_144

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func encode<T: Encodable>(_ value: T, into w: inout ByteWriter) {
        // The types here always encode; an empty object would be refused by the peer and say so.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        w.u32(UInt32(data.count))
        w.bytes.append(contentsOf: data)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ r: inout ByteReader, message: String) throws(WireError) -> T {
        let length = Int(try r.u32("\(message) length"))
        guard length <= maxBytes else {
            throw WireError(.limitExceeded, "\(message) carries \(length) bytes of JSON; at most \(maxBytes)")
        }
        let body = try r.bytes(length, "\(message) JSON")
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw WireError(.badRequest, "\(message) is not valid: \(describe(error))")
        } catch {
            throw WireError(.badRequest, "\(message) is not valid JSON: \(error)")
        }
    }

    /// A decoding error as one sentence naming the field.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "the body" : keys.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)) lacks \(key.stringValue)"
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
