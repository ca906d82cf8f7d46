/// What kind of link a connection came over, decided by the local end's address only (never by anything the peer
/// says).
public enum LinkKind: Sendable, Equatable, CustomStringConvertible {
    /// This machine (127.0.0.0/8, ::1).
    case loopback
    /// A USB network gadget's interface: the cable to the studio.
    case usb(interface: String)
    /// Any other interface (or one that could not be found).
    case network

    /// Whether this is the USB link.
    public var isUSB: Bool {
        if case .usb = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .loopback: "loopback"
        case .usb(let interface): "usb (\(interface))"
        case .network: "network"
        }
    }
}

/// Decides the ``LinkKind`` of a connection from its local address: which interface holds that address, and
/// whether that interface is a USB gadget's (its sysfs uevent says `DEVTYPE=gadget`).
public struct LinkClassifier: Sendable {
    /// Reads sysfs.
    public var filesystem: any GadgetFilesystem
    /// The class directory of network interfaces.
    public var netClass = "/sys/class/net"
    /// The addresses of this machine's interfaces (getifaddrs by default).
    public var addresses: @Sendable () -> [InterfaceAddress]
    /// The name of an interface by index (for IPv6 scopes).
    public var interfaceName: @Sendable (UInt32) -> String?

    /// A classifier over the real system.
    public init(filesystem: any GadgetFilesystem = SystemGadgetFilesystem(),
                addresses: @escaping @Sendable () -> [InterfaceAddress] = InterfaceAddresses.all,
                interfaceName: @escaping @Sendable (UInt32) -> String? = InterfaceAddresses.name(ofIndex:)) {
        self.filesystem = filesystem
        self.addresses = addresses
        self.interfaceName = interfaceName
    }

    /// The link of a connection whose local address is `localAddress` (text, as NIO prints it) with IPv6 scope
    /// `scope` (0 when none).
    public func classify(localAddress: String, scope: UInt32 = 0) -> LinkKind {
        var address = localAddress.lowercased()
        if address.hasPrefix("::ffff:"), address.contains(".") { address.removeFirst(7) }
        if let percent = address.firstIndex(of: "%") { address = String(address[..<percent]) }
        if address.hasPrefix("127.") || address == "::1" { return .loopback }
        let interface: String?
        if scope != 0, let named = interfaceName(scope) {
            interface = named
        } else {
            // An address label ("usb0:avahi") names the interface before its colon.
            interface = addresses().first { $0.address.lowercased() == address }.map { String($0.interface.prefix { $0 != ":" }) }
        }
        guard let interface else { return .network }
        if interface == "lo" { return .loopback }
        return isGadget(interface) ? .usb(interface: interface) : .network
    }

    /// Whether `interface` is a USB gadget's network interface.
    public func isGadget(_ interface: String) -> Bool {
        guard !interface.isEmpty, interface != ".", interface != "..", !interface.contains("/"), let uevent = filesystem.read(netClass + "/" + interface + "/uevent") else { return false }
        return uevent.split(separator: "\n").contains("DEVTYPE=gadget")
    }

    /// The USB gadget interfaces present now.
    public func gadgetInterfaces() -> [String] {
        filesystem.list(netClass).filter(isGadget)
    }

    /// Every network interface present now: its name, index and whether it is a USB gadget's.
    public func interfaces(index: (String) -> UInt32 = InterfaceAddresses.index(of:)) -> [(name: String, index: UInt32, isGadget: Bool)] {
        filesystem.list(netClass).compactMap { name in
            let number = index(name)
            return number == 0 ? nil : (name, number, isGadget(name))
        }
    }
}
