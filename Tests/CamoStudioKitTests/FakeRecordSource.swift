import CamoDiscovery
import CamoStudioKit
import Synchronization

/// An ``AgentRecordSource`` that shows what `schedule` says for the time on `clock`, for the lookups without
/// avahi-daemon.
final class FakeRecordSource: AgentRecordSource {
    private struct State {
        var started = 0
        var stopped = 0
        var failed: DiscoveryError?
    }

    private let clock: VirtualClock
    private let schedule: @Sendable (Duration) -> [AgentRecord]
    private let startError: DiscoveryError?
    private let state = Mutex(State())

    /// A source showing `schedule(time)`; its `start()` throws `startError` when there is one.
    init(clock: VirtualClock, startError: DiscoveryError? = nil, schedule: @escaping @Sendable (Duration) -> [AgentRecord]) {
        self.clock = clock
        self.startError = startError
        self.schedule = schedule
    }

    /// A source that always shows `records`.
    convenience init(clock: VirtualClock, records: [AgentRecord]) {
        self.init(clock: clock) { _ in records }
    }

    func start() throws(DiscoveryError) {
        state.withLock { $0.started += 1 }
        if let startError { throw startError }
    }

    func stop() { state.withLock { $0.stopped += 1 } }

    var records: [AgentRecord] { schedule(clock.elapsed) }

    var failed: DiscoveryError? { state.withLock { $0.failed } }

    /// Makes ``failed`` say browsing stopped.
    func fail(_ error: DiscoveryError) { state.withLock { $0.failed = error } }

    var startCount: Int { state.withLock { $0.started } }
    var stopCount: Int { state.withLock { $0.stopped } }
}

/// Records as the studio's browser shows them.
enum Records {
    /// An agent's record on its USB link (TXT `link=usb`) or on the network.
    static func agent(_ id: String, name: String = "Desk", usb: Bool = false, addresses: [String], port: Int = 7000) -> AgentRecord {
        var txt = ["v": "1", "id": id, "name": name]
        if usb { txt["link"] = "usb" }
        return AgentRecord(name: name, addresses: addresses, port: port, txt: txt, interfaceIndex: 0)
    }
}
