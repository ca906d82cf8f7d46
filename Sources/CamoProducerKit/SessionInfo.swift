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
        var statistics = SessionStatistics()
        /// The paired studio this KK session authenticated as (set when admitted); unpairing ends it.
        var pairedStudioId: String?
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
