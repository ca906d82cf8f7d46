import Foundation

/// One `_camo._tcp` record as the studio saw it: what it needs of a discovered service (CamoDiscovery's
/// `DiscoveredService`, which ``AgentLookup/record(_:)`` converts), so the merging below stays pure and testable.
///
/// An agent publishes the service on the network and, when it has a USB network-gadget link, once more on
/// that link with the TXT entry `link=usb`; mDNS then shows it once per interface and address family.
public struct AgentRecord: Sendable, Equatable {
    /// The instance name, e.g. "Desk camera".
    public var name: String
    /// The addresses it resolved to (IPv4 dotted, IPv6 textual; an IPv6 link-local one may carry `%zone`).
    public var addresses: [String]
    /// The TCP port.
    public var port: Int
    /// The TXT record (`v`, `id`, `name`, `model`, `sw`, and `link=usb` on the USB link).
    public var txt: [String: String]
    /// The index of the network interface it was seen on (0 or less: unknown).
    public var interfaceIndex: Int

    /// A record from its parts.
    public init(name: String, addresses: [String], port: Int, txt: [String: String], interfaceIndex: Int) {
        self.name = name
        self.addresses = addresses
        self.port = port
        self.txt = txt
        self.interfaceIndex = interfaceIndex
    }

    /// Published on the agent's USB link (TXT `link=usb`, compared without case).
    public var isUSB: Bool { txt["link"]?.lowercased() == "usb" }

    /// What identifies the agent: the TXT `id`, else (an agent that does not say) the service name.
    public var agentKey: String {
        if let id = txt["id"], !id.isEmpty { return id }
        return name
    }
}

/// How an agent can be reached: the `LINK` column of `camo-studio agents`.
public enum AgentLink: String, Sendable, Equatable, Codable, CustomStringConvertible {
    /// Only over the USB cable.
    case usb
    /// Only over the network.
    case network
    /// Both: the studio prefers the cable.
    case usbAndNetwork = "usb+network"

    /// `usb`, `network` or `usb+network`.
    public var description: String { rawValue }
}

/// One agent, merged from every record mDNS showed for it, with the addresses to try, best first.
public struct AgentRoute: Sendable, Equatable {
    /// The TXT `id`, else the service name (see ``AgentRecord/agentKey``).
    public var key: String
    /// The TXT `id` when the agent published one.
    public var id: String?
    /// The service name: a network record's when there is one (the USB link is a private point-to-point
    /// link, the network name is the one people see elsewhere), else the first record's.
    public var name: String
    /// Addresses on the USB link, in the order to try them.
    public var usbCandidates: [HostPort]
    /// Addresses on the network, in the order to try them.
    public var networkCandidates: [HostPort]
    /// The merged TXT: each key's value from the first network record that has it, else the first USB
    /// record's; without `link` (see ``isUSB`` and ``isNetwork``).
    public var txt: [String: String]

    /// Some record carried `link=usb`.
    public var isUSB: Bool
    /// Some record came without `link=usb`.
    public var isNetwork: Bool

    /// Every address to try: USB first, then the network.
    public var candidates: [HostPort] { usbCandidates + networkCandidates }

    /// `usb`, `network` or `usb+network`.
    public var link: AgentLink {
        switch (isUSB, isNetwork) {
        case (true, true): .usbAndNetwork
        case (true, false): .usb
        default: .network
        }
    }
}

/// Merges `_camo._tcp` records into one ``AgentRoute`` per agent. Pure: no sockets, no mDNS.
///
/// Records are grouped by ``AgentRecord/agentKey``. Each agent's candidates are its USB addresses first,
/// then its network addresses; within each, IPv4 before IPv6, and otherwise in the order seen. An IPv6
/// link-local address (`fe80::/10`) is only usable with its zone, so it gets the record's interface index
/// (`fe80::1%3`) unless it already has a zone; without a known interface it is left out. An address seen both
/// on USB and on the network counts as USB, once.
public enum AgentRoutes {
    /// One route per agent, sorted by name (then key).
    public static func merge(_ records: [AgentRecord]) -> [AgentRoute] {
        var order: [String] = []
        var groups: [String: [AgentRecord]] = [:]
        for record in records {
            let key = record.agentKey
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(record)
        }
        return order.compactMap { key in groups[key].map { route(key: key, records: $0) } }
            .sorted { ($0.name, $0.key) < ($1.name, $1.key) }
    }

    /// The route of the agent whose TXT `id` is `id` (or, for an agent without an id, whose service name is `id`).
    public static func route(forAgent id: String, in records: [AgentRecord]) -> AgentRoute? {
        merge(records.filter { $0.agentKey == id }).first
    }

    /// Merges the records of one agent.
    static func route(key: String, records: [AgentRecord]) -> AgentRoute {
        let usbRecords = records.filter(\.isUSB)
        let networkRecords = records.filter { !$0.isUSB }
        let usb = candidates(usbRecords, excluding: [])
        let network = candidates(networkRecords, excluding: Set(usb.map(\.description)))
        var txt: [String: String] = [:]
        for record in networkRecords + usbRecords {
            for (name, value) in record.txt where txt[name] == nil && name.lowercased() != "link" { txt[name] = value }
        }
        let id = records.lazy.compactMap { $0.txt["id"] }.first { !$0.isEmpty }
        return AgentRoute(
            key: key, id: id, name: (networkRecords.first ?? records[0]).name, usbCandidates: usb,
            networkCandidates: network, txt: txt, isUSB: !usbRecords.isEmpty, isNetwork: !networkRecords.isEmpty)
    }

