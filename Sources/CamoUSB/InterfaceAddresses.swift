import CNetInterface
import Foundation

/// One address of a network interface, as getifaddrs(3) reports it.
public struct InterfaceAddress: Sendable, Equatable {
    /// The interface name.
    public var interface: String
    /// The address in its usual text form (IPv6 without a scope).
    public var address: String
    /// The interface index.
    public var index: UInt32

    /// An address of `interface` (index `index`).
    public init(interface: String, address: String, index: UInt32) {
        self.interface = interface
        self.address = address
        self.index = index
    }
}

/// The thin wrapper over getifaddrs(3), if_indextoname(3) and the address ioctls: the only place in CamoUSB with
/// C pointers.
public enum InterfaceAddresses {
    /// Every IPv4 and IPv6 address of every interface.
    public static func all() -> [InterfaceAddress] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var result: [InterfaceAddress] = []
        var cursor = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let sockaddr = entry.pointee.ifa_addr, let name = entry.pointee.ifa_name else { continue }
            let family = Int32(sockaddr.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let ok: Bool
            if family == AF_INET {
                ok = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    var address = inet.pointee.sin_addr
                    return inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil
                }
            } else {
                ok = sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet6 in
                    var address = inet6.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil
                }
            }
            guard ok else { continue }
            // getifaddrs names an IPv4 address by its label when it has one ("usb0:avahi" for avahi-autoipd's).
            let interface = String(String(cString: name).prefix { $0 != ":" })
            result.append(InterfaceAddress(
                interface: interface, address: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                index: if_nametoindex(interface)))
        }
        return result
    }

    /// The name of the interface with index `index`.
    public static func name(ofIndex index: UInt32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &buffer) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The index of the interface called `name` (0 when there is none).
    public static func index(of name: String) -> UInt32 {
        if_nametoindex(name)
    }

    /// Gives `interface` the IPv4 address `address` with a /`prefix` netmask and brings it up.
    public static func configureIPv4(interface: String, address: String, prefix: Int) throws(GadgetFilesystemError) {
        var parsed = in_addr()
        guard inet_pton(AF_INET, address, &parsed) == 1, (0...32).contains(prefix) else {
            throw GadgetFilesystemError("configure", "\(interface) \(address)/\(prefix)", EINVAL)
        }
        let mask = prefix == 0 ? UInt32(0) : UInt32.max << UInt32(32 - prefix)
        let result = camo_netif_set_ipv4(interface, parsed.s_addr, mask.bigEndian)
        guard result == 0 else { throw GadgetFilesystemError("set the IPv4 address of", interface, result) }
        let up = camo_netif_set_up(interface)
        guard up == 0 else { throw GadgetFilesystemError("bring up", interface, up) }
    }
}
