/// Why ``ResolvedAgent/resolve(_:connect:studio:logger:clock:)`` found no paired agent to reach.
public enum AgentResolutionError: Error, Sendable {
    /// No paired agent has this id or name (nor does the agent mDNS shows by this name).
    case notPaired(String)
    /// mDNS cannot be used to look for this paired agent (avahi-daemon is not running, say).
    case lookupFailed(PairedAgent, any Error)
    /// mDNS did not show this paired agent at an address that answers within the seconds given.
    case notFound(PairedAgent, seconds: Double)
}
