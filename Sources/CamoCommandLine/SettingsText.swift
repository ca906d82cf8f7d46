import CamoWire
import Foundation

/// How both command lines (`camo-agent settings`, `camo-studio settings`) print the settings model.
public enum SettingsText {
    /// A table: name, value, what may be written, default, and a note (read-only, unsupported and why), grouped.
    public static func table(_ settings: [SettingDescriptor]) -> String {
        let order = ["privacy", "audio", "image", "lights", "camera", "power", "info"]
        let sorted = settings.enumerated().sorted { a, b in
            let ga = order.firstIndex(of: a.element.group) ?? order.count, gb = order.firstIndex(of: b.element.group) ?? order.count
            return ga != gb ? ga < gb : a.offset < b.offset
        }.map(\.element)
        var rows = [["NAME", "VALUE", "ALLOWED", "DEFAULT", "GROUP", "NOTE"]]
        for s in sorted {
            let note: String
            if !s.supported {
                note = "unsupported: " + (s.note ?? "not on this camera")
            } else if !s.writable {
                note = "read-only" + (s.note.map { "; \($0)" } ?? "")
            } else {
                note = s.note ?? ""
            }
            rows.append([
                s.name, s.value.map { "\($0)" } ?? "-", s.supported && s.writable ? s.range : "-",
                s.defaultValue.map { "\($0)" } ?? "-", s.group, note,
            ])
        }
        return TextTable.render(rows)
    }

    /// One line per applied setting: `brightness = 255`.
    public static func applied(_ settings: [SettingDescriptor]) -> String {
        settings.map { "\($0.name) = \($0.value.map { "\($0)" } ?? "?")" }.joined(separator: "\n")
    }

    /// The settings as JSON (sorted keys, pretty).
    public static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
