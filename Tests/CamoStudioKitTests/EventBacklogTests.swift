@testable import CamoStudioKit
import Testing

@Suite("Event backlog")
struct EventBacklogTests {
    /// Counts resume calls from any thread.
    final class Counter: @unchecked Sendable {
        // Only touched from the test's task (remove() calls resume synchronously).
        var value = 0
    }

    @Test("pauses once above the high-water mark, resumes once at or below the low-water mark")
    func watermarks() {
        let backlog = EventBacklog(highWater: 100, lowWater: 40)
        let resumes = Counter()
        backlog.setResume { resumes.value += 1 }
        #expect(!backlog.add(60))
        #expect(!backlog.add(40))            // 100 is not above 100
        #expect(backlog.add(1))              // 101: pause
        #expect(!backlog.add(50))            // already paused
        backlog.remove(50)
        backlog.remove(60)                   // 41: still paused
        #expect(resumes.value == 0)
        backlog.remove(1)                    // 40: resume
        #expect(resumes.value == 1)
        backlog.remove(40)
        #expect(resumes.value == 1)
        #expect(backlog.bytes == 0)
    }

    @Test("media events weigh their bytes")
    func weights() {
        let audio = StudioEvent.audio(ReceivedAudioPacket(sequence: 0, firstSampleTime: 0, sampleFrames: 2, data: [UInt8](repeating: 0, count: 16)))
        #expect(EventBacklog.weight(of: audio) == 16)
        let video = StudioEvent.video(ReceivedVideoFrame(sequence: 0, slotTime: 0, captureTime: 0, width: 2, height: 2,
                                                         bytesPerRow: 8, bgra: [UInt8](repeating: 0, count: 16)))
        #expect(EventBacklog.weight(of: video) == 16)
        #expect(EventBacklog.weight(of: .closed(.requested)) == 64)
    }
}
