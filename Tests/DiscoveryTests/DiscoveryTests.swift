import CamoDiscovery
import Foundation
import Logging
import Testing

/// CamoDiscovery against a real avahi-daemon on loopback (scripts/avahi-test), observed with python-zeroconf
/// (scripts/zeroconf-browse.py), an mDNS stack that does not go through avahi. The tests stop and start the
/// daemon and the bus, so they run one at a time; each leaves both running.
/// One comment from several parts (#expect and #require take a single comment).
func why(_ parts: String...) -> Comment { Comment(rawValue: parts.joined(separator: "\n")) }

@Suite(.serialized)
struct DiscoveryTests {
    /// Starts the system bus and avahi-daemon when they are not running; a failure fails the test with the
    /// script's output.
    init() throws {
        try avahiTest("up")
    }

    static let agentTXT: [(String, String)] = [("v", "1"), ("id", "3f2a9c"), ("name", "Desk camera"),
                                               ("model", "Linux"), ("sw", "0.4.0")]

    @Test func agentServiceIsSeenWithItsExactTXTAndUpdatedInPlace() async throws {
        let logs = LogCapture()
        let name = uniqueName("Agent")
        let observer = try await ZeroconfObserver()
        defer { observer.stop() }
        let publisher = AvahiPublisher(name: name, logger: logs.logger("publisher"))
        defer { publisher.stop() }
        let statuses = StatusRecorder(publisher)
        try publisher.start()
        let set = ContinuousClock.now
        try publisher.setAgentService(port: 47811, txt: Self.agentTXT)

        let seen = await observer.waitFor(within: .seconds(3)) {
            $0.isUpsert(of: name, CamoServiceType.agent) && $0.txt.count == 5
        }
        let diagnostics = { "zeroconf:\n\(observer.log)\nstatuses: \(statuses.text)\nlog:\n\(logs.text)" }
        let event = try #require(seen, why("zeroconf did not see \(name) within 3 s", diagnostics()))
        print("a: set → zeroconf \(event.event): \(event.at - set)")
        #expect(event.port == 47811, why(diagnostics()))
        #expect(event.txt == Dictionary(uniqueKeysWithValues: Self.agentTXT), why(diagnostics()))
        #expect(event.txtOrder == Self.agentTXT.map(\.0), why("TXT must go on the wire in the order given", diagnostics()))
        #expect(event.addresses.contains("127.0.0.1"), why(diagnostics()))
        #expect(await statuses.wait(within: .seconds(3)) { $0 == .established } != nil, why(diagnostics()))

        var newTXT = Self.agentTXT
        newTXT[2] = ("name", "Desk camera 2")
        let updated = ContinuousClock.now
        try publisher.setAgentService(port: 47811, txt: newTXT)
        let update = await observer.waitFor(within: .seconds(2)) {
            $0.event == "update" && $0.name == name && $0.txt["name"] == "Desk camera 2"
        }
        let after = { "zeroconf:\n\(observer.log)\nlog:\n\(logs.text)" }
        let updateEvent = try #require(update, why("zeroconf saw no update with the new TXT within 2 s", after()))
        print("a: TXT update → zeroconf update: \(updateEvent.at - updated)")
        #expect(updateEvent.txtOrder == newTXT.map(\.0), why(after()))
        #expect(observer.all.allSatisfy { !($0.event == "remove" && $0.name == name) }, why("a TXT update must not withdraw", after()))
        #expect(logs.count { $0.message.hasPrefix("Updated the TXT") } == 1, why(after()))
        #expect(publisher.currentName == name)
    }

