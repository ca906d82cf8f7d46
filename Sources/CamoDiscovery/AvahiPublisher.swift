import Logging

/// Publishes an agent's DNS-SD services through avahi-daemon: `_camo._tcp` while the agent runs and
/// `_camopairing._tcp` while a pairing window is open, under one instance name.
///
/// It owns an avahi event loop thread and one D-Bus client, with one entry group per service, so the pairing
/// service can be withdrawn alone. It never gives up: with no avahi-daemon it waits for one, with no system
/// bus it retries every `retryInterval`, and when the daemon restarts it publishes again. A name collision
/// (another host, or another client of the same daemon, has the name) renames both services with avahi's
/// next alternative ("Desk cam" → "Desk cam #2"); the new name is kept across daemon restarts.
///
/// ```swift
/// let publisher = AvahiPublisher(name: "Desk camera", logger: logger)
/// try publisher.setAgentService(port: 47800, txt: [("v", "1"), ("id", identity)])
/// try publisher.start()
/// for await status in publisher.statusUpdates() { print(status) }
/// ```
public final class AvahiPublisher: Sendable {
    private let engine: PublisherEngine

    /// A publisher for instance `name`; nothing happens until `start()`.
    /// - Parameter retryInterval: how often to try the D-Bus system bus again while it is missing.
    public init(name: String, logger: Logger, retryInterval: Duration = .seconds(1)) {
        engine = PublisherEngine(name: name, logger: logger, retryInterval: retryInterval)
    }

    deinit { engine.stop() }

    /// Starts the loop thread and connects. It does not fail because avahi-daemon or the bus is missing (it
    /// waits and retries); it throws only for an invalid name or when the thread cannot start.
    public func start() throws(DiscoveryError) { try engine.start() }

    /// Withdraws every service, disconnects and joins the loop thread. The status streams end (the last
    /// status is `.stopped`). The publisher can be started again.
    public func stop() { engine.stop() }

    /// Publishes (or updates) `_camo._tcp` on `port` with `txt` in this order. When only the TXT changed, it
    /// is updated in place (browsers see an update, not a removal). Works before `start()` too.
    public func setAgentService(port: Int, txt: [(String, String)]) throws(DiscoveryError) {
        try engine.set(.agent, port: port, txt: txt)
    }

    /// Withdraws `_camo._tcp` at once.
    public func removeAgentService() { engine.remove(.agent) }

    /// Says which interfaces are USB links to a studio (kernel interface indexes), out of all of this machine's
    /// interfaces. While there is one, `_camo._tcp` is published per interface, with `link=usb` added to its TXT on
    /// the USB links; with none it is published once on every interface, as before.
    public func setUSBInterfaces(_ usb: [Int32], allInterfaces: [Int32]) {
        engine.setLinks(usb.isEmpty ? nil : LinkInterfaces(all: Array(Set(allInterfaces).union(usb)).sorted(), usb: Set(usb)))
    }

    /// Publishes (or updates) `_camopairing._tcp` on `port` with `txt`, under the same name as the agent.
    public func setPairingService(port: Int, txt: [(String, String)]) throws(DiscoveryError) {
        try engine.set(.pairing, port: port, txt: txt)
    }

    /// Withdraws `_camopairing._tcp` at once (goodbye packets); `_camo._tcp` stays.
    public func removePairingService() { engine.remove(.pairing) }

    /// The instance name in use: the name given, or the one avahi chose after a collision.
    public var currentName: String { engine.runner.withState { $0.name } }

    /// The latest status.
    public var status: PublisherStatus { engine.runner.withState { $0.status } }

    /// The status now, then every change, until `stop()` (also when subscribed before `start()`).
    public func statusUpdates() -> AsyncStream<PublisherStatus> { engine.statusUpdates() }
}

/// The two services a publisher can hold.
enum ServiceKind: CaseIterable, Sendable {
    case agent, pairing

    var type: String { self == .agent ? CamoServiceType.agent : CamoServiceType.pairing }
}

/// One service and its entry group. Only touched with the loop lock held.
final class ServiceSlot {
    let kind: ServiceKind
    var wanted = false
    var port: UInt16 = 0
    var txt: [(String, String)] = []
    var group: AvahiEntryGroupHandle?
    var groupState: AvahiGroupEvent?
    /// What is in the group now (nil when empty).
    var publishedName: String?
    var publishedPort: UInt16 = 0
    var publishedTXT: [(String, String)] = []
    /// Per-interface publishing (the agent's service while a USB link exists); nil: every interface at once.
    var links: LinkInterfaces?
    var publishedLinks: LinkInterfaces?

