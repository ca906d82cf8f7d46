import CamoStudioKit
import Testing

@Suite("Agent routes: one entry per agent, the cable first")
struct AgentRoutesTests {
    private func txt(_ id: String?, usb: Bool = false) -> [String: String] {
        var txt = ["v": "1", "name": "Desk", "model": "Linux", "sw": "0.4.0"]
        txt["id"] = id
        if usb { txt["link"] = "usb" }
        return txt
    }

    @Test("an agent seen on USB and the network is one entry: USB first, IPv4 before IPv6, zones on link-local")
    func usbAndNetwork() throws {
        let records = [
            AgentRecord(name: "Desk", addresses: ["fe80::aa:1", "192.168.1.5"], port: 5000, txt: txt("A1"), interfaceIndex: 2),
            AgentRecord(name: "Desk", addresses: ["2001:db8::5"], port: 5000, txt: txt("A1"), interfaceIndex: 2),
            AgentRecord(name: "Desk", addresses: ["fe80::63:1"], port: 5000, txt: txt("A1", usb: true), interfaceIndex: 7),
            AgentRecord(name: "Desk", addresses: ["169.254.3.1"], port: 5000, txt: txt("A1", usb: true), interfaceIndex: 7),
        ]
        let routes = AgentRoutes.merge(records)
        #expect(routes.count == 1)
        let route = try #require(routes.first)
        #expect(route.key == "A1" && route.id == "A1" && route.name == "Desk")
        #expect(route.isUSB && route.isNetwork && route.link == .usbAndNetwork && route.link.description == "usb+network")
        #expect(route.candidates.map(\.description) == [
            "169.254.3.1:5000", "[fe80::63:1%7]:5000",
            "192.168.1.5:5000", "[fe80::aa:1%2]:5000", "[2001:db8::5]:5000",
        ])
        #expect(route.usbCandidates.count == 2 && route.networkCandidates.count == 3)
        #expect(route.txt["link"] == nil && route.txt["sw"] == "0.4.0")
    }

    @Test("reachability: only USB, only the network")
    func singleLinks() {
        let usb = AgentRoutes.merge([AgentRecord(name: "Pi", addresses: ["169.254.9.5"], port: 47800, txt: txt("P", usb: true), interfaceIndex: 4)])
        #expect(usb.map(\.link) == [.usb])
        #expect(usb.first?.candidates == [HostPort(host: "169.254.9.5", port: 47800)])
        let network = AgentRoutes.merge([AgentRecord(name: "Pi", addresses: ["10.0.0.9"], port: 47800, txt: txt("P"), interfaceIndex: 2)])
        #expect(network.map(\.link) == [.network])
        #expect(network.first?.link.rawValue == "network")
        // TXT values are compared without case; another link value is the network.
        let upper = AgentRoutes.merge([AgentRecord(name: "Pi", addresses: ["169.254.9.5"], port: 1, txt: ["id": "P", "link": "USB"], interfaceIndex: 4)])
        #expect(upper.first?.link == .usb)
        let other = AgentRoutes.merge([AgentRecord(name: "Pi", addresses: ["10.0.0.9"], port: 1, txt: ["id": "P", "link": "wifi"], interfaceIndex: 4)])
        #expect(other.first?.link == .network)
    }

    @Test("keyed by TXT id, else the service name; different ids stay apart even under one name")
    func keys() {
        let records = [
            AgentRecord(name: "Cam", addresses: ["10.0.0.1"], port: 1, txt: txt("X"), interfaceIndex: 2),
            AgentRecord(name: "Cam #2", addresses: ["169.254.1.1"], port: 1, txt: txt("X", usb: true), interfaceIndex: 3),
            AgentRecord(name: "Cam", addresses: ["10.0.0.2"], port: 1, txt: txt("Y"), interfaceIndex: 2),
            AgentRecord(name: "Old", addresses: ["10.0.0.3"], port: 1, txt: ["v": "1"], interfaceIndex: 2),
            AgentRecord(name: "Old", addresses: ["169.254.1.3"], port: 1, txt: ["v": "1", "id": "", "link": "usb"], interfaceIndex: 5),
        ]
        let routes = AgentRoutes.merge(records)
        #expect(routes.map(\.key) == ["X", "Y", "Old"])
        #expect(routes.map(\.name) == ["Cam", "Cam", "Old"], "the network record's name")
        #expect(routes.map(\.link) == [.usbAndNetwork, .network, .usbAndNetwork])
        #expect(routes[2].id == nil)
        #expect(AgentRoutes.route(forAgent: "X", in: records)?.candidates.map(\.host) == ["169.254.1.1", "10.0.0.1"])
        #expect(AgentRoutes.route(forAgent: "Old", in: records)?.candidates.count == 2)
        #expect(AgentRoutes.route(forAgent: "nobody", in: records) == nil)
    }

    @Test("link-local IPv6 without a known interface is left out; a zone given is kept; duplicates count once, as USB")
    func addresses() throws {
        let records = [
            AgentRecord(name: "A", addresses: ["fe80::1", "FE80::2%eth0", "febf::3", "fec0::4", "192.168.1.5", ""], port: 80,
                        txt: txt("A"), interfaceIndex: 0),
            AgentRecord(name: "A", addresses: ["192.168.1.5", "169.254.7.7"], port: 80, txt: txt("A", usb: true), interfaceIndex: 6),
            AgentRecord(name: "A", addresses: ["169.254.7.7"], port: 80, txt: txt("A", usb: true), interfaceIndex: 6),
            AgentRecord(name: "A", addresses: ["10.1.1.1"], port: 0, txt: txt("A"), interfaceIndex: 2),   // no port: unusable
        ]
        let route = try #require(AgentRoutes.merge(records).first)
        #expect(route.usbCandidates.map(\.description) == ["192.168.1.5:80", "169.254.7.7:80"])
        #expect(route.networkCandidates.map(\.description) == ["[FE80::2%eth0]:80", "[fec0::4]:80"])
    }

    @Test("a scoped IPv6 address parses and prints as [addr%zone]:port")
    func scopedHostPort() throws {
        let parsed = try #require(HostPort(parsing: "[fe80::1%camo3a1105]:47800"))
        #expect(parsed.host == "fe80::1%camo3a1105" && parsed.port == 47800)
        #expect(parsed.description == "[fe80::1%camo3a1105]:47800")
        #expect(HostPort(parsing: "[fe80::1%7]:1")?.description == "[fe80::1%7]:1")
    }

    @Test("no records, no routes")
    func empty() {
        #expect(AgentRoutes.merge([]).isEmpty)
    }
}

