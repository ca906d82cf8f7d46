import CamoStudioKit
import CamoWire
import Foundation
import Testing

/// The recorder's reconnection logic, on explicit times (no clock is read).
@Suite("Reconnection: policy, log, schedule, timeline, stall watch")
struct ReconnectionTests {
    private let ms: UInt64 = 1_000_000

    @Test("what is retried: losses, resets, agent errors and goodbyes; not a requested close or a permanent refusal")
    func policy() {
        #expect(!ReconnectPolicy.shouldReconnect(after: .requested))
        #expect(ReconnectPolicy.shouldReconnect(after: .connectionLost("reset by peer")))
        #expect(ReconnectPolicy.shouldReconnect(after: .keepaliveTimeout))
        #expect(ReconnectPolicy.shouldReconnect(after: .protocolError(code: 1, reason: "bad")))
        #expect(ReconnectPolicy.shouldReconnect(after: .agentGoodbye(code: WireErrorCode.shuttingDown.rawValue, reason: "bye")))
        #expect(ReconnectPolicy.shouldReconnect(after: .agentError(code: WireErrorCode.stalled.rawValue, reason: "slow")))
        #expect(ReconnectPolicy.shouldReconnect(after: .agentError(code: WireErrorCode.tooManyConnections.rawValue, reason: "full")))
        for code in [WireErrorCode.notPaired, .unpairedNotAllowed, .unsupportedVersion, .unsupportedPattern] {
            #expect(!ReconnectPolicy.shouldReconnect(after: .agentError(code: code.rawValue, reason: "no")), "\(code)")
            #expect(ReconnectPolicy.isPermanent(.agentRefused(code: code.rawValue, reason: "no")), "\(code)")
            #expect(ReconnectPolicy.isPermanent(.sessionEnded(.agentError(code: code.rawValue, reason: "no"))), "\(code)")
        }
        #expect(ReconnectPolicy.permanentCodes == [2, 3, 4, 13])
        #expect(!ReconnectPolicy.isPermanent(.agentRefused(code: WireErrorCode.tooManyConnections.rawValue, reason: "full")))
        #expect(!ReconnectPolicy.isPermanent(.agentRefused(code: WireErrorCode.shuttingDown.rawValue, reason: "bye")))
        #expect(!ReconnectPolicy.isPermanent(.connectFailed("refused")))
        #expect(!ReconnectPolicy.isPermanent(.handshakeTimeout))
        #expect(!ReconnectPolicy.isPermanent(.sessionEnded(.connectionLost("eof"))))
        #expect(!ReconnectPolicy.isPermanent(.sessionEnded(.requested)))
        #expect(ReconnectPolicy.isPermanent(.invalidArgument("bad size")))
    }

    @Test("the log: addresses in order, one gap per reconnection from the loss to the first media after it")
    func log() {
        var log = ReconnectLog()
        let first = HostPort(host: "169.254.3.1", port: 5000)
        let second = HostPort(host: "192.168.1.5", port: 5000)
        log.established(first)
        log.media(at: 10 * ms)
        #expect(log.reconnects == 0 && log.gapsNanos.isEmpty)
        log.lost(at: 1_000 * ms)
        log.established(second)
        #expect(log.reconnects == 1 && log.gapsNanos == [nil] && log.gapsMs == [nil])
        log.media(at: 1_450 * ms)
        log.media(at: 1_480 * ms)   // only the first media message ends the gap
        #expect(log.gapsNanos == [450 * ms] && log.gapsMs == [450])
        // A session that is lost before any media: both gaps end at the next media message.
        log.lost(at: 2_000 * ms)
        log.established(first)
        log.lost(at: 2_100 * ms)
        log.established(first)
        log.media(at: 2_600 * ms)
        #expect(log.reconnects == 3)
        #expect(log.gapsNanos == [450 * ms, 600 * ms, 500 * ms])
        #expect(log.addresses.map(\.description) == ["169.254.3.1:5000", "192.168.1.5:5000", "169.254.3.1:5000", "169.254.3.1:5000"])
    }

    @Test("the schedule: attempts cut to the deadline, rounds at least the interval apart, nothing at or after the deadline")
    func schedule() {
        let schedule = ReconnectSchedule(deadline: 10_000 * ms, connectTimeoutNanos: 1_000 * ms, roundIntervalNanos: 250 * ms)
        #expect(schedule.attemptTimeout(at: 0) == 1_000 * ms)
        #expect(schedule.attemptTimeout(at: 9_600 * ms) == 400 * ms)
        #expect(schedule.attemptTimeout(at: 10_000 * ms) == nil)
        #expect(schedule.attemptTimeout(at: 11_000 * ms) == nil)
        // A quick round (everything refused at once) waits for the rest of the interval; a slow one goes on at once.
        #expect(schedule.pauseAfterRound(startedAt: 1_000 * ms, now: 1_010 * ms) == 240 * ms)
        #expect(schedule.pauseAfterRound(startedAt: 1_000 * ms, now: 2_500 * ms) == 0)
        #expect(schedule.pauseAfterRound(startedAt: 9_800 * ms, now: 9_810 * ms) == nil, "the next round would start at the deadline")
        #expect(schedule.pauseAfterRound(startedAt: 9_700 * ms, now: 9_710 * ms) == 240 * ms)
    }

