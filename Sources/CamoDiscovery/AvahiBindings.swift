// The thin wrapper over libavahi-client: the only file of CamoDiscovery that touches C types and unsafe
// pointers. Each wrapper object owns one C object and is its callback's userdata (unretained: the owner keeps
// the wrapper alive for as long as the C object exists). Nothing here takes the poll lock by itself: callers
// hold `AvahiLoop.withLock` (or run on the loop thread, inside a callback) around every call.
import CAvahi
import Glibc

/// An error code of libavahi-client (`AVAHI_ERR_*`, negative).
struct AvahiCode: Error, Equatable, CustomStringConvertible {
    let rawValue: Int32

    static let collision = AvahiCode(rawValue: Int32(AVAHI_ERR_COLLISION))
    static let disconnected = AvahiCode(rawValue: Int32(AVAHI_ERR_DISCONNECTED))
    static let noDaemon = AvahiCode(rawValue: Int32(AVAHI_ERR_NO_DAEMON))

    /// avahi_strerror's sentence, e.g. "Daemon connection failed".
    var message: String { String(cString: avahi_strerror(rawValue)) }
    var description: String { "\(message) (\(rawValue))" }
}

/// The next name avahi suggests after a collision: "Desk cam" → "Desk cam #2" → "Desk cam #3".
func avahiAlternativeServiceName(_ name: String) -> String {
    guard let alternative = avahi_alternative_service_name(name) else { return name + " #2" }
    defer { avahi_free(alternative) }
    return String(cString: alternative)
}

/// Whether avahi accepts `name` as a DNS-SD instance name (1 to 63 bytes of UTF-8).
func avahiIsValidServiceName(_ name: String) -> Bool { avahi_is_valid_service_name(name) != 0 }

// MARK: - The event loop

/// An `AvahiThreadedPoll`: one thread that runs every callback, with the poll's mutex held.
final class AvahiLoop: @unchecked Sendable {
    private let poll: OpaquePointer?
    /// Used only when avahi_threaded_poll_new failed (so that state can still be locked); start() then throws.
    private let fallbackMutex: UnsafeMutablePointer<pthread_mutex_t>
    private var running = false  // changed only by start/stop, which the owner serializes

    init() {
        poll = avahi_threaded_poll_new()
        fallbackMutex = .allocate(capacity: 1)
        pthread_mutex_init(fallbackMutex, nil)
    }

    deinit {
        if let poll { avahi_threaded_poll_free(poll) }  // joins the thread if it still runs
        pthread_mutex_destroy(fallbackMutex)
        fallbackMutex.deallocate()
    }

    /// Starts the loop thread.
    func start() throws(AvahiCode) {
        guard let poll else { throw AvahiCode(rawValue: Int32(AVAHI_ERR_NO_MEMORY)) }
        guard !running else { return }
        guard avahi_threaded_poll_start(poll) == 0 else { throw AvahiCode(rawValue: Int32(AVAHI_ERR_FAILURE)) }
        running = true
    }

    /// Stops the loop thread and waits for it. Never call it with the lock held or from a callback.
    func stop() {
        guard let poll, running else { return }
        avahi_threaded_poll_stop(poll)
        running = false
    }

    /// Runs `body` with the loop's mutex held. Never call it from a callback (the loop thread holds it then).
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if let poll { avahi_threaded_poll_lock(poll) } else { pthread_mutex_lock(fallbackMutex) }
        defer { if let poll { avahi_threaded_poll_unlock(poll) } else { pthread_mutex_unlock(fallbackMutex) } }
        return try body()
    }

    fileprivate var api: UnsafePointer<AvahiPoll>? { poll.map { avahi_threaded_poll_get($0) } }
}

/// A one-shot timer on the loop (an `AvahiTimeout`), created disarmed.
final class AvahiLoopTimer {
    private let api: UnsafePointer<AvahiPoll>
    private var timeout: OpaquePointer?
    private let handler: () -> Void

