import CamoCodec
import CamoMedia
import Foundation
import Logging
import Synchronization
import Testing

@testable import CamoLive

/// What the WebRTC tests share: a logger, an H.264 feed of the test pattern, a keyframe-request counter, the pump.
enum WebRTCFixture {
    static let logger = Logger(label: "camo.live.tests")

    /// Counts the view's keyframe requests; `takePending` tells the feed to force one.
    final class KeyframeRequests: Sendable {
        private let requests = Atomic<Int>(0)
        private let pending = Atomic<Bool>(false)
        var count: Int { requests.load(ordering: .relaxed) }
        func request() {
            requests.add(1, ordering: .relaxed)
            pending.store(true, ordering: .relaxed)
        }
        func takePending() -> Bool { pending.exchange(false, ordering: .relaxed) }
    }

    /// The test pattern encoded with x264, one access unit per call, stamped now on the monotonic clock.
    final class VideoFeed {
        let encoder: H264Encoder
        let size: VideoSize
        private(set) var number: UInt64 = 0

        init(size: VideoSize = VideoSize(width: 640, height: 360)) throws {
            self.size = size
            encoder = try H264Encoder(
                settings: H264EncoderSettings(width: size.width, height: size.height, bitrate: 1_000_000, gopFrames: 30, kind: .x264),
                logger: WebRTCFixture.logger)
        }

        func next(forceKeyframe: Bool) throws -> LiveAccessUnit {
            let now = GstCalls.monotonicNow()
            let frame = TestPattern.frame(number: number, size: size, captureTime: now)
            number += 1
            let packet = try #require(try encoder.encode(frame, forceKeyframe: forceKeyframe))
            return LiveAccessUnit(data: packet.data, isKeyframe: packet.isKeyframe, captureTime: now, size: size)
        }
    }

    /// A quiet 1 kHz stereo tone chunk of `frames` sample frames starting now.
    static func audioChunk(frames: Int, phase: inout Int) -> AudioChunk {
        var samples = [Float](repeating: 0, count: frames * 2)
        for index in 0..<frames {
            let value = Float(0.2 * sin(2 * Double.pi * 1000 * Double(phase + index) / 48000))
            samples[2 * index] = value
            samples[2 * index + 1] = value
        }
        phase += frames
        return AudioChunk(samples: samples, firstSampleTime: GstCalls.monotonicNow())
    }

    /// Feeds video (30 fps) and audio to `view` until `done` holds or `timeout` passes; returns whether it held.
    static func pump(
        _ view: WebRTCLiveView, feed: VideoFeed, keyframes: KeyframeRequests, timeout: Duration, until done: () -> Bool
    ) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var phase = 0
        while clock.now < deadline {
            if done() { return true }
            view.pushVideo(try feed.next(forceKeyframe: feed.number == 0 || keyframes.takePending()))
            view.pushAudio(audioChunk(frames: 1600, phase: &phase))
            try await Task.sleep(for: .milliseconds(33))
        }
        return done()
    }
}
