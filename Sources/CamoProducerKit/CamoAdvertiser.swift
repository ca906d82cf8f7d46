import CamoWire

/// Makes a ``CamoController`` discoverable: told when the controller starts and stops listening and when a
/// pairing window opens and closes, so `_camo._tcp` is published exactly while the controller runs and
/// `_camopairing._tcp` exactly while a window is open.
///
/// The controller calls these on its own advertiser queue, one call at a time in the order it decided them,
/// never on an event loop: an implementation may block (D-Bus round trips). ``AvahiAdvertiser`` is the default;
/// tests pass a recorder.
public protocol CamoAdvertiser: Sendable {
    /// The controller listens on `port`: publish `_camo._tcp` with `txt` (in this order).
    func controllerStarted(port: Int, txt: [(String, String)])
    /// The controller stopped: withdraw everything.
    func controllerStopped()
    /// A pairing window opened: publish `_camopairing._tcp` on `port` with `txt` (it names the studio id waited for).
    func pairingWindowOpened(port: Int, txt: [(String, String)])
    /// The window closed, for any reason: withdraw `_camopairing._tcp`.
    func pairingWindowClosed()
}

/// How a controller makes itself discoverable.
public enum AdvertiserChoice: Sendable {
    /// Through avahi-daemon (``AvahiAdvertiser``), under the agent identity's name. The default.
    case avahi
    /// Not at all: studios connect by address (`camo-studio record --connect HOST:PORT`).
    case off
    /// Through the given advertiser.
    case custom(any CamoAdvertiser)
}

/// The TXT records the controller publishes (see Docs/PROTOCOL.md, "Discovery").
enum AdvertisedRecords {
    static func agent(identity: AgentIdentity, description: AgentDescription) -> [(String, String)] {
        [
            ("v", "\(WireLimits.versionMajor)"), ("id", identity.id), ("name", identity.name),
            ("model", description.model), ("sw", description.softwareVersion),
        ]
    }

    static func pairing(identity: AgentIdentity, studioId: String) -> [(String, String)] {
        [("v", "\(WireLimits.versionMajor)"), ("id", identity.id), ("studio", studioId)]
    }
}