    init(kind: ServiceKind) { self.kind = kind }

    func forgetGroup() {
        group = nil
        groupState = nil
        publishedName = nil
    }
}

/// The publisher's state machine. Everything but the runner's state is touched only with the loop lock held
/// (the loop thread holds it while it runs callbacks); user code never runs with it held.
final class PublisherEngine: @unchecked Sendable {
    private enum Phase { case stopped, noBus, connecting, daemonGone, hostRegistering, running }

    struct Observed {
        var status: PublisherStatus = .stopped
        var name: String
    }

    /// The loop thread, start and stop, what other threads read (`Observed`) and the status streams.
    let runner: AvahiRunner<Observed, PublisherStatus>
    private let logger: Logger
    private let retryInterval: Duration
    private var loop: AvahiLoop { runner.loop }

    // Loop-lock state.
    private var name: String
    private let slots = ServiceKind.allCases.map(ServiceSlot.init)
    private var client: AvahiClientHandle?
    private var phase = Phase.stopped
    private var daemonLost = false
    private var busOutage = false
    private var retryTimer: AvahiLoopTimer?
    private var failure: String?
    private var connectAttempts = 0

    init(name: String, logger: Logger, retryInterval: Duration) {
        self.name = name
        self.logger = logger
        self.retryInterval = max(retryInterval, .milliseconds(10))
        runner = AvahiRunner(state: Observed(name: name))
    }

    private func slot(_ kind: ServiceKind) -> ServiceSlot { slots[kind == .agent ? 0 : 1] }

    // MARK: Public operations (any thread but the loop's)

    func start() throws(DiscoveryError) {
        var startName = ""
        let started = try runner.start(
            connect: { () throws(DiscoveryError) in
                startName = name
                guard avahiIsValidServiceName(name) else { throw .invalidServiceName(name) }
                phase = .connecting
                daemonLost = false
                busOutage = false
                failure = nil
                connect()
                updateStatus()
            },
            teardown: { teardown() })
        if started { logger.debug("Avahi publisher started", metadata: ["name": "\(startName)"]) }
    }

    func stop() {
        if runner.stop(teardown: { teardown() }) { logger.debug("Avahi publisher stopped") }
    }

    func set(_ kind: ServiceKind, port: Int, txt: [(String, String)]) throws(DiscoveryError) {
        guard (1...65535).contains(port) else { throw .invalidPort(port) }
        try validateTXT(txt)
        loop.withLock {
            let slot = slot(kind)
            slot.wanted = true
            slot.port = UInt16(port)
            slot.txt = txt
            publishAll()
            updateStatus()
        }
    }

    func setLinks(_ links: LinkInterfaces?) {
        loop.withLock {
            let slot = slot(.agent)
            guard slot.links != links else { return }
            slot.links = links
            if let links {
                logger.info("Publishing \(ServiceKind.agent.type) per interface, with link=usb on the USB link", metadata: ["usb": "\(links.usb.sorted())"])
            }
            publishAll()
            updateStatus()
        }
    }

    func remove(_ kind: ServiceKind) {
        loop.withLock {
            let slot = slot(kind)
            guard slot.wanted else { return }
            slot.wanted = false
            if let group = slot.group, !group.isEmpty {
                group.reset()
                logger.info("Withdrew \(kind.type)", metadata: ["name": "\(slot.publishedName ?? name)"])
            }
            slot.publishedName = nil
            slot.groupState = .uncommitted
            updateStatus()
        }
    }

    func statusUpdates() -> AsyncStream<PublisherStatus> {
        runner.subscribe { observed, continuation in
            continuation.yield(observed.status)
            return true
        }
    }

    // MARK: Loop-lock side

    /// Frees the client (the daemon withdraws our groups), the retry timer; status `.stopped`.
    private func teardown() {
        retryTimer?.free()
        retryTimer = nil
        client?.free()
        client = nil
        for slot in slots { slot.forgetGroup() }
        phase = .stopped
        updateStatus()
    }

