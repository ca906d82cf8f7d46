import CamoMedia
import Foundation
import Testing

@testable import CamoLive

/// Against GStreamer's own webrtcbin as the browser, in-process, over host candidates on this machine.
@Suite("WebRTC live view with a real peer", .serialized)
struct WebRTCLiveViewTests {
    @Test("a browser peer decodes the pattern's frames in order and gets Opus audio")
    func videoReachesPeer() async throws {
        let view = try WebRTCLiveView(configuration: WebRTCConfiguration(), logger: WebRTCFixture.logger)
        let keyframes = WebRTCFixture.KeyframeRequests()
        view.onKeyframeNeeded = { keyframes.request() }
        let peer = try WebRTCTestPeer()
        defer {
            view.stopAll()
            peer.stop()
        }
        let offer = try await peer.createOffer()
        let answer = try await view.answer(offer: offer, id: "browser")
        #expect(answer.contains("a=candidate:"), "the answer carries no candidates:\n\(answer)")
        #expect(answer.contains("H264/90000"))
        #expect(keyframes.count >= 1, "a new viewer asks for a keyframe")
        try await peer.accept(answer: answer)

        let feed = try WebRTCFixture.VideoFeed()
        let arrived = try await WebRTCFixture.pump(view, feed: feed, keyframes: keyframes, timeout: .seconds(15)) {
            peer.received.withLock { $0.frameNumbers.count >= 20 && $0.audioBuffers >= 10 }
        }
        let received = peer.received.withLock { $0 }
        #expect(arrived, "frames \(received.frameNumbers.count), unreadable \(received.unreadableFrames), audio \(received.audioBuffers)")
        #expect(received.frameNumbers == received.frameNumbers.sorted() && Set(received.frameNumbers).count == received.frameNumbers.count,
                "frame numbers do not advance: \(received.frameNumbers)")
        #expect((received.frameNumbers.last ?? 0) > (received.frameNumbers.first ?? 0))
        let stats = try #require(view.viewers.first)
        #expect(stats.id == "browser" && stats.state == "connected")
        #expect(stats.videoFramesSent >= 20 && stats.audioPackets > 0)
        view.stop(id: "browser")
        view.stop(id: "browser")
        #expect(view.viewers.isEmpty)
    }

    @Test("talkback: the peer's 440 Hz microphone reaches the speaker only while talkback is on")
    func talkbackPlaysMicrophone() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camo-talkback-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let view = try WebRTCLiveView(configuration: WebRTCConfiguration(speaker: .wavFile(path: path)), logger: WebRTCFixture.logger)
        #expect(view.talkbackSupported)
        let keyframes = WebRTCFixture.KeyframeRequests()
        view.onKeyframeNeeded = { keyframes.request() }
        let peer = try WebRTCTestPeer()
        defer {
            view.stopAll()
            peer.stop()
        }
        let answer = try await view.answer(offer: try await peer.createOffer(), id: "talker")
        try await peer.accept(answer: answer)
        let feed = try WebRTCFixture.VideoFeed(size: VideoSize(width: 320, height: 180))

        // Off: connected and the microphone flowing, nothing is written.
        let connected = try await WebRTCFixture.pump(view, feed: feed, keyframes: keyframes, timeout: .seconds(10)) { peer.isConnected }
        #expect(connected)
        _ = try await WebRTCFixture.pump(view, feed: feed, keyframes: keyframes, timeout: .milliseconds(500)) { false }
        #expect(!FileManager.default.fileExists(atPath: path), "the speaker was written while talkback was off")

        // On for ~1.5 s, then off: the WAV holds the tone.
        view.setSpeaker(volumePercent: 100, muted: false)
        try view.startTalkback(id: "talker")
        #expect(view.currentTalker == "talker")
        _ = try await WebRTCFixture.pump(view, feed: feed, keyframes: keyframes, timeout: .milliseconds(1500)) { false }
        view.stopTalkback(id: "talker")
        #expect(view.currentTalker == nil)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let wav = try #require(WAVReader.firstChannel(of: bytes))
        #expect(wav.rate == 48000)
        #expect(wav.samples.count > 24000, "only \(wav.samples.count) samples of talkback")
        let body = wav.samples.dropFirst(4800)
        let peak = body.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 3000, "the talkback is silent (peak \(peak))")
        let frequency = WAVReader.frequency(of: body, rate: wav.rate)
        #expect(abs(frequency - 440) <= 5, "talkback plays \(frequency) Hz")

        // Off again: nothing more is written.
        try FileManager.default.removeItem(atPath: path)
        _ = try await WebRTCFixture.pump(view, feed: feed, keyframes: keyframes, timeout: .milliseconds(500)) { false }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

