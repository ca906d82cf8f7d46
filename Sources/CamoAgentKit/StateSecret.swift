import CamoStorage
import Foundation

/// A secret the agent keeps in its state directory (mode 0600): the configured one, else the saved one, else a new
/// one made at first use from a 62-letter alphabet (nothing a URL or a form must escape).
struct StateSecret: Sendable {
    /// The file's name in the state directory.
    let fileName: String
    /// Characters in a new secret.
    let length: Int
    /// The fewest characters a saved secret may have to be used.
    let minimum: Int

    /// The configured secret, or the saved one, or a new one (saved).
    func loadOrCreate(configured: String?, stateDirectory: String) throws -> String {
        if let configured { return configured }
        if let saved = saved(stateDirectory: stateDirectory), saved.count >= minimum { return saved }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        let secret = String((0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
        try AtomicFile.write(Array((secret + "\n").utf8), to: stateDirectory + "/" + fileName, permissions: 0o600)
        return secret
    }

    /// The saved secret, if any.
    func saved(stateDirectory: String) -> String? {
        guard let data = FileManager.default.contents(atPath: stateDirectory + "/" + fileName) else { return nil }
        let saved = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return saved.isEmpty ? nil : saved
    }
}

/// The webhook's HMAC key: the configured `webhookSecret`, else one generated at first start and kept in the state
/// directory (`webhook-secret`, 0600). `camo-agent events secret` shows it, for the receiver's configuration.
public enum WebhookSecret {
    static let secret = StateSecret(fileName: "webhook-secret", length: 32, minimum: 16)

    /// The configured, saved or a new secret.
    static func loadOrCreate(configured: String?, stateDirectory: String) throws -> String {
        try secret.loadOrCreate(configured: configured, stateDirectory: stateDirectory)
    }

    /// The saved secret, if any.
    public static func saved(stateDirectory: String) -> String? { secret.saved(stateDirectory: stateDirectory) }
}
