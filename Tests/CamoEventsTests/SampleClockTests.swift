@testable import CamoEvents
import Testing

@Suite("Audio sample times")
struct SampleClockTests {
    @Test("frame counts convert to ns exactly, even after a year of audio")
    func conversion() {
        #expect(SampleClock.nanoseconds(frames: 48_000) == 1_000_000_000)
        #expect(SampleClock.nanoseconds(frames: 3) == 62_500)
        #expect(SampleClock.nanoseconds(frames: 1) == 20_833)
        let year: UInt64 = 365 * 86_400 * 48_000
        #expect(SampleClock.nanoseconds(frames: year + 48) == 365 * 86_400 * 1_000_000_000 + 1_000_000)
    }

    @Test("chunks that follow on keep counting; a jump of more than 2 ms starts again")
    func gaps() {
        var clock = SampleClock()
        // A mutating call cannot sit inside #expect.
        let first = clock.begin(chunkAt: 1_000_000)
        #expect(!first)
        clock.advance(by: 480)
        let followsOn = clock.begin(chunkAt: 11_000_000 + 1_900_000)
        #expect(followsOn)
        #expect(clock.time(ofFrame: 480) == 11_000_000)
        clock.advance(by: 480)
        let jumped = clock.begin(chunkAt: 21_000_000 + 2_100_000)
        #expect(!jumped)
        #expect(clock.origin == 23_100_000 && clock.count == 0)
    }
}
