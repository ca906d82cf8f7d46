/// The DNS-SD service types camo uses.
public enum CamoServiceType {
    /// An agent that streams: published while the agent runs.
    public static let agent = "_camo._tcp"
    /// An agent with an open pairing window: published only while the window is open.
    public static let pairing = "_camopairing._tcp"
}

/// Why discovery cannot work, in a sentence that says what to do.
public enum DiscoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The D-Bus system bus answers but avahi-daemon is not on it.
    case daemonNotRunning
    /// The D-Bus system bus itself is not there, so avahi-daemon cannot be reached.
    case systemBusNotRunning
    /// avahi-daemon went away while a browser was running.
    case daemonGone
    /// A service instance name avahi refuses (empty or longer than 63 bytes).
    case invalidServiceName(String)
    /// A TXT entry that cannot go into a TXT record; the text says which and why.
    case invalidTXT(String)
    /// A port outside 1...65535.
    case invalidPort(Int)
    /// libavahi-client refused an operation.
    case avahi(operation: String, code: Int32, message: String)

    /// The sentence to show the user.
    public var description: String {
        switch self {
        case .daemonNotRunning:
            "avahi-daemon is not running, so camo services on the network cannot be found; start it "
                + "(for example `service avahi-daemon start`), or connect to the agent by its address"
        case .systemBusNotRunning:
            "The D-Bus system bus is not running (no /run/dbus/system_bus_socket), so avahi-daemon cannot be "
                + "reached; start dbus and then avahi-daemon, or connect to the agent by its address"
        case .daemonGone:
            "avahi-daemon stopped while browsing; start it again, or connect to the agent by its address"
        case .invalidServiceName(let name):
            "\"\(name)\" cannot be a service name: it must be 1 to 63 bytes of UTF-8"
        case .invalidTXT(let reason):
            "Invalid TXT record: \(reason)"
        case .invalidPort(let port):
            "\(port) is not a TCP port (1...65535)"
        case .avahi(let operation, let code, let message):
            "\(operation) failed: \(message) (avahi error \(code))"
        }
    }
}

/// What an `AvahiPublisher` is doing, as its status stream reports it.
public enum PublisherStatus: Sendable, Equatable, CustomStringConvertible {
    /// Not started, or stopped.
    case stopped
    /// Waiting for avahi-daemon to appear on the system bus (the first time).
    case connecting
    /// The D-Bus system bus is not reachable; the publisher retries at its retry interval.
    case noSystemBus
    /// avahi-daemon went away (it sent goodbyes for our services); waiting for it to return.
    case daemonGone
    /// Connected; the host name or our services are being probed and announced (about 0.8 s).
    case registering
    /// Every service that is set is announced (also when none is set).
    case established
    /// A name collision: both services are published again under `to`. Reported once, then `registering`.
    case renamed(from: String, to: String)
    /// Something avahi refused; the publisher keeps the services set and tries again on the next change.
    case failed(String)

    /// A short phrase for logs and status output.
    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .connecting: "waiting for avahi-daemon"
        case .noSystemBus: "no D-Bus system bus (retrying)"
        case .daemonGone: "avahi-daemon gone (waiting for it to return)"
        case .registering: "registering"
        case .established: "established"
        case .renamed(let from, let to): "renamed \"\(from)\" to \"\(to)\" after a name collision"
        case .failed(let reason): "failed: \(reason)"
        }
    }
}

/// A service found by browsing, resolved, merged over the interfaces and protocols it was seen on.
public struct DiscoveredService: Sendable, Equatable, CustomStringConvertible {
    /// The instance name, e.g. "Desk camera".
    public var name: String
    /// The service type, e.g. "_camo._tcp".
    public var type: String
    /// The domain, "local" for mDNS.
    public var domain: String
    /// The host that serves it, e.g. "vm.local".
    public var hostName: String
    /// Every address it was resolved to (IPv4 dotted, IPv6 textual), first seen first.
    public var addresses: [String]
    /// The TCP port.
    public var port: Int
    /// The TXT record; a key without "=" has the value "". When a key repeats, the first one counts.
    public var txt: [String: String]
    /// The index of the network interface it was first seen on (1 is usually `lo`).
    public var interfaceIndex: Int

    /// A service as found (normally made by `AvahiBrowser`).
    public init(
        name: String, type: String, domain: String, hostName: String, addresses: [String], port: Int,
        txt: [String: String], interfaceIndex: Int
    ) {
        self.name = name
        self.type = type
        self.domain = domain
        self.hostName = hostName
        self.addresses = addresses
        self.port = port
        self.txt = txt
        self.interfaceIndex = interfaceIndex
    }

    /// The name, type, host, addresses and port on one line.
    public var description: String {
        "\"\(name)\" \(type) at \(hostName) [\(addresses.joined(separator: ", "))] port \(port)"
    }
}

/// A change seen by `AvahiBrowser.services()`.
public enum BrowseEvent: Sendable, Equatable {
    /// A service appeared (resolved).
    case added(DiscoveredService)
    /// A known service changed: TXT, port, host or addresses.
    case updated(DiscoveredService)
    /// A service went away (its last instance was removed); the value is how it was last seen.
    case removed(DiscoveredService)
    /// Browsing stopped because of this error (e.g. avahi-daemon went away); the stream ends after it.
    case failed(DiscoveryError)
}

/// Checks TXT entries for a DNS-SD TXT record (RFC 6763 §6): keys of printable ASCII without "=", not
/// empty, not repeated; each "key=value" at most 255 bytes.
func validateTXT(_ txt: [(String, String)]) throws(DiscoveryError) {
    var seen = Set<String>()
    for (key, value) in txt {
        guard !key.isEmpty else { throw .invalidTXT("an entry has an empty key") }
        guard key.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "=") }) else {
            throw .invalidTXT("key \"\(key)\" must be printable ASCII without \"=\"")
        }
        guard seen.insert(key.lowercased()).inserted else { throw .invalidTXT("key \"\(key)\" appears twice") }
        let size = key.utf8.count + 1 + value.utf8.count
        guard size <= 255 else {
            throw .invalidTXT("\"\(key)=...\" is \(size) bytes; an entry holds at most 255")
        }
    }
}
