import CamoDiscovery

/// Something that follows the `_camo._tcp` records mDNS shows: ``AgentBrowser`` in a running studio, a fixed
/// list in tests. ``AgentCandidates`` and ``AgentLookup`` read agents' addresses through it.
public protocol AgentRecordSource: AnyObject, Sendable {
    /// Starts following the records; throws when mDNS cannot be used (avahi-daemon is not running, say).
    func start() throws(DiscoveryError)
    /// Stops following the records. Harmless when not started.
    func stop()
    /// One record per agent and link, as known now.
    var records: [AgentRecord] { get }
    /// Why following stopped, if it did (avahi-daemon went away); nil while it works.
    var failed: DiscoveryError? { get }
}
