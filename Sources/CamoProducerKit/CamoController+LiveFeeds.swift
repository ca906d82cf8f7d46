import CamoMedia
import Foundation

extension CamoController {
    /// Adds a live feed (``LiveFeed``): the shared H.264 rendition at `request`'s size, and the audio, for a
    /// consumer beside the studios. Needs H.264 (``ControllerConfiguration/h264``).
    /// - Throws: ``LiveFeedError`` when the controller has no H.264 encoder.
    public func addLiveFeed(
        _ request: LiveFeedRequest, video: @escaping @Sendable (LiveVideo) -> Void,
        audio: @escaping @Sendable (AudioChunk) -> Void
    ) throws(LiveFeedError) -> LiveFeed {
        guard configuration.h264 != nil else { throw LiveFeedError.noH264 }
        let feed = LiveFeed(request: request, video: video, audio: audio) { [weak self] id in
            self?.core.withLock { $0.liveFeeds.removeAll { $0.id == id } }
        }
        core.withLock { $0.liveFeeds.append(feed) }
        logger.info("Live feed added", metadata: ["size": "\(request.size)", "bitrate": "\(request.bitrate)"])
        return feed
    }

    /// The live feeds now.
    public var liveFeeds: [LiveFeed] { core.withLock { $0.liveFeeds } }

    /// Merges the feeds' wishes into the slot's H.264 demands: each feed rides tier 0 of its size; with no studio
    /// there, at the first feed's bitrate (the agent's feeds all ask for the same).
    static func addLiveFeedDemands(
        _ feeds: [LiveFeed], sizeFor: (LiveFeed) -> VideoSize, into demands: inout [RenditionKey: H264Demand]
    ) -> [RenditionKey] {
        feeds.map { feed in
            let key = RenditionKey(size: sizeFor(feed), tier: 0)
            let keyframe = feed.wantsKeyframe()
            var demand = demands[key] ?? H264Demand(bitrate: feed.request.bitrate, keyframe: false, skip: false)
            demand.keyframe = demand.keyframe || keyframe
            demand.everySlot = true
            demands[key] = demand
            return key
        }
    }
}

/// Why a live feed cannot be added.
public enum LiveFeedError: Error, CustomStringConvertible, Sendable {
    /// The controller was made without ``ControllerConfiguration/h264``.
    case noH264

    public var description: String {
        switch self {
        case .noH264:
            "Live view needs H.264, and this controller has no H.264 encoder (ControllerConfiguration.h264 is nil; the agent's --h264 off). Turn H.264 on."
        }
    }
}
