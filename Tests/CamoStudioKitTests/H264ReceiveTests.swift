@testable import CamoStudioKit
import CamoWire
import Testing

@Suite("H.264 on the studio: receiver reports, keyframe requests, transport figures")
struct H264ReceiveTests {
    @Test func reportsCarryWhatArrivedAndCountGaps() {
        var builder = ReceiverReportBuilder(now: 1_000)
        builder.received(bytes: 500)
        #expect(builder.video(sequence: 10, captureTime: 5, bytes: 400, now: 1_100) == 0)
        #expect(builder.video(sequence: 13, captureTime: 6, bytes: 100, now: 1_200) == 2)
        builder.received(bytes: 20)
        let report = builder.take(now: 1_500)
        #expect(report.sequence == 0 && report.intervalNanos == 500 && report.bytesReceived == 520 && report.framesLost == 2)
        #expect(report.frames.map(\.sequence) == [10, 13] && report.frames.map(\.receivedAt) == [1_100, 1_200])
        let next = builder.take(now: 1_600)
        #expect(next.sequence == 1 && next.frames.isEmpty && next.bytesReceived == 0 && next.intervalNanos == 100)
        for index in 0..<100 { builder.video(sequence: 14 + UInt32(index), captureTime: 0, bytes: 1, now: 0) }
        #expect(builder.take(now: 1_700).frames.count == ReceiverReport.maxFrames, "the newest 64 are kept")
    }

    @Test func keyframeRequestsWaitHalfASecond() {
        var requester = KeyframeRequester()
        let first = requester.shouldRequest(now: 0)
        let tooSoon = requester.shouldRequest(now: 400_000_000)
        let later = requester.shouldRequest(now: 500_000_000)
        #expect(first, "no picture yet")
        #expect(!tooSoon && later)
        requester.gotKeyframe()
        let decoding = requester.shouldRequest(now: 2_000_000_000)
        #expect(!decoding, "nothing to ask while decoding")
        requester.lost()
        let lost = requester.shouldRequest(now: 2_000_000_001)
        #expect(lost && requester.requests == 3)
    }

    @Test func transportFiguresUseTheBestClockSample() throws {
        var stats = TransportStatistics()
        // The agent's clock is 1 s ahead of the studio's; each frame arrives 20 ms after capture, decoded 5 ms later.
        let ahead: UInt64 = 1_000_000_000
        stats.clockSample(offsetNanos: 999_000_000, roundTripNanos: 9_000_000)
        stats.clockSample(offsetNanos: Int64(ahead), roundTripNanos: 1_000_000)
        stats.clockSample(offsetNanos: 900_000_000, roundTripNanos: 50_000_000)
        for frame in 0..<60 {
            let capture = ahead + 5_000_000_000 + UInt64(frame) * 33_333_334
            let received = capture - ahead + 20_000_000
            stats.frame(slotTime: capture, captureTime: capture, receivedAt: received, decodedAt: received + 5_000_000,
                        bytes: 1_000, isNew: frame % 10 != 9, isKeyframe: frame == 0, isSkipped: frame % 10 == 9)
        }
        stats.keyframeRequested()
        stats.patternPSNR(40)
        stats.patternPSNR(.infinity)
        let summary = stats.summary
        let receive = try #require(summary.captureToReceiveMs)
        #expect(receive.p50 == 20 && receive.p99 == 20 && receive.count == 54)
        #expect(summary.captureToDecodedMs?.p95 == 25)
        #expect(summary.clockOffsetMs == 1_000 && summary.clockOffsetRoundTripMs == 1)
        #expect(summary.skipped == 6 && summary.keyframes == 1 && summary.keyframeRequests == 1)
        #expect(summary.bitrateKbps == [240, 240], "30 frames of 1000 bytes a second")
        #expect(summary.patternPSNRMin == 40 && summary.patternPSNRFrames == 2)
    }
}

@Suite("A 1.0 agent's refusal of a 1.1 hello says what to do")
struct OlderAgentTests {
    @Test func theTrailingBytesRefusalIsExplained() {
        let refusal = WireError(code: .protocolViolation, reason: "studioHello has 2 unexpected trailing bytes")
        #expect(StudioClientHandler.explained(refusal).reason.contains("update camo-agent"))
        let other = WireError(code: .protocolViolation, reason: "video flags 0x10 set bits that v1 does not define")
        #expect(StudioClientHandler.explained(other) == other)
    }
}