@Suite("Agent link tracker: the browser's merged services split back into links")
struct AgentLinkTrackerTests {
    private func merged(_ addresses: [String], usb: Bool, interface: Int = 2, name: String = "Desk") -> AgentRecord {
        var txt = ["v": "1", "id": "A1", "name": name, "sw": "0.4.0"]
        if usb { txt["link"] = "usb" }
        return AgentRecord(name: name, addresses: addresses, port: 47800, txt: txt, interfaceIndex: interface)
    }

    @Test("each address takes the link of the event it first appeared in, whatever the latest TXT says")
    func attribution() throws {
        var tracker = AgentLinkTracker()
        tracker.seen(merged(["192.168.1.5"], usb: false, interface: 2))                                      // the network instance
        tracker.seen(merged(["192.168.1.5", "fe80::aa:1"], usb: false, interface: 2))                       // its IPv6
        tracker.seen(merged(["192.168.1.5", "fe80::aa:1", "169.254.3.1"], usb: true, interface: 2))         // the USB instance
        tracker.seen(merged(["192.168.1.5", "fe80::aa:1", "169.254.3.1"], usb: false, interface: 2))        // the network one again
        let records = tracker.records
        #expect(records.count == 2)
        let usb = try #require(records.first { $0.isUSB })
        let network = try #require(records.first(where: { !$0.isUSB }))
        #expect(usb.addresses == ["169.254.3.1"])
        #expect(usb.txt["link"] == "usb" && usb.txt["id"] == "A1")
        // The first event's interface is the first instance's; a link-local address seen later has no known zone.
        #expect(network.addresses == ["192.168.1.5"])
        #expect(network.txt["link"] == nil)
        let route = try #require(AgentRoutes.merge(records).first)
        #expect(route.link == .usbAndNetwork)
        #expect(route.candidates.map(\.description) == ["169.254.3.1:47800", "192.168.1.5:47800"])
    }

    @Test("the first event's link-local address gets its interface; addresses that leave are forgotten; removal")
    func firstInterfaceAndRemoval() throws {
        var tracker = AgentLinkTracker()
        tracker.seen(merged(["fe80::63:1"], usb: true, interface: 9))
        tracker.seen(merged(["fe80::63:1", "169.254.3.1"], usb: true, interface: 9))
        #expect(tracker.records.map(\.addresses) == [["fe80::63:1%9", "169.254.3.1"]])
        #expect(AgentRoutes.merge(tracker.records).first?.link == .usb)
        // The cable is pulled: the USB addresses go, the network's come.
        tracker.seen(merged(["10.0.0.5"], usb: false, interface: 9))
        #expect(tracker.records.count == 1)
        #expect(tracker.records.first?.addresses == ["10.0.0.5"])
        #expect(AgentRoutes.merge(tracker.records).first?.link == .network)
        tracker.seen(merged([], usb: false, name: "Other"))
        #expect(tracker.records.map(\.name) == ["Desk", "Other"], "a service without addresses is still listed")
        tracker.removed(name: "Desk")
        #expect(tracker.records.map(\.name) == ["Other"])
        tracker.removed(name: "Desk")
        #expect(tracker.records.count == 1)
    }

    @Test("seen again after removal, an agent starts afresh")
    func afresh() {
        var tracker = AgentLinkTracker()
        tracker.seen(merged(["169.254.3.1"], usb: true))
        tracker.removed(name: "Desk")
        tracker.seen(merged(["169.254.3.1"], usb: false))
        #expect(AgentRoutes.merge(tracker.records).first?.link == .network)
    }
}
