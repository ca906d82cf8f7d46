import Foundation

/// A card of snd-aloop, the ALSA loopback driver behind the virtual microphone: what is played into one end is
/// recorded from the other.
public struct LoopbackSoundCard: Sendable, Equatable, Codable {
    /// The card's slot (hw:N).
    public var index: Int
    /// The card's id (`CamoMic`): ALSA names its devices by it.
    public var id: String

    /// A card with these values.
    public init(index: Int, id: String) {
        self.index = index
        self.id = id
    }

    /// The end `camo-studio camera` plays into: `hw:ID,0,0`.
    public var playbackDevice: String { "hw:\(id),0,0" }
    /// The end other programs record from, the microphone they see: `hw:ID,1,0`.
    public var captureDevice: String { "hw:\(id),1,0" }

    /// snd-aloop's other end of `hw:ID,0,N` is `hw:ID,1,N` and the other way round; any other device name is
    /// returned as it is.
    public static func otherEnd(of device: String) -> String {
        let parts = device.split(separator: ",", omittingEmptySubsequences: false)
        guard device.hasPrefix("hw:"), parts.count == 3, parts[1] == "0" || parts[1] == "1", !parts[2].isEmpty else { return device }
        return "\(parts[0]),\(parts[1] == "0" ? "1" : "0"),\(parts[2])"
    }

    static let moduleDirectory = "/sys/module/snd_aloop"

    /// Whether snd-aloop is loaded.
    public static func isLoaded(on host: any LoopbackHost) -> Bool { host.exists(moduleDirectory) }

    /// The snd-aloop cards listed in /proc/asound/cards (lines such as ` 1 [CamoMic        ]: Loopback - Loopback`).
    public static func all(from host: any LoopbackHost) -> [LoopbackSoundCard] {
        guard let text = host.read("/proc/asound/cards") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"), open < close,
                  let index = Int(line[..<open].trimmingCharacters(in: .whitespaces)) else { return nil }
            let id = line[line.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            let driver = line[line.index(after: close)...].drop { $0 == ":" || $0 == " " }.prefix { $0 != " " }
            return driver == "Loopback" ? LoopbackSoundCard(index: index, id: id) : nil
        }
    }
}