    /// The usable addresses of `records`, IPv4 first, without duplicates or anything in `excluding`.
    static func candidates(_ records: [AgentRecord], excluding: Set<String>) -> [HostPort] {
        var v4: [HostPort] = []
        var v6: [HostPort] = []
        var seen = excluding
        for record in records {
            guard (1...65_535).contains(record.port) else { continue }
            for address in record.addresses {
                guard let host = usableHost(address, interfaceIndex: record.interfaceIndex) else { continue }
                let candidate = HostPort(host: host, port: record.port)
                guard seen.insert(candidate.description).inserted else { continue }
                if host.contains(":") { v6.append(candidate) } else { v4.append(candidate) }
            }
        }
        return v4 + v6
    }

    /// `address` as a host to connect to: an IPv6 link-local address gets `%interfaceIndex` (nil when the
    /// interface is unknown); anything else as it is. Nil for an empty address.
    static func usableHost(_ address: String, interfaceIndex: Int) -> String? {
        let trimmed = address.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        guard isIPv6LinkLocal(trimmed), !trimmed.contains("%") else { return trimmed }
        guard interfaceIndex > 0 else { return nil }
        return "\(trimmed)%\(interfaceIndex)"
    }

    /// Whether `address` is an IPv6 link-local address (`fe80::/10`: fe80 to febf).
    static func isIPv6LinkLocal(_ address: String) -> Bool {
        guard address.contains(":") else { return false }
        let first = address.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard first.count == 4, let value = UInt16(first, radix: 16) else { return false }
        return value & 0xFFC0 == 0xFE80
    }
}

/// Splits services the way CamoDiscovery's `AvahiBrowser` reports them back into one record per link.
///
/// The browser reports each service name once, merged over every interface and address family it was resolved
/// on: all the addresses, but the TXT of the instance resolved last and the interface index of the first. So
/// `link=usb` in a merged service only says where its newest instance is. But each `added` or `updated` event
/// comes from resolving one instance, and an address that first appears in an event is that instance's: it is on
/// the link that event's TXT names. Following the events from the start of browsing (``seen(_:)`` for each added
/// or updated service, ``removed(name:)`` for each removed one) therefore tells every address's link.
///
/// An interface index is known only for the addresses of the first event (the first instance's); an IPv6
/// link-local address first seen later has no known zone and is left out. Pure.
public struct AgentLinkTracker: Sendable, Equatable {
    private struct Address: Sendable, Equatable {
        var usb: Bool
        var interfaceIndex: Int
    }

    private struct Entry: Sendable, Equatable {
        var latest: AgentRecord
        var addresses: [String: Address]
    }

    private var entries: [String: Entry] = [:]

    /// Nothing seen yet.
    public init() {}

    /// A service was added or updated; `service` is the browser's merged view of it.
    public mutating func seen(_ service: AgentRecord) {
        let isFirst = entries[service.name] == nil
        var entry = entries[service.name] ?? Entry(latest: service, addresses: [:])
        for address in service.addresses where entry.addresses[address] == nil {
            entry.addresses[address] = Address(usb: service.isUSB, interfaceIndex: isFirst ? service.interfaceIndex : 0)
        }
        let current = Set(service.addresses)
        entry.addresses = entry.addresses.filter { current.contains($0.key) }
        entry.latest = service
        entries[service.name] = entry
    }

    /// The service called `name` went away (its last instance).
    public mutating func removed(name: String) {
        entries[name] = nil
    }

    /// One record per service and link, sorted by name: the USB link's addresses (TXT with `link=usb`) and the
    /// network's (TXT without `link`). Their addresses carry their zone where one is needed and known; their
    /// ``AgentRecord/interfaceIndex`` is 0.
    public var records: [AgentRecord] {
        entries.keys.sorted().flatMap { name -> [AgentRecord] in
            guard let entry = entries[name] else { return [] }
            var usb: [String] = []
            var network: [String] = []
            for address in entry.latest.addresses {
                guard let info = entry.addresses[address],
                      let host = AgentRoutes.usableHost(address, interfaceIndex: info.interfaceIndex) else { continue }
                if info.usb { usb.append(host) } else { network.append(host) }
            }
            var txt = entry.latest.txt
            txt["link"] = nil
            var records: [AgentRecord] = []
            if !usb.isEmpty {
                var usbTXT = txt
                usbTXT["link"] = "usb"
                records.append(AgentRecord(name: name, addresses: usb, port: entry.latest.port, txt: usbTXT, interfaceIndex: 0))
            }
            if !network.isEmpty || usb.isEmpty {
                records.append(AgentRecord(name: name, addresses: network, port: entry.latest.port, txt: txt, interfaceIndex: 0))
            }
            return records
        }
    }
}
