import CamoCapture
import CamoMedia
import CamoTestSupport
import Testing

@Suite("Synthetic sources on a manual clock")
struct SyntheticSourceTests {
    static let start: UInt64 = 2_000_000_000

    @Test func videoDeliversFrameNAtItsScheduledTime() async {
        let clock = ManualClock(now: Self.start - 1)
        let source = SyntheticVideoSource()
        let frames = Locked<[VideoFrame]>([])
        let size = Locked(VideoSize(width: 320, height: 180))
        let task = Task {
            await source.run(clock: clock, startTime: Self.start, size: { size.withLock { $0 } }) { frame in
                frames.withLock { $0.append(frame) }
            }
        }
        for n in UInt64(0)..<40 {
            await clock.waitForSleepers(1)
            if n == 20 { size.withLock { $0 = VideoSize(width: 640, height: 360) } }
            clock.advance(to: SyntheticVideoSource.frameTime(n, startTime: Self.start))
            while frames.withLock({ $0.count }) < Int(n) + 1 { await Task.yield() }
        }
        await clock.waitForSleepers(1)
        task.cancel()
        await task.value

        let delivered = frames.withLock { $0 }
        #expect(delivered.count == 40)
        #expect(source.framesDelivered == 40)
        #expect(source.framesSkipped == 0)
        for (n, frame) in delivered.enumerated() {
            #expect(frame.captureTime == Self.start + UInt64(n) * 1_000_000_000 / 30)
            #expect(TestPattern.readFrameNumber(frame) == UInt64(n))
            #expect(TestPattern.isFlash(frame) == (n % 30 == 0))
            #expect(frame.width == (n < 20 ? 320 : 640))
            #expect((try? MediaContract.validate(frame)) != nil)
        }
    }

    @Test func videoSkipsFramesItWokeUpTooLateFor() async {
        let clock = ManualClock(now: Self.start)
        let source = SyntheticVideoSource()
        let frames = Locked<[VideoFrame]>([])
        let task = Task {
            await source.run(clock: clock, startTime: Self.start, size: { VideoSize(width: 160, height: 90) }) { frame in
                frames.withLock { $0.append(frame) }
            }
        }
        // Frame 0 is due at once; then jump a whole second.
        await clock.waitForSleepers(1)
        clock.advance(by: 1_000_000_000)
        await clock.waitForSleepers(1)
        task.cancel()
        await task.value
        let numbers = frames.withLock { $0.map { TestPattern.readFrameNumber($0) } }
        #expect(numbers == [0, 30])
        #expect(source.framesSkipped == 29)
        #expect(frames.withLock { $0.last?.captureTime } == Self.start + 1_000_000_000)
    }

    @Test func audioDeliversEachChunkAtItsEnd() async {
        let clock = ManualClock(now: Self.start)
        let source = SyntheticAudioSource()
        let chunks = Locked<[AudioChunk]>([])
        let task = Task {
            await source.run(clock: clock, startTime: Self.start) { chunk in chunks.withLock { $0.append(chunk) } }
        }
        await clock.waitForSleepers(1)
        clock.advance(by: 9_999_999)  // not yet the end of chunk 0
        #expect(chunks.withLock { $0.count } == 0)
        for i in UInt64(0)..<150 {
            await clock.waitForSleepers(1)
            #expect(chunks.withLock { $0.count } == Int(i))
            clock.advance(to: Self.start + (i + 1) * 10_000_000)
            while chunks.withLock({ $0.count }) < Int(i) + 1 { await Task.yield() }
        }
        await clock.waitForSleepers(1)
        task.cancel()
        await task.value

        let delivered = chunks.withLock { $0 }
        #expect(delivered.count == 150)
        #expect(source.chunksDelivered == 150)
        for (i, chunk) in delivered.enumerated() {
            #expect(chunk.sampleFrames == 480)
            #expect(chunk.samples.count == 960)
            #expect(chunk.firstSampleTime == Self.start + UInt64(i) * 10_000_000)
            let first = UInt64(i * 480)
            for offset in [0, 1, 250, 479] {
                #expect(chunk.samples[2 * offset] == ToneGenerator.sample(at: first + UInt64(offset), channel: 0))
                #expect(chunk.samples[2 * offset + 1] == ToneGenerator.sample(at: first + UInt64(offset), channel: 1))
            }
        }
        // Clicks land at the start of each second: chunks 0 and 100.
        #expect(delivered[100].samples[0] == 0.9)
    }

    @Test func audioCatchesUpWithoutSkipping() async {
        let clock = ManualClock(now: Self.start)
        let source = SyntheticAudioSource()
        let chunks = Locked<[AudioChunk]>([])
        let task = Task {
            await source.run(clock: clock, startTime: Self.start) { chunk in chunks.withLock { $0.append(chunk) } }
        }
        await clock.waitForSleepers(1)
        clock.advance(by: 55_000_000)  // 5.5 chunks late
        await clock.waitForSleepers(1)
        #expect(chunks.withLock { $0.map(\.firstSampleTime) } == (0..<5).map { Self.start + UInt64($0) * 10_000_000 })
        #expect(clock.nextDeadline == Self.start + 60_000_000)
        task.cancel()
        await task.value
    }
}