    /// A new NO_FAIL client; when even that fails (no system bus), retry from a timer.
    private func connect() {
        guard phase != .stopped, client == nil else { return }
        connectAttempts += 1
        let result = AvahiClientHandle.connect(loop: loop, noFail: true) { [unowned self] handle, event in
            clientChanged(handle, event)
        }
        switch result {
        case .success(let handle):
            client = handle
            if busOutage {
                busOutage = false
                logger.info("D-Bus system bus is back", metadata: ["attempts": "\(connectAttempts)"])
            }
        case .failure(let error):
            client = nil
            phase = .noBus
            if !busOutage {
                busOutage = true
                logger.warning(
                    "Cannot reach avahi-daemon: the D-Bus system bus is not answering; retrying every \(retryInterval)",
                    metadata: ["error": "\(error)"])
            } else {
                logger.debug("Avahi client retry failed", metadata: ["attempt": "\(connectAttempts)", "error": "\(error)"])
            }
            scheduleRetry()
            updateStatus()
        }
    }

    private func scheduleRetry() {
        if retryTimer == nil {
            retryTimer = AvahiLoopTimer(loop: loop) { [unowned self] in connect() }
        }
        retryTimer?.schedule(after: retryInterval)
    }

    private func clientChanged(_ handle: AvahiClientHandle, _ event: AvahiClientEvent) {
        guard phase != .stopped else { return }
        client = handle  // may run inside avahi_client_new, before connect() has the handle
        switch event {
        case .connecting:
            phase = daemonLost ? .daemonGone : .connecting
            if !daemonLost { logger.info("Waiting for avahi-daemon to appear on the system bus") }
        case .registering, .hostNameCollision:
            phase = .hostRegistering
            logger.info(
                event == .registering ? "avahi-daemon is registering its host name" : "avahi-daemon's host name collided",
                metadata: ["host": "\(handle.hostNameFQDN ?? "?")"])
            resetAllGroups()
        case .running:
            if daemonLost { logger.notice("avahi-daemon is back; publishing again") }
            daemonLost = false
            phase = .running
            publishAll()
        case .failure(let error):
            handle.free()  // frees its groups; allowed inside its own callback
            client = nil
            for slot in slots { slot.forgetGroup() }
            daemonLost = true
            phase = .daemonGone
            if error == .disconnected {
                logger.warning("avahi-daemon went away; waiting for it to return")
                updateStatus()
                connect()
            } else {
                logger.error("Avahi client failed; reconnecting", metadata: ["error": "\(error)"])
                scheduleRetry()
            }
        }
        updateStatus()
    }

    private func groupChanged(_ slot: ServiceSlot, _ group: AvahiEntryGroupHandle, _ event: AvahiGroupEvent) {
        guard phase != .stopped else { return }
        if slot.group == nil { slot.group = group }  // may run inside avahi_entry_group_new
        guard slot.group === group else { return }
        slot.groupState = event
        switch event {
        case .established:
            logger.info(
                "Published \(slot.kind.type)",
                metadata: ["name": "\(slot.publishedName ?? name)", "port": "\(slot.publishedPort)"])
        case .collision:
            // Only a collision of the name in use counts (a late one for a name we already left is stale).
            if slot.publishedName == name {
                rename(reason: "another host on the network uses it")
                publishAll()
            }
        case .failure:
            let error = client?.lastError.description ?? "disconnected"
            failure = "\(slot.kind.type) could not be published: \(error)"
            logger.error("Entry group failed", metadata: ["type": "\(slot.kind.type)", "error": "\(error)"])
        case .uncommitted, .registering:
            break
        }
        updateStatus()
    }

    /// Takes avahi's next alternative name for both services and empties both groups.
    private func rename(reason: String) {
        let old = name
        name = avahiAlternativeServiceName(name)
        logger.notice(
            "Service name \"\(old)\" is taken (\(reason)); publishing both services as \"\(name)\"",
            metadata: ["old": "\(old)", "new": "\(name)"])
        runner.withState { [name] in $0.name = name }
        emit(.renamed(from: old, to: name))
        resetAllGroups()
    }

    private func resetAllGroups() {
        for slot in slots {
            if let group = slot.group, !group.isEmpty { group.reset() }
            slot.publishedName = nil
            if slot.group != nil { slot.groupState = .uncommitted }
        }
    }

