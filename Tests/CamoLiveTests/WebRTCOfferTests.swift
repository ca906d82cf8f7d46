import CamoMedia
import Foundation
import Testing

@testable import CamoLive

@Suite("WebRTC offers, errors and queues", .serialized)
struct WebRTCOfferTests {
    static let audioOnly = """
        v=0\r
        o=- 1 0 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=mid:0\r
        a=sendrecv\r
        a=rtpmap:111 OPUS/48000/2\r

        """
    static let vp8Only = """
        v=0\r
        o=- 1 0 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        m=video 9 UDP/TLS/RTP/SAVPF 96 97\r
        c=IN IP4 0.0.0.0\r
        a=mid:0\r
        a=recvonly\r
        a=rtpmap:96 VP8/90000\r
        a=rtpmap:97 rtx/90000\r
        a=fmtp:97 apt=96\r

        """
    static let browserLike = """
        v=0\r
        o=- 1 0 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE a v\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111 0\r
        a=mid:a\r
        a=recvonly\r
        a=rtpmap:111 opus/48000/2\r
        a=rtpmap:0 PCMU/8000\r
        m=video 9 UDP/TLS/RTP/SAVPF 96 98 100 102\r
        a=mid:v\r
        a=recvonly\r
        a=rtpmap:96 VP8/90000\r
        a=rtpmap:98 H264/90000\r
        a=fmtp:98 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f\r
        a=rtpmap:100 H264/90000\r
        a=fmtp:100 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=640032\r
        a=rtpmap:102 H264/90000\r
        a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r

        """

    @Test("a browser-like offer: H.264 with packetization-mode 1 and a common profile is chosen; mids map to m-lines")
    func parsesOffer() throws {
        let offer = try WebRTCOffer(sdp: Self.browserLike)
        #expect(offer.videoIndex == 1)
        #expect(offer.h264PayloadType == 102)
        #expect(offer.audioIndex == 0 && offer.opusPayloadType == 111)
        #expect(!offer.sendsMicrophone)
        #expect(offer.mlineIndex(mid: "v") == 1 && offer.mlineIndex(mid: "x") == nil)
    }

    @Test("garbage, no video and VP8-only offers are refused with their own errors")
    func refusesBadOffers() async throws {
        let view = try WebRTCLiveView(configuration: WebRTCConfiguration(), logger: WebRTCFixture.logger)
        defer { view.stopAll() }
        for garbage in ["", "hello world", "v=0\r\nthis is not sdp\r\n", String(repeating: "\u{0}", count: 64)] {
            await #expect {
                _ = try await view.answer(offer: garbage, id: "g")
            } throws: { error in
                if case .malformedOffer = error as? LiveViewError { return true }
                return false
            }
        }
        await #expect(throws: LiveViewError.noVideo) { _ = try await view.answer(offer: Self.audioOnly, id: "a") }
        await #expect(throws: LiveViewError.noH264) { _ = try await view.answer(offer: Self.vp8Only, id: "v") }
        #expect(view.viewers.isEmpty)
        #expect(LiveViewError.noH264.description.contains("H.264"))
        #expect(LiveViewError.missingElements(elements: ["nicesrc"], packages: ["gstreamer1.0-nice"]).description
            .contains("apt install gstreamer1.0-nice"))
    }

    @Test("unknown viewers: candidates throw, stop and stopTalkback do nothing; talkback needs a speaker")
    func unknownViewer() throws {
        let view = try WebRTCLiveView(configuration: WebRTCConfiguration(), logger: WebRTCFixture.logger)
        #expect(throws: LiveViewError.unknownViewer("nope")) {
            try view.addRemoteCandidates(id: "nope", sdpFragment: "a=mid:0\r\na=candidate:1 1 UDP 1 127.0.0.1 9 typ host\r\n")
        }
        view.stop(id: "nope")
        view.stopTalkback(id: "nope")
        #expect(!view.talkbackSupported)
        #expect(throws: LiveViewError.talkbackUnsupported) { try view.startTalkback(id: "nope") }
    }

    @Test("one talker at a time; a viewer without a microphone cannot talk; trickled candidates are taken")
    func talkerBusy() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camo-busy-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let view = try WebRTCLiveView(configuration: WebRTCConfiguration(speaker: .wavFile(path: path)), logger: WebRTCFixture.logger)
        let first = try WebRTCTestPeer()
        let second = try WebRTCTestPeer()
        let silent = try WebRTCTestPeer(microphone: false)
        defer {
            view.stopAll()
            for peer in [first, second, silent] { peer.stop() }
        }
        _ = try await view.answer(offer: try await first.createOffer(), id: "first")
        _ = try await view.answer(offer: try await second.createOffer(), id: "second")
        _ = try await view.answer(offer: try await silent.createOffer(), id: "silent")
        #expect(view.viewers.map(\.id) == ["first", "second", "silent"])
        try view.addRemoteCandidates(id: "second", sdpFragment: "a=ice-ufrag:abcd\r\na=mid:1\r\na=candidate:1 1 UDP 2122260223 127.0.0.1 50000 typ host\r\n")

        try view.startTalkback(id: "first")
        try view.startTalkback(id: "first")
        #expect(throws: LiveViewError.talkerBusy("first")) { try view.startTalkback(id: "second") }
        #expect(throws: LiveViewError.noMicrophoneInOffer) { try view.startTalkback(id: "silent") }
        view.stopTalkback(id: "first")
        try view.startTalkback(id: "second")
        #expect(view.currentTalker == "second")
        #expect(view.viewers.first { $0.id == "second" }?.talking == true)
        view.stop(id: "second")
        #expect(view.currentTalker == nil)
    }

    @Test("a viewer whose connection never comes up takes no frames, drops none and asks for no keyframes")
    func unconnectedViewerTakesNothing() async throws {
        let limit = 10
        let view = try WebRTCLiveView(configuration: WebRTCConfiguration(videoQueueFrames: limit), logger: WebRTCFixture.logger)
        let keyframes = WebRTCFixture.KeyframeRequests()
        view.onKeyframeNeeded = { keyframes.request() }
        let peer = try WebRTCTestPeer()
        defer {
            view.stopAll()
            peer.stop()
        }
        // The peer never gets the answer: ICE never connects. Queueing would only fill the queue (webrtcbin sends
        // nothing before DTLS is up) and a stuck viewer asking for keyframes would make every viewer's stream all
        // keyframes; so it waits, and its stream starts at a keyframe once connected (the end-to-end tests).
        _ = try await view.answer(offer: try await peer.createOffer(), id: "stuck")
        let requestsAtStart = keyframes.count
        let feed = try WebRTCFixture.VideoFeed(size: VideoSize(width: 320, height: 180))
        for _ in 0..<200 {
            view.pushVideo(try feed.next(forceKeyframe: feed.number == 0 || keyframes.takePending()))
        }
        let stats = try #require(view.viewers.first)
        print("stuck viewer: sent \(stats.videoFramesSent), dropped \(stats.videoFramesDropped)")
        #expect(stats.videoFramesSent == 0 && stats.videoFramesDropped == 0, "\(stats)")
        #expect(keyframes.count == requestsAtStart, "a viewer that is not connected asks for nothing")
    }
}
