import CamoStudioKit
import Testing

/// The repeat accounting that the VM tests judge by (``repeatsBeyondCameraSkips(_:excludingStalls:)``), on made-up
/// indexes: it runs anywhere (`swift test --filter RepeatAccountingTests`), the VM run includes it.
@Suite("Repeat accounting: which repeats the camera's own holes explain")
struct RepeatAccountingTests {
    /// A frame the agent sent: the camera's sequence number, stamped as vivid does (sequence × `period`), slotted
    /// `latency` after its capture; or a repeat at the next slot.
    private static func index(_ entries: [Int?], period: Double = 1e9 / 30, latency: UInt64 = 40_000_000) -> VideoIndex {
        var frames: [VideoIndex.Frame] = []
        var last = VideoIndex.Frame(sequence: 0, slotTime: 0, captureTime: 0, repeat: true, frameNumber: nil, flash: false, hash: nil)
        for (slot, entry) in entries.enumerated() {
            let slotTime = 1_000_000_000 + UInt64(Double(slot) * 1e9 / 30)
            if let sequence = entry {
                let capture = 1_000_000_000 + UInt64(Double(sequence) * period)
                var frame = VideoIndex.Frame(
                    sequence: UInt32(slot), slotTime: max(slotTime, capture + latency), captureTime: capture, repeat: false,
                    frameNumber: nil, flash: false, hash: nil)
                frame.sourceSequence = UInt32(sequence)
                last = frame
                frames.append(frame)
            } else {
                var frame = last
                frame.sequence = UInt32(slot)
                frame.slotTime = slotTime
                frame.repeat = true
                frames.append(frame)
            }
        }
        return VideoIndex(width: 320, height: 180, codec: "jpeg", frames: frames)
    }

    @Test("30 fps camera: a repeat over a skipped frame is the camera's, a repeat over a delivered one is not")
    func thirtyFPS() {
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, 2, nil, 4, 5])) == 0)
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, 2, nil, nil, 5, 6])) == 0)
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, 2, nil, 3, 4])) == 1)
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, 2, nil, nil, 4, 5])) == 1)
    }

    @Test("40 fps camera: a hole of two periods may hold a spare slot, one of four two; beyond that is the agent's")
    func fortyFPS() {
        let period = 1e9 / 40
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, nil, 3, 4], period: period)) == 0)  // 50 ms: ⌈1.5⌉ − 1 = 1
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, nil, nil, 3, 4], period: period)) == 1)
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, nil, nil, 5, 6], period: period)) == 0)  // 100 ms: 3 − 1 = 2
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, nil, nil, nil, 5, 6], period: period)) == 1)
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, nil, 2, 3], period: period)) == 1, "25 ms: no hole")
    }

    @Test("Jittery timestamps (vivid's under emulation) do not matter: the camera's period is a median")
    func jitter() {
        var index = Self.index([0, 1, 2, nil, 4, 5, 6, 7])
        // A skipped frame whose neighbours are stamped 6 ms closer together than two periods, and jitter elsewhere.
        for i in index.frames.indices where !index.frames[i].repeat {
            let wobble: [Int64] = [0, 2_000_000, -1_500_000, 0, -4_000_000, 1_000_000, 0, -2_000_000]
            index.frames[i].captureTime = UInt64(Int64(index.frames[i].captureTime) + wobble[i])
        }
        index.frames[4].captureTime -= 2_000_000
        #expect(repeatsBeyondCameraSkips(index) == 0)
    }

    @Test("15 fps camera: every other slot repeats, and that is the camera's pace")
    func fifteenFPS() {
        let period = 1e9 / 15
        #expect(repeatsBeyondCameraSkips(Self.index([0, nil, 1, nil, 2, nil, 3], period: period)) == 0)
        #expect(repeatsBeyondCameraSkips(Self.index([0, nil, nil, 1, nil, 2], period: period)) == 1)
    }

    @Test("The restart's run and, when asked, a stall are not counted; trailing repeats are")
    func edges() {
        #expect(repeatsBeyondCameraSkips(Self.index([nil, nil, 0, 1, 2])) == 0)
        #expect(repeatsBeyondCameraSkips(Self.index([5, 6, nil, nil, 0, 1])) == 0)  // the sequence went back: a restart
        #expect(repeatsBeyondCameraSkips(Self.index([0, 1, 2, nil, nil])) == 2)
        // Frame 3 went out 200 ms after its capture: the agent did not run (a stall), so its run is the stall's.
        let stalled = Self.index([0, 1, 2, nil, nil, nil, 3, 4], latency: 200_000_000)
        #expect(repeatsBeyondCameraSkips(stalled) == 3)
        #expect(repeatsBeyondCameraSkips(stalled, excludingStalls: true) == 0)
    }
}