    private enum Outcome { case done, collision, failed(String) }

    /// Brings every group in line with what is wanted; on a local collision, renames and starts over.
    private func publishAll() {
        guard phase == .running, let client else { return }
        failure = nil
        for _ in 0..<20 {
            var collided = false
            for slot in slots {
                switch publish(slot, client) {
                case .done: continue
                case .collision: collided = true
                case .failed(let reason): failure = reason
                }
                if collided { break }
            }
            guard collided else { return }
            rename(reason: "another program on this host publishes it")
        }
        failure = "no free service name after 20 attempts (last tried \"\(name)\")"
        logger.error("Giving up on name collisions", metadata: ["name": "\(name)"])
    }

    private func publish(_ slot: ServiceSlot, _ client: AvahiClientHandle) -> Outcome {
        let type = slot.kind.type
        guard slot.wanted else {
            if let group = slot.group, !group.isEmpty { group.reset() }
            slot.publishedName = nil
            return .done
        }
        if slot.group == nil {
            switch client.makeEntryGroup(handler: { [unowned self, unowned slot] group, event in
                groupChanged(slot, group, event)
            }) {
            case .success(let group): slot.group = group
            case .failure(let error): return fail("avahi_entry_group_new for \(type)", error)
            }
        }
        guard let group = slot.group else { return .failed("no entry group") }
        if !group.isEmpty {
            if slot.publishedName == name, slot.publishedPort == slot.port, slot.links == nil, slot.publishedLinks == nil {
                if !sameTXT(slot.publishedTXT, slot.txt) {
                    if let error = group.updateTXT(name: name, type: type, txt: slot.txt) {
                        return fail("Updating the TXT of \(type)", error)
                    }
                    slot.publishedTXT = slot.txt
                    logger.info("Updated the TXT of \(type)", metadata: ["name": "\(name)", "txt": "\(describe(slot.txt))"])
                }
                return .done
            }
            group.reset()
            slot.publishedName = nil
        }
        if let links = slot.links {
            for interface in links.all {
                let txt = links.usb.contains(interface) ? slot.txt + [("link", "usb")] : slot.txt
                if let error = group.addService(name: name, type: type, port: slot.port, txt: txt, interface: interface) {
                    group.reset()
                    if error == .collision { return .collision }
                    return fail("Adding \(type) as \"\(name)\" on interface \(interface)", error)
                }
            }
        } else if let error = group.addService(name: name, type: type, port: slot.port, txt: slot.txt) {
            if error == .collision { return .collision }
            return fail("Adding \(type) as \"\(name)\"", error)
        }
        if let error = group.commit() {
            group.reset()
            return fail("Committing \(type)", error)
        }
        slot.publishedName = name
        slot.publishedPort = slot.port
        slot.publishedTXT = slot.txt
        slot.publishedLinks = slot.links
        slot.groupState = .registering
        logger.debug("Registering \(type)", metadata: ["name": "\(name)", "port": "\(slot.port)", "txt": "\(describe(slot.txt))"])
        return .done
    }

    private func fail(_ operation: String, _ error: AvahiCode) -> Outcome {
        logger.error("\(operation) failed", metadata: ["error": "\(error)"])
        return .failed("\(operation): \(error.message)")
    }

    /// Computes the status from the phase and the groups and reports it if it changed.
    private func updateStatus() {
        let status: PublisherStatus
        switch phase {
        case .stopped: status = .stopped
        case .noBus: status = .noSystemBus
        case .connecting: status = .connecting
        case .daemonGone: status = .daemonGone
        case .hostRegistering: status = .registering
        case .running:
            if let failure {
                status = .failed(failure)
            } else if slots.allSatisfy({ !$0.wanted || $0.groupState == .established }) {
                status = .established
            } else {
                status = .registering
            }
        }
        emit(status)
    }

    private func emit(_ status: PublisherStatus) {
        runner.update { observed in
            guard observed.status != status else { return nil }
            observed.status = status
            return status
        }
    }
}

private func sameTXT(_ a: [(String, String)], _ b: [(String, String)]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
}

private func describe(_ txt: [(String, String)]) -> String {
    txt.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
}

/// The interfaces `_camo._tcp` goes out on one by one, and which of them are USB links.
struct LinkInterfaces: Equatable {
    var all: [Int32]
    var usb: Set<Int32>
}