    @Test("the agent's clock: a restarted agent continues it; a rebooted host's is shifted after the gap")
    func timeline() {
        var timeline = AgentTimeline()
        #expect(timeline.adjust(5_000 * ms, wallNanosSinceLatest: 0) == 5_000 * ms)
        #expect(timeline.adjust(5_033 * ms, wallNanosSinceLatest: 33 * ms) == 5_033 * ms)
        // A new agent process on the same host: its times are later; nothing changes.
        timeline.beginSession()
        #expect(timeline.adjust(6_500 * ms, wallNanosSinceLatest: 1_400 * ms) == 6_500 * ms)
        #expect(timeline.offsetNanos == 0)
        // A rebooted host starts near zero: the session continues 2 s (wall) after the latest time.
        timeline.beginSession()
        #expect(timeline.adjust(40 * ms, wallNanosSinceLatest: 2_000 * ms) == 8_500 * ms)
        #expect(timeline.offsetNanos == 8_460 * ms)
        #expect(timeline.adjust(73 * ms, wallNanosSinceLatest: 33 * ms) == 8_533 * ms, "the whole session is shifted")
        #expect(timeline.adjust(60 * ms, wallNanosSinceLatest: 0) == 8_520 * ms, "an earlier stamp within the session (audio vs video)")
        #expect(timeline.latest == 8_533 * ms)
        // The same rebooted host after another reconnection: its times still fit with the offset.
        timeline.beginSession()
        #expect(timeline.adjust(1_000 * ms, wallNanosSinceLatest: 500 * ms) == 9_460 * ms)
        #expect(timeline.offsetNanos == 8_460 * ms)
        // A time equal to the latest one is not after it: shifted by at least one nanosecond.
        var equal = AgentTimeline()
        _ = equal.adjust(100, wallNanosSinceLatest: 0)
        equal.beginSession()
        #expect(equal.adjust(100, wallNanosSinceLatest: 0) == 101)
    }

    @Test("the stall watch: silence while streaming, not while paused or while this side does not read")
    func stall() {
        var watch = MediaStallDetector(timeoutNanos: 2_000 * ms, now: 0)
        #expect(!watch.isStalled(at: 2_000 * ms))
        #expect(watch.isStalled(at: 2_001 * ms))
        watch.arrived(at: 1_500 * ms)
        #expect(!watch.isStalled(at: 3_400 * ms))
        #expect(watch.isStalled(at: 3_600 * ms))
        watch.arrived(at: 1_000 * ms)   // an older time never moves the watch back
        #expect(watch.lastArrival == 1_500 * ms)
        // Paused: the agent sends no media; silence is no stall.
        watch.streamState(.pausedByAgent, at: 4_000 * ms)
        #expect(watch.paused && !watch.isStalled(at: 60_000 * ms))
        watch.streamState(.streaming, at: 60_000 * ms)
        #expect(!watch.isStalled(at: 61_000 * ms))
        #expect(watch.isStalled(at: 62_500 * ms))
        watch.streamState(.pausedByStudio, at: 63_000 * ms)
        #expect(!watch.isStalled(at: 70_000 * ms))
        // A lost camera still sends "no signal" frames: the watch runs.
        watch.streamState(.cameraLost, at: 70_000 * ms)
        #expect(!watch.paused && watch.isStalled(at: 72_500 * ms))
        // This side not reading is not the agent's silence.
        watch.notReading(at: 72_500 * ms)
        #expect(!watch.isStalled(at: 73_000 * ms))
    }

    @Test("summaries: old lines without the session keys decode; new ones carry them, gaps rounded, null while open")
    func summaryKeys() throws {
        let old = #"{"agentName":"a","audioPackets":1,"avOffsetMs":null,"codec":"bgra","dropped":0,"fps":30,"frames":3,"height":2,"largestPacket":480,"repeated":0,"rttMs":null,"sampleFrames":480,"smallestPacket":480,"width":2}"#
        let decoded = try JSONDecoder().decode(RecordingSummary.self, from: Data(old.utf8))
        #expect(decoded.reconnects == 0 && decoded.reconnectGapsMs.isEmpty && decoded.addresses.isEmpty)
        #expect(decoded.frames == 3 && decoded.sourceGaps == 0)

        var summary = decoded
        summary.reconnects = 2
        summary.reconnectGapsMs = [1234.56789, nil]
        summary.addresses = ["169.254.3.1:5000", "192.168.1.5:5000", "[fe80::1%3]:5000"]
        let line = try summary.jsonLine()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["reconnects"] as? Int == 2)
        let gaps = try #require(object["reconnectGapsMs"] as? [Any])
        #expect(gaps.count == 2 && gaps[0] as? Double == 1234.568 && gaps[1] is NSNull)
        #expect(object["addresses"] as? [String] == ["169.254.3.1:5000", "192.168.1.5:5000", "[fe80::1%3]:5000"])
        let back = try JSONDecoder().decode(RecordingSummary.self, from: Data(line.utf8))
        #expect(back.reconnects == 2 && back.reconnectGapsMs == [1234.568, nil] && back.addresses == summary.addresses)
    }
}