    /// The USB link: the daemon here runs on loopback only, so loopback stands for the USB interface (the agent
    /// decides which interfaces are gadgets; the publisher only adds `link=usb` on the ones it is told).
    @Test func onAUSBLinkTheAgentServiceCarriesLinkUSBAndLosesItWhenTheLinkGoes() async throws {
        let logs = LogCapture()
        let name = uniqueName("USBAgent")
        let observer = try await ZeroconfObserver()
        defer { observer.stop() }
        let publisher = AvahiPublisher(name: name, logger: logs.logger("publisher"))
        defer { publisher.stop() }
        try publisher.start()
        try publisher.setAgentService(port: 47812, txt: Self.agentTXT)
        let loopback = Int32(if_nametoindex("lo"))
        try #require(loopback > 0, "no lo interface")
        let diagnostics = { "zeroconf:\n\(observer.log)\nlog:\n\(logs.text)" }
        let plain = await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: name, CamoServiceType.agent) && $0.txt.count == 5 }
        try #require(plain != nil, why("zeroconf did not see \(name) within 3 s", diagnostics()))

        publisher.setUSBInterfaces([loopback], allInterfaces: [loopback])
        let usb = await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: name, CamoServiceType.agent) && $0.txt["link"] == "usb" }
        let usbEvent = try #require(usb, why("zeroconf did not see link=usb within 3 s", diagnostics()))
        #expect(usbEvent.txtOrder == Self.agentTXT.map(\.0) + ["link"], why("link=usb comes after the usual entries", diagnostics()))
        #expect(usbEvent.port == 47812 && publisher.currentName == name, why(diagnostics()))

        publisher.setUSBInterfaces([], allInterfaces: [loopback])
        let back = await observer.waitFor(within: .seconds(3)) {
            $0.isUpsert(of: name, CamoServiceType.agent) && $0.txt.count == 5 && $0.txt["link"] == nil && $0.at > usbEvent.at
        }
        #expect(back != nil, why("without a USB link the TXT must lose link=usb", diagnostics()))
    }

    @Test func pairingServiceComesAndGoesWhileTheAgentServiceStays() async throws {
        let logs = LogCapture()
        let name = uniqueName("Pairing")
        let observer = try await ZeroconfObserver()
        defer { observer.stop() }
        let publisher = AvahiPublisher(name: name, logger: logs.logger("publisher"))
        defer { publisher.stop() }
        let statuses = StatusRecorder(publisher)
        try publisher.setAgentService(port: 47812, txt: Self.agentTXT)
        try publisher.start()
        let diagnostics = { "zeroconf:\n\(observer.log)\nstatuses: \(statuses.text)\nlog:\n\(logs.text)" }
        try #require(await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: name, CamoServiceType.agent) } != nil,
                     why(diagnostics()))

        let opened = ContinuousClock.now
        try publisher.setPairingService(port: 47813, txt: [("v", "1"), ("studio", "abc123")])
        let appeared = await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: name, CamoServiceType.pairing) }
        let pairing = try #require(appeared, why("_camopairing._tcp did not appear within 3 s", diagnostics()))
        print("b: setPairingService → zeroconf \(pairing.event): \(pairing.at - opened)")
        #expect(pairing.port == 47813)
        #expect(pairing.txt == ["v": "1", "studio": "abc123"])
        #expect(await statuses.wait(from: statuses.count - 1, within: .seconds(3)) { $0 == .established } != nil,
                why(diagnostics()))

        let closed = ContinuousClock.now
        publisher.removePairingService()
        let removed = await observer.waitFor(within: .seconds(2)) {
            $0.event == "remove" && $0.name == name && $0.type == CamoServiceType.pairing
        }
        let removal = try #require(removed, why("_camopairing._tcp was not removed within 2 s", diagnostics()))
        print("b: removePairingService → zeroconf remove: \(removal.at - closed)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(!observer.all.contains { $0.event == "remove" && $0.type == CamoServiceType.agent && $0.name == name },
                why("_camo._tcp must stay", diagnostics()))
        #expect(publisher.status == .established, why(diagnostics()))
    }

    @Test func servicesComeBackAfterTheDaemonRestarts() async throws {
        let logs = LogCapture()
        let name = uniqueName("Restart")
        let publisher = AvahiPublisher(name: name, logger: logs.logger("publisher"))
        defer { publisher.stop() }
        let statuses = StatusRecorder(publisher)
        try publisher.setAgentService(port: 47814, txt: Self.agentTXT)
        try publisher.setPairingService(port: 47815, txt: [("v", "1")])
        try publisher.start()
        let diagnostics = { "statuses: \(statuses.text)\nlog:\n\(logs.text)" }
        try #require(await statuses.wait(within: .seconds(5)) { $0 == .established } != nil, why(diagnostics()))

        defer { _ = try? avahiTest("up") }
        let mark = statuses.count
        let stopped = ContinuousClock.now
        try avahiTest("stop-daemon")
        let gone = await statuses.wait(from: mark, within: .seconds(3)) { $0 == .daemonGone }
        try #require(gone != nil, why("the publisher did not notice the daemon going away", diagnostics()))
        print("c: stop-daemon → .daemonGone: \(gone!.at - stopped)")

        try avahiTest("start-daemon")  // returns once the daemon answers GetState with "running"
        let answering = ContinuousClock.now
        let observer = try await ZeroconfObserver()
        defer { observer.stop() }
        let both = { "zeroconf:\n\(observer.log)" }
        let agent = await observer.waitFor(within: .seconds(5) - (ContinuousClock.now - answering)) {
            $0.isUpsert(of: name, CamoServiceType.agent)
        }
        let pairing = await observer.waitFor(within: .seconds(5) - (ContinuousClock.now - answering)) {
            $0.isUpsert(of: name, CamoServiceType.pairing)
        }
        #expect(agent != nil, why("_camo._tcp not seen within 5 s of the daemon answering", both(), diagnostics()))
        #expect(pairing != nil, why("_camopairing._tcp not seen within 5 s of the daemon answering", both(), diagnostics()))
        if let agent, let pairing {
            print("c: daemon answering → fresh zeroconf sees _camo \(agent.at - answering), _camopairing \(pairing.at - answering)")
        }
        #expect(await statuses.wait(from: mark, within: .seconds(3)) { $0 == .established } != nil, why(diagnostics()))
        #expect(logs.count { $0.message.contains("went away") } == 1, why(diagnostics()))
        #expect(publisher.currentName == name)
    }

    @Test func aSecondPublisherWithTheSameNameRenamesBothServices() async throws {
        let logs = LogCapture()
        let name = uniqueName("Twin")
        let observer = try await ZeroconfObserver()
        defer { observer.stop() }
        let first = AvahiPublisher(name: name, logger: logs.logger("first"))
        defer { first.stop() }
        let second = AvahiPublisher(name: name, logger: logs.logger("second"))
        defer { second.stop() }
        let firstStatuses = StatusRecorder(first)
        let secondStatuses = StatusRecorder(second)
        let diagnostics = {
            "zeroconf:\n\(observer.log)\nfirst: \(firstStatuses.text)\nsecond: \(secondStatuses.text)\nlog:\n\(logs.text)"
        }
        // Different ports, as two agents on one host have: identical records would not collide in avahi.
        for (publisher, port) in [(first, 47816), (second, 47826)] {
            try publisher.setAgentService(port: port, txt: Self.agentTXT)
            try publisher.setPairingService(port: port + 1, txt: [("v", "1")])
        }
        try first.start()
        try #require(await firstStatuses.wait(within: .seconds(5)) { $0 == .established } != nil, why(diagnostics()))
        try second.start()
        try #require(await secondStatuses.wait(within: .seconds(5)) { $0 == .established } != nil, why(diagnostics()))

        let renamed = second.currentName
        #expect(renamed == "\(name) #2", why(diagnostics()))
        #expect(first.currentName == name)
        #expect(secondStatuses.all.contains { $0.status == .renamed(from: name, to: renamed) }, why(diagnostics()))
        for type in [CamoServiceType.agent, CamoServiceType.pairing] {
            for instance in [name, renamed] {
                let seen = await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: instance, type) }
                #expect(seen != nil, why("zeroconf did not see \(instance) \(type)", diagnostics()))
            }
        }
        #expect(logs.count { $0.level == .notice && $0.message.contains("is taken") } == 1, why(diagnostics()))

        // The new name is kept when the daemon restarts.
        defer { _ = try? avahiTest("up") }
        let marks = (firstStatuses.count, secondStatuses.count)
        try avahiTest("restart")
        #expect(await firstStatuses.wait(from: marks.0, within: .seconds(5)) { $0 == .established } != nil, why(diagnostics()))
        #expect(await secondStatuses.wait(from: marks.1, within: .seconds(5)) { $0 == .established } != nil, why(diagnostics()))
        #expect(second.currentName == renamed, why(diagnostics()))
        #expect(first.currentName == name, why(diagnostics()))
    }

    @Test func aNetworkCollisionRenamesBothServices() async throws {
        let logs = LogCapture()
        let name = uniqueName("Peer")
        let observer = try await ZeroconfObserver()
        defer { observer.stop() }
        // Another mDNS responder (python-zeroconf on 127.0.0.1, not through avahi) owns "<name>._camo._tcp".
        let peer = try ZeroconfResponder(name: name, type: CamoServiceType.agent, port: 40001)
        defer { peer.stop() }
        try #require(await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: name, CamoServiceType.agent) } != nil,
                     why("the peer's service never appeared", observer.log))

        let publisher = AvahiPublisher(name: name, logger: logs.logger("publisher"))
        defer { publisher.stop() }
        let statuses = StatusRecorder(publisher)
        try publisher.setPairingService(port: 47831, txt: [("v", "1")])
        try publisher.setAgentService(port: 47830, txt: Self.agentTXT)
        let started = ContinuousClock.now
        try publisher.start()
        let diagnostics = { "zeroconf:\n\(observer.log)\nstatuses: \(statuses.text)\nlog:\n\(logs.text)" }
        let renamed = "\(name) #2"
        let established = await statuses.wait(within: .seconds(5)) { $0 == .established }
        try #require(established != nil, why(diagnostics()))
        print("d: network collision → both re-published as #2, .established after \(established!.at - started)")
        #expect(publisher.currentName == renamed, why(diagnostics()))
        #expect(statuses.all.contains { $0.status == .renamed(from: name, to: renamed) }, why(diagnostics()))
        for type in [CamoServiceType.agent, CamoServiceType.pairing] {
            let seen = await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: renamed, type) && $0.port != nil }
            #expect(seen != nil, why("zeroconf did not see \(renamed) \(type)", diagnostics()))
        }
        #expect(logs.count { $0.message.contains("is taken (another host") } == 1, why(diagnostics()))
    }

    @Test func withoutTheBusThePublisherRetriesCalmlyAndRecovers() async throws {
        let logs = LogCapture()
        let name = uniqueName("NoBus")
        let publisher = AvahiPublisher(name: name, logger: logs.logger("publisher"), retryInterval: .milliseconds(250))
        defer { publisher.stop() }
        let statuses = StatusRecorder(publisher)
        try publisher.setAgentService(port: 47818, txt: Self.agentTXT)
        try publisher.start()
        let diagnostics = { "statuses: \(statuses.text)\nlog:\n\(logs.text)" }
        try #require(await statuses.wait(within: .seconds(5)) { $0 == .established } != nil, why(diagnostics()))

        defer { _ = try? avahiTest("up") }
        let mark = statuses.count
        try avahiTest("kill-bus")
        let noBus = await statuses.wait(from: mark, within: .seconds(3)) { $0 == .noSystemBus }
        try #require(noBus != nil, why(diagnostics()))

        // A browser cannot start now, and says why.
        let browseError = await #expect(throws: DiscoveryError.systemBusNotRunning) {
            _ = try await AvahiBrowser.browse(type: CamoServiceType.agent, for: .milliseconds(100), logger: logs.logger("browser"))
        }
        #expect("\(browseError.map { "\($0)" } ?? "")".contains("D-Bus system bus is not running"))

        let retriesBefore = logs.count { $0.message == "Avahi client retry failed" }
        try await Task.sleep(for: .seconds(2))
        let retries = logs.count { $0.message == "Avahi client retry failed" } - retriesBefore
        print("e: retries in 2 s at a 250 ms interval: \(retries)")
        #expect((5...10).contains(retries), why("expected about 8 retries in 2 s, not a busy loop", diagnostics()))
        #expect(logs.count { $0.level == .warning && $0.message.hasPrefix("Cannot reach avahi-daemon") } == 1,
                why("the outage is logged once", diagnostics()))

        try avahiTest("start-bus")
        try avahiTest("start-daemon")
        let answering = ContinuousClock.now
        let back = await statuses.wait(from: mark, within: .seconds(5)) { $0 == .established }
        try #require(back != nil, why("not published again within 5 s of the daemon's return", diagnostics()))
        print("e: bus + daemon back → .established: \(back!.at - answering)")
        let observer = try await ZeroconfObserver(types: [CamoServiceType.agent])
        defer { observer.stop() }
        #expect(await observer.waitFor(within: .seconds(3)) { $0.isUpsert(of: name, CamoServiceType.agent) } != nil,
                why(observer.log, diagnostics()))
    }

    @Test func browserFindsAServicePublishedByAvahiPublish() async throws {
        let logs = LogCapture()
        let name = uniqueName("Other")
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/avahi-publish")
        other.arguments = ["-s", name, CamoServiceType.agent, "47819", "k=v", "v=1"]
        other.standardOutput = FileHandle.nullDevice
        other.standardError = FileHandle.nullDevice
        try other.run()
        defer {
            if other.isRunning { kill(other.processIdentifier, SIGKILL) }
            other.waitUntilExit()
        }

        let browser = AvahiBrowser(type: CamoServiceType.agent, logger: logs.logger("browser"))
        defer { browser.stop() }
        try browser.start()
        let events = browser.services()
        let started = ContinuousClock.now
        var found: DiscoveredService?
        var removed: DiscoveredService?
        var killed = started
        let watchdog = Task {
            try await Task.sleep(for: .seconds(6))
            browser.stop()  // ends the stream
        }
        defer { watchdog.cancel() }
        for await event in events {
            switch event {
            case .added(let service) where service.name == name:
                found = service
                print("f: avahi-publish started → browser .added: \(ContinuousClock.now - started)")
                killed = .now
                kill(other.processIdentifier, SIGKILL)  // the daemon withdraws a vanished client's services
            case .removed(let service) where service.name == name:
                removed = service
                print("f: avahi-publish killed → browser .removed: \(ContinuousClock.now - killed)")
            default:
                break
            }
            if removed != nil { break }
        }
        let service = try #require(found, why("the browser did not find \(name)", logs.text))
        #expect(service.type == CamoServiceType.agent)
        #expect(service.port == 47819)
        #expect(service.txt == ["k": "v", "v": "1"])
        #expect(service.addresses.contains("127.0.0.1"), "addresses: \(service.addresses)")
        #expect(service.domain == "local")
        #expect(removed?.name == name, "the browser did not report the removal")

        // The one-shot form, against a service that stays.
        let publisher = AvahiPublisher(name: uniqueName("Browsed"), logger: logs.logger("publisher"))
        defer { publisher.stop() }
        let statuses = StatusRecorder(publisher)
        try publisher.setAgentService(port: 47820, txt: Self.agentTXT)
        try publisher.start()
        try #require(await statuses.wait(within: .seconds(5)) { $0 == .established } != nil)
        let list = try await AvahiBrowser.browse(type: CamoServiceType.agent, for: .milliseconds(500), logger: logs.logger("browse"))
        let mine = try #require(list.first { $0.name == publisher.currentName }, "browse returned \(list)")
        #expect(mine.txt == Dictionary(uniqueKeysWithValues: Self.agentTXT))
        #expect(mine.port == 47820)
        #expect(mine.addresses.contains("127.0.0.1"))
        #expect(list.filter { $0.name == publisher.currentName }.count == 1, "one entry per name")
    }

    @Test func browsingWithoutTheDaemonThrowsAClearError() async throws {
        let logs = LogCapture()
        let browser = AvahiBrowser(type: CamoServiceType.pairing, logger: logs.logger("browser"))
        defer { browser.stop() }
        try browser.start()
        let events = browser.services()
        defer { _ = try? avahiTest("up") }
        try avahiTest("stop-daemon")
        // A running browser reports the daemon's departure, and its stream ends.
        var last: BrowseEvent?
        for await event in events { last = event }
        #expect(last == .failed(.daemonGone), why(logs.text))

        let error = await #expect(throws: DiscoveryError.daemonNotRunning) {
            _ = try await AvahiBrowser.browse(type: CamoServiceType.agent, for: .milliseconds(200), logger: logs.logger("browse"))
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("avahi-daemon is not running"), "\(text)")
        #expect(text.contains("connect to the agent by its address"), "\(text)")
    }

    @Test func invalidTXTNamesAndPortsAreRefused() throws {
        let publisher = AvahiPublisher(name: uniqueName("Invalid"), logger: Logger(label: "test"))
        #expect(throws: DiscoveryError.self) { try publisher.setAgentService(port: 47821, txt: [("k", String(repeating: "x", count: 254))]) }
        #expect(throws: Never.self) { try publisher.setAgentService(port: 47821, txt: [("k", String(repeating: "x", count: 253))]) }
        #expect(throws: DiscoveryError.self) { try publisher.setAgentService(port: 47821, txt: [("", "x")]) }
        #expect(throws: DiscoveryError.self) { try publisher.setAgentService(port: 47821, txt: [("a=b", "x")]) }
        #expect(throws: DiscoveryError.self) { try publisher.setAgentService(port: 47821, txt: [("v", "1"), ("V", "2")]) }
        #expect(throws: DiscoveryError.invalidPort(0)) { try publisher.setAgentService(port: 0, txt: []) }
        let long = AvahiPublisher(name: String(repeating: "n", count: 64), logger: Logger(label: "test"))
        #expect(throws: DiscoveryError.invalidServiceName(String(repeating: "n", count: 64))) { try long.start() }
    }
}