    /// nil when the loop could not be created.
    init?(loop: AvahiLoop, handler: @escaping () -> Void) {
        guard let api = loop.api else { return nil }
        self.api = api
        self.handler = handler
        let fire: AvahiTimeoutCallback = { _, userdata in
            guard let userdata else { return }
            Unmanaged<AvahiLoopTimer>.fromOpaque(userdata).takeUnretainedValue().handler()
        }
        timeout = camo_avahi_timeout_new(api, -1, fire, Unmanaged.passUnretained(self).toOpaque())
        if timeout == nil { return nil }
    }

    /// Fires once, `delay` from now (replacing an earlier schedule).
    func schedule(after delay: Duration) {
        guard let timeout else { return }
        let ms = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        camo_avahi_timeout_update(api, timeout, Int32(clamping: max(0, ms)))
    }

    func cancel() {
        guard let timeout else { return }
        camo_avahi_timeout_update(api, timeout, -1)
    }

    /// Frees the C timeout; the timer is dead afterwards.
    func free() {
        guard let timeout else { return }
        camo_avahi_timeout_free(api, timeout)
        self.timeout = nil
    }
}

// MARK: - Client

/// The state of an `AvahiClient`.
enum AvahiClientEvent: Equatable {
    case connecting          // NO_FAIL client waiting for avahi-daemon
    case registering         // the daemon is (re)registering its host name
    case running             // ready to publish and browse
    case hostNameCollision   // the daemon's host name collided; it will pick another
    case failure(AvahiCode)  // the connection is unusable (AVAHI_ERR_DISCONNECTED when the daemon went away)
}

/// Things that die with their client (`avahi_client_free` frees them).
private protocol AvahiClientChild: AnyObject {
    func clientWasFreed()
}

/// An `AvahiClient`, the D-Bus connection to avahi-daemon.
final class AvahiClientHandle {
    fileprivate var pointer: OpaquePointer?
    private var handler: ((AvahiClientHandle, AvahiClientEvent) -> Void)?
    private var children: [ObjectIdentifier: any AvahiClientChild] = [:]

    private init(handler: @escaping (AvahiClientHandle, AvahiClientEvent) -> Void) {
        self.handler = handler
    }

    /// Connects to avahi-daemon. The handler can run before this returns (with `.running` or `.connecting`);
    /// it gets the handle as its argument. With `noFail`, a missing daemon gives `.connecting` and the client
    /// waits for it; a missing system bus fails either way (`AVAHI_ERR_NO_DAEMON`).
    static func connect(
        loop: AvahiLoop, noFail: Bool, handler: @escaping (AvahiClientHandle, AvahiClientEvent) -> Void
    ) -> Result<AvahiClientHandle, AvahiCode> {
        guard let api = loop.api else { return .failure(AvahiCode(rawValue: Int32(AVAHI_ERR_NO_MEMORY))) }
        let handle = AvahiClientHandle(handler: handler)
        let callback: AvahiClientCallback = { client, state, userdata in
            guard let userdata else { return }
            let handle = Unmanaged<AvahiClientHandle>.fromOpaque(userdata).takeUnretainedValue()
            if handle.pointer == nil { handle.pointer = client }  // called from inside avahi_client_new
            handle.deliver(state)
        }
        var error: Int32 = 0
        let flags = noFail ? AVAHI_CLIENT_NO_FAIL : AvahiClientFlags(rawValue: 0)
        guard let client = avahi_client_new(api, flags, callback, Unmanaged.passUnretained(handle).toOpaque(), &error)
        else {
            handle.handler = nil
            handle.pointer = nil
            return .failure(AvahiCode(rawValue: error))
        }
        handle.pointer = client
        return .success(handle)
    }

    private func deliver(_ state: AvahiClientState) {
        let event: AvahiClientEvent
        switch state {
        case AVAHI_CLIENT_S_REGISTERING: event = .registering
        case AVAHI_CLIENT_S_RUNNING: event = .running
        case AVAHI_CLIENT_S_COLLISION: event = .hostNameCollision
        case AVAHI_CLIENT_CONNECTING: event = .connecting
        default: event = .failure(lastError)
        }
        handler?(self, event)
    }

