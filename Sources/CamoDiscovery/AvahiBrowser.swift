import Logging

/// Finds services of one DNS-SD type through avahi-daemon and resolves them (host, addresses, port, TXT).
///
/// A service seen on several interfaces or protocols is reported once, with all its addresses. It needs a
/// running avahi-daemon: `start()` throws a `DiscoveryError` that says what to do when there is none.
///
/// ```swift
/// let agents = try await AvahiBrowser.browse(type: CamoServiceType.agent, for: .seconds(1), logger: logger)
///
/// let browser = AvahiBrowser(type: CamoServiceType.pairing, logger: logger)
/// try browser.start()
/// for await event in browser.services() { if case .added(let agent) = event { ...; break } }
/// browser.stop()
/// ```
public final class AvahiBrowser: Sendable {
    private let engine: BrowserEngine

    /// A browser for `type` (e.g. `_camo._tcp`) in the default domain; nothing happens until `start()`.
    public init(type: String, logger: Logger) {
        engine = BrowserEngine(type: type, logger: logger)
    }

    deinit { engine.stop() }

    /// Connects to avahi-daemon and starts browsing.
    /// - Throws: `DiscoveryError.daemonNotRunning` or `.systemBusNotRunning` (each says what to do), or
    ///   `.avahi` when avahi refuses the browser (e.g. a malformed type).
    public func start() throws(DiscoveryError) { try engine.start() }

    /// Stops browsing and ends the event streams. Harmless when not started.
    public func stop() { engine.stop() }

    /// The services known now, sorted by name.
    public var discovered: [DiscoveredService] {
        engine.runner.withState { $0.known.values.sorted { $0.name < $1.name } }
    }

    /// Every service known now (as `.added`), then each change, until `stop()`. Ends after `.failed` when
    /// avahi-daemon goes away.
    public func services() -> AsyncStream<BrowseEvent> { engine.events() }

    /// Browses `type` for `duration` and returns what was found and resolved in that time, one entry per
    /// instance name with all its addresses, sorted by name.
    /// - Throws: `DiscoveryError` when avahi-daemon or the system bus is missing, or the daemon goes away
    ///   meanwhile; `CancellationError` when the task is cancelled.
    public static func browse(type: String, for duration: Duration, logger: Logger) async throws -> [DiscoveredService] {
        let browser = AvahiBrowser(type: type, logger: logger)
        try browser.start()
        defer { browser.stop() }
        try await Task.sleep(for: duration)
        if let failure = browser.engine.runner.withState({ $0.failure }) { throw failure }
        return browser.discovered
    }
}

/// The browser's state. Everything but the runner's state is touched only with the loop lock held.
final class BrowserEngine: @unchecked Sendable {
    struct Observed {
        var known: [String: DiscoveredService] = [:]
        var failure: DiscoveryError?
    }

    /// The loop thread, start and stop, what other threads read (`Observed`) and the event streams.
    let runner = AvahiRunner<Observed, BrowseEvent>(state: Observed())
    private let type: String
    private let logger: Logger
    private var loop: AvahiLoop { runner.loop }

    // Loop-lock state.
    private var active = false
    private var client: AvahiClientHandle?
    private var browser: AvahiServiceBrowserHandle?
    private var resolvers: [AvahiServiceInstance: AvahiServiceResolverHandle] = [:]
    private var resolved: [AvahiServiceInstance: AvahiResolvedService] = [:]
    private var firstSeen: [AvahiServiceInstance: Int] = [:]
    private var lastSeen: [AvahiServiceInstance: Int] = [:]
    private var sequence = 0

    init(type: String, logger: Logger) {
        self.type = type
        self.logger = logger
    }

    func start() throws(DiscoveryError) {
        let started = try runner.start(
            connect: { () throws(DiscoveryError) in
                runner.withState { $0.failure = nil }
                try connect()
            },
            teardown: { teardown() })
        if started { logger.debug("Browsing", metadata: ["type": "\(type)"]) }
    }

    func stop() {
        runner.stop { teardown() }
    }

    func events() -> AsyncStream<BrowseEvent> {
        runner.subscribe { observed, continuation in
            for service in observed.known.values.sorted(by: { $0.name < $1.name }) {
                continuation.yield(.added(service))
            }
            if let failure = observed.failure {
                continuation.yield(.failed(failure))
                return false
            }
            return true
        }
    }

    // MARK: Loop-lock side

    private func connect() throws(DiscoveryError) {
        active = true
        let result = AvahiClientHandle.connect(loop: loop, noFail: false) { [unowned self] handle, event in
            clientChanged(handle, event)
        }
        let connected: AvahiClientHandle
        switch result {
        case .success(let handle):
            connected = handle
        case .failure(let error):
            active = false
            throw diagnose(error)
        }
        client = connected
        switch connected.makeServiceBrowser(type: type, handler: { [unowned self] signal in browserSignal(signal) }) {
        case .success(let handle):
            browser = handle
        case .failure(let error):
            teardown()
            throw .avahi(operation: "Browsing \(type)", code: error.rawValue, message: error.message)
        }
    }

