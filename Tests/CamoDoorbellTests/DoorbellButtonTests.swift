@testable import CamoDoorbell
import CamoTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// A button source that plays a script of edges, then waits; or fails when told to.
final class ScriptedSource: ButtonSource, @unchecked Sendable {  // `script` is only touched under its Mutex.
    let label: String
    private let script: Mutex<(edges: [ButtonEdge], failNext: Bool, waits: Int, closed: Bool)>

    init(label: String = "scripted", edges: [ButtonEdge], failAfterEdges: Bool = false) {
        self.label = label
        script = Mutex((edges, failAfterEdges, 0, false))
    }

    func isPressedNow() -> Bool { false }

    func waitEdges(timeout: UInt64) throws(DoorbellError) -> [ButtonEdge] {
        let (edges, fail) = script.withLock { s -> ([ButtonEdge], Bool) in
            s.waits += 1
            defer { s.edges = [] }
            return (s.edges, s.edges.isEmpty && s.failNext)
        }
        if fail { throw .lineFailed(label, reason: "the chip went away") }
        if edges.isEmpty { Thread.sleep(forTimeInterval: Double(min(timeout, 5_000_000)) / 1e9) }
        return edges
    }

    func close() { script.withLock { $0.closed = true } }

    var drained: Bool { script.withLock { $0.edges.isEmpty && $0.waits > 1 } }
    var closed: Bool { script.withLock { $0.closed } }
}

/// Collects the times onPress was called with.
final class PressLog: Sendable {
    private let times = Mutex<[UInt64]>([])
    func add(_ time: UInt64) { times.withLock { $0.append(time) } }
    var all: [UInt64] { times.withLock { $0 } }
}

@Suite("Doorbell button: the watching thread over a scripted line")
struct DoorbellButtonTests {
    static let input = DoorbellInput.gpio(.named("doorbell"), activeLow: true)

    @Test("A bouncing 300 ms press calls onPress once, with the time of its first edge; stop joins and closes the line")
    func onePress() throws {
        let t0 = MonotonicTime.now() - 1_000_000_000
        let ms: UInt64 = 1_000_000
        let source = ScriptedSource(edges: [
            ButtonEdge(time: t0, pressed: true), ButtonEdge(time: t0 + 1 * ms, pressed: false), ButtonEdge(time: t0 + 2 * ms, pressed: true),
            ButtonEdge(time: t0 + 300 * ms, pressed: false), ButtonEdge(time: t0 + 302 * ms, pressed: true), ButtonEdge(time: t0 + 304 * ms, pressed: false),
        ])
        let presses = PressLog()
        let button = DoorbellButton(input: Self.input, debounce: .milliseconds(30), reopenInterval: 10_000_000, logger: Logger(label: "test"),
                                    onPress: { presses.add($0) }, open: { source })
        try button.start()
        #expect(throws: DoorbellError.alreadyStarted) { try button.start() }
        #expect(waitUntil { source.drained })
        button.stop()
        #expect(presses.all == [t0])
        #expect(button.presses == 1)
        #expect(source.closed)
        button.stop()  // idempotent
    }

    @Test("A line missing at start is the start's error; nothing runs")
    func missingAtStart() {
        let presses = PressLog()
        let button = DoorbellButton(input: Self.input, debounce: .milliseconds(30), reopenInterval: 10_000_000, logger: Logger(label: "test"),
                                    onPress: { presses.add($0) }, open: { () throws(DoorbellError) -> any ButtonSource in throw .lineNotFound("doorbell") })
        #expect(throws: DoorbellError.lineNotFound("doorbell")) { try button.start() }
        button.stop()
        #expect(presses.all.isEmpty)
    }

    @Test("A line that goes away is logged as an error, opened again, and its presses count again")
    func lineComesBack() throws {
        let recorder = LogRecorder()
        let t0 = MonotonicTime.now() - 5_000_000_000
        let first = ScriptedSource(label: "first", edges: [ButtonEdge(time: t0, pressed: true), ButtonEdge(time: t0 + 100_000_000, pressed: false)], failAfterEdges: true)
        let second = ScriptedSource(label: "second", edges: [ButtonEdge(time: t0 + 2_000_000_000, pressed: true), ButtonEdge(time: t0 + 2_200_000_000, pressed: false)])
        let opens = Mutex(0)
        let presses = PressLog()
        let button = DoorbellButton(input: Self.input, debounce: .milliseconds(30), reopenInterval: 10_000_000, logger: recorder.logger(),
                                    onPress: { presses.add($0) }, open: { () throws(DoorbellError) -> any ButtonSource in
            let n = opens.withLock { n in
                n += 1
                return n
            }
            switch n {
            case 1: return first
            case 2: throw .lineNotFound("doorbell")  // not back yet
            default: return second
            }
        })
        try button.start()
        #expect(waitUntil { second.drained })
        button.stop()
        #expect(presses.all == [t0, t0 + 2_000_000_000])
        #expect(first.closed && second.closed)
        let errors = recorder.messages(at: .error)
        #expect(errors.count == 1 && errors[0].contains("The doorbell button went away") && errors[0].contains("the chip went away"), "\(errors)")
        #expect(recorder.messages(at: .notice).contains { $0.contains("The doorbell button is back") }, "\(recorder.messages)")
        #expect(opens.withLock { $0 } >= 3)
    }
}

/// Polls `condition` every 5 ms for up to 10 s (a generous limit for a loaded machine, not a speed requirement).
func waitUntil(_ condition: () -> Bool) -> Bool {
    for _ in 0..<2_000 {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return condition()
}
