import CamoMedia
import CamoUSB
import CamoWire
import Foundation
import Synchronization

/// What the pacer needs to know to prepare frames for one session.
struct VideoSettings: Sendable, Hashable {
    var size: VideoSize
    var codec: VideoCodec
    var jpegQuality: Int
}

/// The part of a session that other threads may read: its snapshot, its video settings, whether it takes
/// media now. Written by the session's event loop, read by the controller and the status command.
final class SessionInfo: Sendable {
    struct State: Sendable {
        var connection: CamoConnection?
        var settings: VideoSettings
        var takesMedia = false
        /// False for a settings-only session (protocol 1.2): it is no viewer, so its size does not count.
        var isViewer = true
        var statistics = SessionStatistics()
        /// The paired studio this KK session authenticated as (set when admitted); unpairing ends it.
        var pairedStudioId: String?
        /// H.264 sessions: the rate control, the rendition, keyframe needs (nil for bgra and jpeg).
        var h264: H264SessionState?
        /// JPEG sessions of a 1.1 studio on the network: the rate control and the quality it chose (nil otherwise).
        var jpegRate: JPEGRateState?
    }

    let id = UUID()
    let address: String
    /// The link the connection came over, from the local address's interface.
    let link: LinkKind
    private let state: Mutex<State>

    var isLoopback: Bool { link == .loopback }

    init(address: String, link: LinkKind, settings: VideoSettings) {
        self.address = address
        self.link = link
        self.state = Mutex(State(settings: settings))
    }

    func withState<R>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    /// The connection snapshot with current counters, or nil before the studio's hello.
    var connection: CamoConnection? {
        state.withLock { state in
            guard var connection = state.connection else { return nil }
            connection.statistics = state.statistics
            return connection
        }
    }

    var settings: VideoSettings { state.withLock { $0.settings } }
    var takesMedia: Bool { state.withLock { $0.takesMedia } }
}

/// What the pacer and the session share about an H.264 session (under the session's lock).
struct H264SessionState: Sendable {
    /// Steers the rendition's bitrate and skips frames from the studio's receiver reports.
    var rate: LinkRateController
    /// The rendition tier the session takes (0 = the fastest at its size); set by the pacer's planner.
    var tier = 0
    /// The session has had no keyframe since it started or lost frames: it gets nothing until one.
    var awaitingKeyframe = true
    /// The studio asked for a keyframe (served at most once per interval).
    var keyframeRequested = false
    /// Video bytes the session's outbox holds, not yet written (from its last pump).
    var queuedVideoBytes = 0
    /// Slots sent as skipped (the rendition skipped the frame before its encoder).
    var skippedFrames: UInt64 = 0
    /// Keyframe requests the studio sent.
    var keyframeRequests: UInt64 = 0
    /// The bitrate of the rendition the session took last.
    var renditionBitrate = 0
}
