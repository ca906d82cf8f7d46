import Foundation

/// What `camo-studio status` shows: the running feeds, and the loopback devices that are there.
public struct VirtualDevicesReport: Codable, Sendable, Equatable {
    /// The running `camo-studio camera` processes' status, by pid.
    public var feeds: [FeedStatus]
    /// v4l2loopback's state; nil when it is not loaded.
    public var loopback: LoopbackModuleState?
    /// snd-aloop's cards.
    public var soundCards: [LoopbackSoundCard]

    /// A report of these values.
    public init(feeds: [FeedStatus], loopback: LoopbackModuleState?, soundCards: [LoopbackSoundCard]) {
        self.feeds = feeds
        self.loopback = loopback
        self.soundCards = soundCards
    }

    /// The live feeds in `directory` (see ``FeedStatusFile/list(directory:)``) and the modules' state on `host`.
    public static func gather(
        directory: String = FeedStatusFile.defaultDirectory(), host: any LoopbackHost = SystemLoopbackHost()
    ) -> VirtualDevicesReport {
        VirtualDevicesReport(
            feeds: FeedStatusFile.list(directory: directory), loopback: LoopbackModuleState.read(from: host),
            soundCards: LoopbackSoundCard.isLoaded(on: host) ? LoopbackSoundCard.all(from: host) : [])
    }

    /// A feed not updated for longer than this is marked as such (the camera writes each second).
    public static let staleAfter: TimeInterval = 5

    /// The lines to print: one per feed (marked when its file is older than ``staleAfter``), else
    /// "no camo-studio camera is running" and the loopback devices and cards found.
    public func lines(now: Date = Date()) -> [String] {
        guard feeds.isEmpty else {
            return feeds.map { feed in
                let age = now.timeIntervalSince(feed.updatedAt)
                return feed.summary + (age > Self.staleAfter ? " (not updated for \(Int(age)) s)" : "")
            }
        }
        var lines = ["no camo-studio camera is running"]
        if let loopback {
            lines.append(loopback.devices.isEmpty
                ? "v4l2loopback is loaded, with no devices"
                : "v4l2loopback devices: " + loopback.deviceLines.joined(separator: ", "))
        }
        for card in soundCards {
            lines.append("snd-aloop card \(card.id): programs record from \(card.captureDevice)")
        }
        return lines
    }
}
