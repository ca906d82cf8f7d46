import CamoDiscovery
import Logging
import Synchronization

/// Browses `_camo._tcp` and tells each address's link: `AvahiBrowser` merges an agent's records over its
/// interfaces (its USB link and the network) into one service, so the browser's events are followed from the
/// start and split back into per-link records (see ``AgentLinkTracker``).
///
/// It owns the `AvahiBrowser` and the task that follows its events, from ``start()`` until ``stop()``.
public final class AgentBrowser: AgentRecordSource {
    private let browser: AvahiBrowser
    private let tracker = Mutex(AgentLinkTracker())
    private let failure = Mutex<DiscoveryError?>(nil)
    private let follower = Mutex<Task<Void, Never>?>(nil)

    /// A browser that logs to `logger`; nothing happens until ``start()``.
    public init(logger: Logger) {
        browser = AvahiBrowser(type: CamoServiceType.agent, logger: logger)
    }

    /// Starts browsing; throws what `AvahiBrowser.start()` throws.
    public func start() throws(DiscoveryError) {
        let events = browser.services()   // before start(): no event is missed
        do {
            try browser.start()
        } catch {
            browser.stop()
            throw error
        }
        let task = Task { [self] in
            for await event in events {
                switch event {
                case .added(let service), .updated(let service):
                    tracker.withLock { $0.seen(AgentLookup.record(service)) }
                case .removed(let service):
                    tracker.withLock { $0.removed(name: service.name) }
                case .failed(let error):
                    failure.withLock { $0 = error }
                }
            }
        }
        follower.withLock { $0 = task }
    }

    /// Stops browsing (and following its events). Harmless when not started.
    public func stop() {
        browser.stop()
        follower.withLock { task in
            defer { task = nil }
            return task
        }?.cancel()
    }

    /// One record per agent and link, as known now.
    public var records: [AgentRecord] { tracker.withLock { $0.records } }

    /// Why browsing stopped, if it did (avahi-daemon went away).
    public var failed: DiscoveryError? { failure.withLock { $0 } }
}
