import CamoMedia
@testable import CamoProducerKit
import CamoTestSupport
import Foundation
import Synchronization
import Testing

/// Live feeds (WebRTC viewers, the RTSP server) on the controller's shared H.264 rendition, slot by slot on a manual
/// clock with an encoder double.
@Suite("Live feeds: the shared rendition and the audio beside the studios")
struct LiveFeedTests {
    /// What a feed received.
    final class Received: Sendable {
        let video = Mutex<[LiveVideo]>([])
        let audio = Mutex<[AudioChunk]>([])
        var videoCount: Int { video.withLock { $0.count } }
    }

    static func feed(_ controller: CamoController, size: VideoSize = .hd720) throws -> (LiveFeed, Received) {
        let received = Received()
        let feed = try controller.addLiveFeed(
            LiveFeedRequest(size: size, bitrate: 1_500_000),
            video: { unit in received.video.withLock { $0.append(unit) } },
            audio: { chunk in received.audio.withLock { $0.append(chunk) } })
        return (feed, received)
    }

    /// Offers frame `n` (its sequence is `n`) and runs its slot.
    static func slot(_ n: UInt64, _ controller: CamoController, _ clock: ManualClock, size: VideoSize = .hd720) async throws {
        var frame = TestPattern.frame(number: n, size: size, captureTime: clock.now.nanoseconds)
        frame.sourceSequence = n
        try controller.enqueueVideo(frame)
        await clock.waitForSleepers(1)
        clock.advance(by: 33_333_334)
        // The pacer runs the slot on its task; give it a moment to finish before the next offer.
        try await Task.sleep(nanoseconds: 5_000_000)
    }

    @Test func twoFeedsShareOneEncodeStartAtAKeyframeAndStopWhenRemoved() async throws {
        let clock = ManualClock(now: 1_000_000_000)
        let encoder = CountingEncoder(gop: 1_000)
        let controller = ControllerTests.makeController(clock: clock) {
            $0.h264 = H264Options(encoderName: "counting") { _ in encoder }
        }
        try await controller.start()
        let (first, one) = try Self.feed(controller)
        let (_, two) = try Self.feed(controller)
        for n in 0..<20 { try await Self.slot(UInt64(n), controller, clock) }
        let sent = one.video.withLock { $0 }
        #expect(sent.count >= 15, "a frame per slot: \(sent.count)")
        #expect(sent.first?.isKeyframe == true, "a feed starts at a keyframe")
        #expect(sent.allSatisfy { $0.size == .hd720 })
        #expect(two.videoCount == sent.count, "both feeds get every access unit")
        #expect(encoder.encoded.count == sent.count, "one encode per slot for both feeds: \(encoder.encoded.count) for \(sent.count)")
        #expect(sent.filter(\.isKeyframe).count == 1, "one keyframe while nobody asks")

        // A consumer that lost frames asks for a keyframe: the next frame is one, and the feed (and every other
        // consumer on it) lost nothing meanwhile.
        first.requestKeyframe()
        let before = one.videoCount
        for n in 20..<30 { try await Self.slot(UInt64(n), controller, clock) }
        let after = one.video.withLock { Array($0[before...]) }
        #expect(after.first?.isKeyframe == true, "the next frame is the keyframe asked for")
        #expect(after.count >= 8, "no frame is held back meanwhile: \(after.count) of 10")
        #expect(encoder.encoded.filter(\.keyframe).count == 2)

        first.remove()
        let removedAt = one.videoCount
        for n in 30..<35 { try await Self.slot(UInt64(n), controller, clock) }
        #expect(one.videoCount == removedAt, "no callbacks after remove")
        #expect(two.videoCount > removedAt, "the other feed goes on")
        #expect(controller.liveFeeds.count == 1)
        await controller.stop()
    }

    @Test func aSlotThatRepeatsTheCameraFrameIsEncodedAgainForAFeed() async throws {
        let clock = ManualClock(now: 1_000_000_000)
        let encoder = CountingEncoder(gop: 1_000)
        let controller = ControllerTests.makeController(clock: clock) {
            $0.h264 = H264Options(encoderName: "counting") { _ in encoder }
        }
        try await controller.start()
        let (_, received) = try Self.feed(controller)
        for n in 0..<5 { try await Self.slot(UInt64(n), controller, clock) }
        let before = received.videoCount
        // The camera misses three frames: the pacer repeats the last one, and the feed still gets a frame a slot.
        for _ in 0..<3 {
            await clock.waitForSleepers(1)
            clock.advance(by: 33_333_334)
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let repeats = received.video.withLock { Array($0[before...]) }
        #expect(repeats.count >= 3, "a frame each slot while the camera repeats: \(repeats.count)")
        #expect(repeats.allSatisfy { $0.sourceSequence == 4 && !$0.isKeyframe }, "the same camera frame, encoded again")
        // Each gets its own timestamp, a slot apart (an RTP receiver takes equal timestamps for one picture).
        let times = received.video.withLock { $0.map(\.captureTime) }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps always increase: \(times)")
        let last = times.suffix(4)
        #expect(zip(last, last.dropFirst()).allSatisfy { $1 - $0 >= 30_000_000 && $1 - $0 <= 37_000_000 }, "a slot apart: \(Array(last))")
        await controller.stop()
    }

    @Test func privacyStopsFeedsAndMuteSilencesTheirAudio() async throws {
        let clock = ManualClock(now: 1_000_000_000)
        let controller = ControllerTests.makeController(clock: clock) {
            $0.h264 = H264Options(encoderName: "counting") { _ in CountingEncoder() }
        }
        try await controller.start()
        let (_, received) = try Self.feed(controller)
        let tone = AudioChunk(samples: [Float](repeating: 0.5, count: 960), firstSampleTime: 0)
        try controller.enqueuePCMAudio(tone)
        controller.muteMicrophone(saving: false)
        try controller.enqueuePCMAudio(tone)
        controller.unmuteMicrophone()
        let chunks = received.audio.withLock { $0 }
        #expect(chunks.count == 2)
        #expect(chunks.first?.samples.allSatisfy { $0 == 0.5 } == true)
        #expect(chunks.last?.samples.allSatisfy { $0 == 0 } == true, "muted: silence, same size")
        #expect(chunks.last?.sampleFrames == 480)

        controller.pause()
        for n in 0..<5 { try await Self.slot(UInt64(n), controller, clock) }
        try controller.enqueuePCMAudio(tone)
        #expect(received.videoCount == 0, "paused: no video")
        #expect(received.audio.withLock { $0.count } == 2, "paused: no audio")
        controller.resume()
        for n in 5..<10 { try await Self.slot(UInt64(n), controller, clock) }
        #expect(received.videoCount > 0, "resumed")
        await controller.stop()
    }

    @Test func aFeedNeedsH264AndRaisesTheCaptureSize() throws {
        let plain = ControllerTests.makeController()
        #expect(throws: LiveFeedError.self) { _ = try Self.feed(plain) }
        let controller = ControllerTests.makeController { $0.h264 = H264Options(encoderName: "x") { _ in CountingEncoder() } }
        #expect(controller.preferredCaptureSize == .hd720)
        let (feed, _) = try Self.feed(controller, size: VideoSize(width: 1920, height: 1080))
        #expect(controller.preferredCaptureSize == VideoSize(width: 1920, height: 1080))
        feed.remove()
        #expect(controller.preferredCaptureSize == .hd720)
    }
}