    /// `avahi_client_errno`: the last error on this connection.
    var lastError: AvahiCode {
        guard let pointer else { return .disconnected }
        return AvahiCode(rawValue: avahi_client_errno(pointer))
    }

    /// The host's mDNS name, e.g. "vm.local".
    var hostNameFQDN: String? {
        guard let pointer, let name = avahi_client_get_host_name_fqdn(pointer) else { return nil }
        return String(cString: name)
    }

    /// Frees the client and everything made from it (entry groups, browsers, resolvers). Allowed inside its
    /// own callback. Its entry groups are withdrawn by the daemon.
    func free() {
        handler = nil
        for child in children.values { child.clientWasFreed() }
        children.removeAll()
        if let pointer { avahi_client_free(pointer) }
        pointer = nil
    }

    fileprivate func adopt(_ child: any AvahiClientChild) { children[ObjectIdentifier(child)] = child }
    fileprivate func release(_ child: any AvahiClientChild) { children[ObjectIdentifier(child)] = nil }

    /// A new, empty entry group. The handler can run before this returns (with `.uncommitted`).
    func makeEntryGroup(handler: @escaping (AvahiEntryGroupHandle, AvahiGroupEvent) -> Void)
        -> Result<AvahiEntryGroupHandle, AvahiCode>
    {
        guard let pointer else { return .failure(.disconnected) }
        let group = AvahiEntryGroupHandle(client: self, handler: handler)
        let callback: AvahiEntryGroupCallback = { g, state, userdata in
            guard let userdata else { return }
            let group = Unmanaged<AvahiEntryGroupHandle>.fromOpaque(userdata).takeUnretainedValue()
            if group.pointer == nil { group.pointer = g }  // called from inside avahi_entry_group_new
            group.deliver(state)
        }
        guard let g = avahi_entry_group_new(pointer, callback, Unmanaged.passUnretained(group).toOpaque()) else {
            return .failure(lastError)
        }
        group.pointer = g
        adopt(group)
        return .success(group)
    }

    /// Browses `type` on every interface and protocol in the default domain.
    func makeServiceBrowser(type: String, handler: @escaping (AvahiBrowseSignal) -> Void)
        -> Result<AvahiServiceBrowserHandle, AvahiCode>
    {
        guard let pointer else { return .failure(.disconnected) }
        let browser = AvahiServiceBrowserHandle(client: self, handler: handler)
        let callback: AvahiServiceBrowserCallback = { _, interface, proto, event, name, type, domain, _, userdata in
            guard let userdata else { return }
            let browser = Unmanaged<AvahiServiceBrowserHandle>.fromOpaque(userdata).takeUnretainedValue()
            browser.deliver(interface, proto, event, name, type, domain)
        }
        guard let b = avahi_service_browser_new(
            pointer, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), type, nil,
            AvahiLookupFlags(rawValue: 0), callback, Unmanaged.passUnretained(browser).toOpaque())
        else { return .failure(lastError) }
        browser.pointer = b
        adopt(browser)
        return .success(browser)
    }

    /// Resolves one service instance seen by a browser: host, address (of the same protocol), port, TXT. The
    /// resolver stays alive and reports again when the records change, until freed.
    func makeServiceResolver(
        instance: AvahiServiceInstance, handler: @escaping (Result<AvahiResolvedService, AvahiCode>) -> Void
    ) -> Result<AvahiServiceResolverHandle, AvahiCode> {
        guard let pointer else { return .failure(.disconnected) }
        let resolver = AvahiServiceResolverHandle(client: self, handler: handler)
        let callback: AvahiServiceResolverCallback = {
            _, interface, proto, event, name, type, domain, host, address, port, txt, _, userdata in
            guard let userdata else { return }
            let resolver = Unmanaged<AvahiServiceResolverHandle>.fromOpaque(userdata).takeUnretainedValue()
            guard event == AVAHI_RESOLVER_FOUND else {
                resolver.handler?(.failure(resolver.client?.lastError ?? .disconnected))
                return
            }
            resolver.handler?(.success(AvahiResolvedService(
                instance: AvahiServiceInstance(
                    interfaceIndex: interface, protocolFamily: proto, name: string(name), type: string(type),
                    domain: string(domain)),
                hostName: string(host), address: address.flatMap(addressString), port: port,
                txt: txtPairs(txt))))
        }
        guard let r = avahi_service_resolver_new(
            pointer, instance.interfaceIndex, instance.protocolFamily, instance.name, instance.type,
            instance.domain, instance.protocolFamily, AvahiLookupFlags(rawValue: 0), callback,
            Unmanaged.passUnretained(resolver).toOpaque())
        else { return .failure(lastError) }
        resolver.pointer = r
        adopt(resolver)
        return .success(resolver)
    }
}

