import Foundation
import Testing

@testable import CamoProducerKit

@Suite("A new session starts with a new frame")
struct FirstFrameGateTests {
    /// Asks the gate about each (session, isRepeat, slot) in turn; the answers in order.
    static func answers(_ gate: inout FirstFrameGate, _ asks: [(UUID, Bool, UInt64)]) -> [Bool] {
        asks.map { gate.admits($0.0, isRepeat: $0.1, slot: $0.2) }
    }

    @Test("repeats of an old frame are held back until the first new frame, which goes out at once; then every slot")
    func repeatsWaitForTheFirstNewFrame() {
        var gate = FirstFrameGate()
        let s = UUID()
        let got = Self.answers(&gate, [(s, true, 100), (s, true, 101), (s, false, 102), (s, true, 103), (s, true, 104)])
        // Once started, repeats go out (a camera slower than 30 fps).
        #expect(got == [false, false, true, true, true])
    }

    @Test("a source that sent one frame and stopped still reaches a new session, after the grace")
    func afterTheGraceRepeatsGoOut() {
        var gate = FirstFrameGate()
        let s = UUID()
        let admitted = (0..<UInt64(20)).filter { gate.admits(s, isRepeat: true, slot: 50 + $0) }
        #expect(admitted == Array(FirstFrameGate.grace..<20), "the first repeat goes out after the grace, then every slot")
    }

    @Test("each session waits on its own; one that left and came back (or stopped taking media) waits again")
    func sessionsAreIndependentAndForgotten() {
        var gate = FirstFrameGate()
        let watching = UUID(), joining = UUID()
        let before = Self.answers(&gate, [(watching, false, 1), (watching, true, 2), (joining, true, 2), (joining, false, 3)])
        #expect(before == [true, true, false, true])

        gate.retain([joining])
        let after = Self.answers(&gate, [(watching, true, 4), (joining, true, 4)])
        #expect(after == [false, true], "the forgotten session starts over; the other goes on")
        // The grace counts from the slot it was seen in again (4), not from the first time round.
        let grace = FirstFrameGate.grace
        let later = Self.answers(&gate, [(watching, true, 4 + grace - 1), (watching, true, 4 + grace)])
        #expect(later == [false, true])
    }
}
