@testable import CamoDoorbell
import CamoTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// A chime line that records each level with the time it was set.
final class RecordingOutput: ChimeOutput, @unchecked Sendable {  // `state` is only touched under its Mutex.
    let label = "recording"
    private let state = Mutex((levels: [(active: Bool, time: UInt64)](), closed: false, failing: false))

    func set(active: Bool) throws(DoorbellError) {
        let failing = state.withLock { s -> Bool in
            if !s.failing { s.levels.append((active, MonotonicTime.now())) }
            return s.failing
        }
        if failing { throw .lineFailed(label, reason: "the chip went away") }
    }

    func close() { state.withLock { $0.closed = true } }
    func fail() { state.withLock { $0.failing = true } }
    var levels: [(active: Bool, time: UInt64)] { state.withLock { $0.levels } }
    var closed: Bool { state.withLock { $0.closed } }
}

@Suite("External chime: the wired chime's hold")
struct ExternalChimeTests {
    @Test("A ring holds the line active for at least its duration, then releases it once")
    func oneRing() {
        let output = RecordingOutput()
        let chime = ExternalChime(output: output, logger: Logger(label: "test"))
        let asked = MonotonicTime.now()
        chime.ring(duration: .milliseconds(120))
        #expect(waitUntil { output.levels.count == 2 })
        let levels = output.levels
        #expect(levels.map(\.active) == [true, false])
        #expect(levels[0].time >= asked)
        #expect(levels[1].time - levels[0].time >= 120_000_000, "held \(Double(levels[1].time - levels[0].time) / 1e6) ms")
        #expect(chime.rings == 1 && chime.failures == 0)
        chime.stop()
        #expect(output.closed)
        #expect(output.levels.count == 2, "stop after the hold drives nothing")
    }

    @Test("A ring during a ring restarts the hold: one activation, released a full duration after the second ring")
    func ringDuringRing() {
        let output = RecordingOutput()
        let chime = ExternalChime(output: output, logger: Logger(label: "test"))
        chime.ring(duration: .milliseconds(300))
        #expect(waitUntil { output.levels.count == 1 })
        Thread.sleep(forTimeInterval: 0.1)
        let second = MonotonicTime.now()
        chime.ring(duration: .milliseconds(300))
        #expect(waitUntil { output.levels.count == 2 })
        Thread.sleep(forTimeInterval: 0.1)  // the first ring's deadline passed long ago: nothing more comes
        let levels = output.levels
        #expect(levels.map(\.active) == [true, false])
        #expect(levels.count == 2 && levels[1].time >= second + 300_000_000,
                "released \(Double(Int64(levels.last!.time) - Int64(second)) / 1e6) ms after the second ring, want ≥ 300")
        #expect(chime.rings == 2)
        chime.stop()
    }

    @Test("Stop during a ring releases the line at once and closes it; later rings do nothing")
    func stopWhileRinging() {
        let output = RecordingOutput()
        let chime = ExternalChime(output: output, logger: Logger(label: "test"))
        chime.ring(duration: .seconds(10))
        chime.stop()
        #expect(output.levels.map(\.active) == [true, false])
        #expect(output.closed)
        chime.ring(duration: .milliseconds(10))
        chime.sync()
        #expect(output.levels.count == 2)
        chime.stop()
    }

    @Test("A line that fails is logged and counted, never thrown at the ringer")
    func failingLine() {
        let recorder = LogRecorder()
        let output = RecordingOutput()
        output.fail()
        let chime = ExternalChime(output: output, logger: recorder.logger())
        chime.ring(duration: .milliseconds(10))
        chime.sync()
        #expect(chime.failures == 1)
        #expect(recorder.messages(at: .error).contains { $0.contains("could not be driven active") && $0.contains("the chip went away") })
        chime.stop()
    }
}
