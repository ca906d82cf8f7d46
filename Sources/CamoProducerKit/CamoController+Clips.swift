import CamoWire
import Dispatch
import Synchronization

/// The recordings a host keeps, as paired studios reach them (protocol 1.4: `clipListRequest`, `clipFetch`). The
/// controller calls it off the event loops, one request at a time.
public protocol ClipLibrary: Sendable {
    /// At most `limit` recordings older than `before` (0: from the newest), newest first; whether older ones follow;
    /// how many are kept.
    func clips(before: UInt64, limit: Int) -> (clips: [WireClip], more: Bool, total: Int)
    /// Up to `length` bytes of recording `id` from `offset`, and its size; nil when there is no such recording.
    func read(id: UInt64, offset: UInt64, length: Int) -> (total: UInt64, data: [UInt8])?
}

/// Paired studios list and fetch the host's recordings (protocol 1.4): a host that keeps them gives its
/// ``ClipLibrary``; studios are told so (capability `clips`).
extension CamoController {
    /// Lets paired studios list and fetch `library`'s recordings (nil: none kept from now on).
    public func setClipLibrary(_ library: (any ClipLibrary)?) {
        settingsHub.clipLibrary.withLock { $0 = library }
    }

    /// Whether the host keeps recordings a studio can list.
    public var keepsClips: Bool { settingsHub.clipLibrary.withLock { $0 != nil } }

    /// A page of the recordings for a studio, answered on `reply` from the clips queue.
    func requestClipList(before: UInt64, paired: Bool, reply: @escaping @Sendable (WireClipList) -> Void) {
        let library = settingsHub.clipLibrary.withLock { $0 }
        settingsHub.clipQueue.async {
            guard paired else {
                return reply(WireClipList(clips: [], more: false, total: 0, unavailable: Self.notPaired))
            }
            guard let library else {
                return reply(WireClipList(clips: [], more: false, total: 0, unavailable: Self.noRecordings))
            }
            let page = library.clips(before: before, limit: WireClipList.maxClips)
            reply(WireClipList(clips: page.clips, more: page.more, total: page.total))
        }
    }

    /// A piece of a recording for a studio, answered on `reply` from the clips queue.
    func requestClipData(_ fetch: ClipFetch, paired: Bool, reply: @escaping @Sendable (ClipData) -> Void) {
        let library = settingsHub.clipLibrary.withLock { $0 }
        settingsHub.clipQueue.async {
            func refuse(_ why: String) { reply(ClipData(id: fetch.id, offset: fetch.offset, total: 0, refusal: why)) }
            guard paired else { return refuse(Self.notPaired) }
            guard let library else { return refuse(Self.noRecordings) }
            guard let piece = library.read(id: fetch.id, offset: fetch.offset, length: Int(fetch.length)) else {
                return refuse("there is no recording \(fetch.id) (it may have been removed to make room); list them again")
            }
            reply(ClipData(id: fetch.id, offset: fetch.offset, total: piece.total, data: piece.data))
        }
    }

    static let notPaired = "only a paired studio may list and fetch recordings; pair this studio (camo-studio pair) and connect again"
    static let noRecordings = "this agent keeps no recordings (started with --no-recordings, or no recording mode that keeps any); choose one in the settings (selectedRecordingMode)"
}
