import CamoStorage
import Foundation

/// The RTSP password: the configured one, else one generated at first start and kept in the state directory
/// (`rtsp-password`, mode 0600) so NVRs keep working across restarts. `camo-agent web rtsp` shows it.
public enum RTSPPassword {
    /// The file's name in the state directory.
    static let fileName = "rtsp-password"

    /// The configured password, or the saved one, or a new one (saved).
    static func loadOrCreate(configured: String?, stateDirectory: String) throws -> String {
        if let configured { return configured }
        let path = stateDirectory + "/" + fileName
        if let data = FileManager.default.contents(atPath: path) {
            let saved = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if saved.count >= 8 { return saved }
        }
        // 16 characters from a 62-letter alphabet: about 95 bits, and nothing a URL or an NVR's form must escape.
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        let password = String((0..<16).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
        try AtomicFile.write(Array((password + "\n").utf8), to: path, permissions: 0o600)
        return password
    }

    /// The saved password, if any (for `camo-agent web rtsp`).
    public static func saved(stateDirectory: String) -> String? {
        guard let data = FileManager.default.contents(atPath: stateDirectory + "/" + fileName) else { return nil }
        let saved = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return saved.isEmpty ? nil : saved
    }
}