// MARK: - Entry groups (publishing)

/// The state of an `AvahiEntryGroup`.
enum AvahiGroupEvent: Equatable {
    case uncommitted, registering, established, collision, failure
}

/// An `AvahiEntryGroup`: services committed and withdrawn as one unit.
final class AvahiEntryGroupHandle: AvahiClientChild {
    fileprivate var pointer: OpaquePointer?
    fileprivate weak var client: AvahiClientHandle?
    private var handler: ((AvahiEntryGroupHandle, AvahiGroupEvent) -> Void)?

    fileprivate init(client: AvahiClientHandle, handler: @escaping (AvahiEntryGroupHandle, AvahiGroupEvent) -> Void) {
        self.client = client
        self.handler = handler
    }

    fileprivate func deliver(_ state: AvahiEntryGroupState) {
        let event: AvahiGroupEvent
        switch state {
        case AVAHI_ENTRY_GROUP_UNCOMMITED: event = .uncommitted
        case AVAHI_ENTRY_GROUP_REGISTERING: event = .registering
        case AVAHI_ENTRY_GROUP_ESTABLISHED: event = .established
        case AVAHI_ENTRY_GROUP_COLLISION: event = .collision
        default: event = .failure
        }
        handler?(self, event)
    }

    fileprivate func clientWasFreed() {
        pointer = nil
        handler = nil
    }

    /// Adds a service on one interface (`interface`, a kernel interface index) or on every interface (nil), on
    /// every protocol; TXT goes on the wire in the order given. `.collision` when another entry group of this
    /// daemon already has the name.
    func addService(name: String, type: String, port: UInt16, txt: [(String, String)], interface: Int32? = nil) -> AvahiCode? {
        guard let pointer else { return .disconnected }
        return withStringList(txt) { list in
            check(camo_avahi_entry_group_add_service_strlst(pointer, interface ?? Int32(AVAHI_IF_UNSPEC), name, type, port, list))
        }
    }

    /// Replaces the TXT of a service already added under exactly this name and type.
    func updateTXT(name: String, type: String, txt: [(String, String)]) -> AvahiCode? {
        guard let pointer else { return .disconnected }
        return withStringList(txt) { list in
            check(avahi_entry_group_update_service_txt_strlst(
                pointer, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                AvahiPublishFlags(rawValue: 0), name, type, nil, list))
        }
    }

    func commit() -> AvahiCode? {
        guard let pointer else { return .disconnected }
        return check(avahi_entry_group_commit(pointer))
    }

    /// Withdraws everything in the group at once (goodbye packets); the group can be filled again.
    @discardableResult
    func reset() -> AvahiCode? {
        guard let pointer else { return .disconnected }
        return check(avahi_entry_group_reset(pointer))
    }

    var isEmpty: Bool {
        guard let pointer else { return true }
        return avahi_entry_group_is_empty(pointer) != 0
    }
}

// MARK: - Browsing

/// One service instance as a browser reports it: per interface and protocol.
struct AvahiServiceInstance: Hashable {
    var interfaceIndex: Int32
    var protocolFamily: Int32
    var name: String
    var type: String
    var domain: String
}

enum AvahiBrowseSignal {
    case new(AvahiServiceInstance)
    case remove(AvahiServiceInstance)
    case allForNow
    case failure
}