    /// Tells a missing daemon from a missing bus: a NO_FAIL client can be made without the daemon, not
    /// without the bus.
    private func diagnose(_ error: AvahiCode) -> DiscoveryError {
        guard error == .noDaemon else {
            return .avahi(operation: "Connecting to avahi-daemon", code: error.rawValue, message: error.message)
        }
        switch AvahiClientHandle.connect(loop: loop, noFail: true, handler: { _, _ in }) {
        case .success(let probe):
            probe.free()
            return .daemonNotRunning
        case .failure:
            return .systemBusNotRunning
        }
    }

    private func teardown() {
        active = false
        for resolver in resolvers.values { resolver.free() }
        resolvers.removeAll()
        browser?.free()
        browser = nil
        client?.free()
        client = nil
        resolved.removeAll()
        firstSeen.removeAll()
        lastSeen.removeAll()
    }

    private func clientChanged(_ handle: AvahiClientHandle, _ event: AvahiClientEvent) {
        guard active, case .failure(let error) = event else { return }
        logger.warning("avahi-daemon went away while browsing", metadata: ["type": "\(type)", "error": "\(error)"])
        fail(.daemonGone)
    }

    private func browserSignal(_ signal: AvahiBrowseSignal) {
        guard active, let client else { return }
        switch signal {
        case .new(let instance):
            guard resolvers[instance] == nil else { return }
            let result = client.makeServiceResolver(instance: instance) { [unowned self] outcome in
                resolverResult(instance, outcome)
            }
            switch result {
            case .success(let resolver): resolvers[instance] = resolver
            case .failure(let error):
                logger.debug("Cannot resolve", metadata: ["name": "\(instance.name)", "error": "\(error)"])
            }
        case .remove(let instance):
            resolvers.removeValue(forKey: instance)?.free()
            resolved.removeValue(forKey: instance)
            firstSeen.removeValue(forKey: instance)
            lastSeen.removeValue(forKey: instance)
            refresh(instance.name)
        case .allForNow:
            logger.trace("Browse: all for now", metadata: ["type": "\(type)"])
        case .failure:
            let error = client.lastError
            logger.error("Browsing failed", metadata: ["type": "\(type)", "error": "\(error)"])
            fail(.avahi(operation: "Browsing \(type)", code: error.rawValue, message: error.message))
        }
    }

    private func resolverResult(_ instance: AvahiServiceInstance, _ outcome: Result<AvahiResolvedService, AvahiCode>) {
        guard active else { return }
        switch outcome {
        case .success(let service):
            sequence += 1
            if firstSeen[instance] == nil { firstSeen[instance] = sequence }
            lastSeen[instance] = sequence
            resolved[instance] = service
            refresh(instance.name)
        case .failure(let error):
            logger.debug("Resolving failed", metadata: ["name": "\(instance.name)", "error": "\(error)"])
            resolvers.removeValue(forKey: instance)?.free()  // allowed inside its own callback
        }
    }

    /// Merges every resolved instance named `name` and reports what changed.
    private func refresh(_ name: String) {
        let instances = resolved.keys.filter { $0.name == name }
            .sorted { firstSeen[$0, default: 0] < firstSeen[$1, default: 0] }
        var merged: DiscoveredService?
        let newestInstance = instances.max { lastSeen[$0, default: 0] < lastSeen[$1, default: 0] }
        if let first = instances.first, let newest = newestInstance.flatMap({ resolved[$0] }) {
            var addresses: [String] = []
            for instance in instances {
                if let address = resolved[instance]?.address, !addresses.contains(address) { addresses.append(address) }
            }
            var txt: [String: String] = [:]
            for (key, value) in newest.txt where txt[key] == nil { txt[key] = value }
            merged = DiscoveredService(
                name: name, type: first.type, domain: first.domain, hostName: newest.hostName, addresses: addresses,
                port: Int(newest.port), txt: txt, interfaceIndex: Int(first.interfaceIndex))
        }
        let event = runner.update { observed -> BrowseEvent? in
            let previous = observed.known[name]
            observed.known[name] = merged
            switch (previous, merged) {
            case (nil, let service?): return .added(service)
            case (let old?, let service?) where old != service: return .updated(service)
            case (let old?, nil): return .removed(old)
            default: return nil
            }
        }
        if let event { logger.debug("\(event)", metadata: ["type": "\(type)"]) }
    }

    /// Reports `error`, ends the streams and frees everything; the browser stays stopped.
    private func fail(_ error: DiscoveryError) {
        runner.update { observed in
            observed.failure = error
            return .failed(error)
        }
        teardown()
        runner.finishAll()
    }
}