struct AvahiResolvedService {
    var instance: AvahiServiceInstance
    var hostName: String
    var address: String?
    var port: UInt16
    var txt: [(String, String)]
}

/// An `AvahiServiceBrowser`.
final class AvahiServiceBrowserHandle: AvahiClientChild {
    fileprivate var pointer: OpaquePointer?
    private weak var client: AvahiClientHandle?
    private var handler: ((AvahiBrowseSignal) -> Void)?

    fileprivate init(client: AvahiClientHandle, handler: @escaping (AvahiBrowseSignal) -> Void) {
        self.client = client
        self.handler = handler
    }

    fileprivate func deliver(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        let instance = AvahiServiceInstance(
            interfaceIndex: interface, protocolFamily: proto, name: string(name), type: string(type),
            domain: string(domain))
        switch event {
        case AVAHI_BROWSER_NEW: handler?(.new(instance))
        case AVAHI_BROWSER_REMOVE: handler?(.remove(instance))
        case AVAHI_BROWSER_FAILURE: handler?(.failure)
        case AVAHI_BROWSER_ALL_FOR_NOW: handler?(.allForNow)
        default: break
        }
    }

    fileprivate func clientWasFreed() {
        pointer = nil
        handler = nil
    }

    func free() {
        handler = nil
        if let pointer { avahi_service_browser_free(pointer) }
        pointer = nil
        client?.release(self)
    }
}


/// An `AvahiServiceResolver`.
final class AvahiServiceResolverHandle: AvahiClientChild {
    fileprivate var pointer: OpaquePointer?
    fileprivate weak var client: AvahiClientHandle?
    fileprivate var handler: ((Result<AvahiResolvedService, AvahiCode>) -> Void)?

    fileprivate init(client: AvahiClientHandle, handler: @escaping (Result<AvahiResolvedService, AvahiCode>) -> Void) {
        self.client = client
        self.handler = handler
    }

    fileprivate func clientWasFreed() {
        pointer = nil
        handler = nil
    }

    func free() {
        handler = nil
        if let pointer { avahi_service_resolver_free(pointer) }
        pointer = nil
        client?.release(self)
    }
}

// MARK: - Helpers

private func check(_ result: Int32) -> AvahiCode? { result < 0 ? AvahiCode(rawValue: result) : nil }

private func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

private func addressString(_ address: UnsafePointer<AvahiAddress>) -> String? {
    let size = camo_avahi_address_string_max()
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) { buffer in
        guard let base = buffer.baseAddress, camo_avahi_address_string(address, base, size) != 0 else { return nil }
        return String(cString: base)
    }
}

/// Builds an AvahiStringList whose wire order is the order of `pairs`. avahi_string_list_add prepends, and
/// the list is serialized last-added-last, so adding in order gives the order given (checked with
/// python-zeroconf); never reverse it.
private func withStringList<T>(_ pairs: [(String, String)], _ body: (UnsafeMutablePointer<AvahiStringList>?) -> T) -> T {
    var list: UnsafeMutablePointer<AvahiStringList>? = nil
    for (key, value) in pairs { list = avahi_string_list_add_pair(list, key, value) }
    defer { avahi_string_list_free(list) }
    return body(list)
}

/// TXT entries as (key, value) pairs in wire order; a key without "=" has the value "".
private func txtPairs(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [(String, String)] {
    var entries: [[UInt8]] = []
    var node = list
    while let current = node {
        if let text = avahi_string_list_get_text(current) {
            entries.append(Array(UnsafeBufferPointer(start: text, count: avahi_string_list_get_size(current))))
        }
        node = avahi_string_list_get_next(current)
    }
    // The list holds the last wire entry first (it is built by prepending).
    return entries.reversed().map { bytes in
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else {
            return (String(decoding: bytes, as: UTF8.self), "")
        }
        return (String(decoding: bytes[..<equals], as: UTF8.self), String(decoding: bytes[(equals + 1)...], as: UTF8.self))
    }
}
