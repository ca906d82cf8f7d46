import CamoStudioKit
import Foundation
import Testing

@Suite("Recording statistics and summary")
struct RecordingSummaryTests {
    private let slot: UInt64 = 1_000_000_000 / 30

    @Test("sequence gaps count as dropped frames; repeats are counted")
    func drops() {
        var stats = RecordingStatistics()
        for (seq, rep) in [(10, false), (11, true), (14, false), (15, false), (20, true)] {
            stats.recordFrame(sequence: UInt32(seq), slotTime: UInt64(seq) * slot, isRepeat: rep)
        }
        #expect(stats.frames == 5)
        #expect(stats.dropped == 2 + 4)
        #expect(stats.repeated == 2)
    }

    @Test("source sequences: new frames, duplicates without the repeat flag, skipped camera frames, restarts")
    func sourceCounters() throws {
        var stats = RecordingStatistics()
        let frames: [(repeat: Bool, noSignal: Bool, source: UInt32)] = [
            (false, false, 10), (true, false, 10), (false, false, 11), (false, false, 11),  // one duplicate
            (false, false, 14),  // 12, 13 skipped
            (false, true, 14), (true, true, 14),  // camera lost: filler
            (false, false, 0), (false, false, 1),  // the camera restarted its count
        ]
        for (index, frame) in frames.enumerated() {
            stats.recordFrame(sequence: UInt32(index), slotTime: UInt64(index) * 33_333_333, isRepeat: frame.repeat,
                              noSignal: frame.noSignal, sourceSequence: frame.source)
        }
        #expect(stats.sourceFrames == 6)
        #expect(stats.sourceDuplicates == 1)
        #expect(stats.sourceGaps == 2)
        #expect(stats.noSignal == 2)
        let summary = RecordingSummary(statistics: stats, avOffsetMs: nil, seconds: 1, agentName: "a", codec: "bgra", width: 2, height: 2)
        let decoded = try JSONDecoder().decode(RecordingSummary.self, from: Data(try summary.jsonLine().utf8))
        #expect(decoded.sourceFrames == 6 && decoded.sourceDuplicates == 1 && decoded.sourceGaps == 2 && decoded.noSignal == 2)
    }

    @Test("the frame that ends the span: the slots dropped before the span's end count, those after it do not")
    func spanEnd() {
        let slotTime = { (k: UInt64) in 7_000 + k * 1_000_000_000 / 30 }
        // 10 s from slot 0: slots 0...299 are inside. Received 0...279, then the agent dropped 280...309 and sent 310.
        var stats = RecordingStatistics()
        for k in UInt64(0)..<280 { stats.recordFrame(sequence: UInt32(k), slotTime: slotTime(k), isRepeat: false) }
        stats.recordSpanEnd(sequence: 310, slotTime: slotTime(310), spanEnd: slotTime(0) + 10_000_000_000)
        #expect(stats.frames == 280)
        #expect(stats.dropped == 20, "slots 280...299 were dropped inside the span; 300...309 are outside")
        #expect(stats.frames + stats.dropped == 300)
        // The next slot after the last one received ends the span: nothing was dropped.
        var whole = RecordingStatistics()
        for k in UInt64(0)..<300 { whole.recordFrame(sequence: UInt32(k), slotTime: slotTime(k), isRepeat: false) }
        whole.recordSpanEnd(sequence: 300, slotTime: slotTime(300), spanEnd: slotTime(0) + 10_000_000_000)
        #expect(whole.dropped == 0)
        // A frame still inside the span is not an end, and nothing before the first frame counts.
        var early = RecordingStatistics()
        early.recordSpanEnd(sequence: 5, slotTime: slotTime(5), spanEnd: slotTime(0))
        early.recordFrame(sequence: 0, slotTime: slotTime(0), isRepeat: false)
        early.recordSpanEnd(sequence: 200, slotTime: slotTime(200), spanEnd: slotTime(250))
        #expect(early.dropped == 0)
    }

    @Test("a sequence that does not advance counts no drop; wrap-around counts the gap")
    func oddSequences() {
        var stats = RecordingStatistics()
        stats.recordFrame(sequence: 5, slotTime: 0, isRepeat: false)
        stats.recordFrame(sequence: 5, slotTime: 0, isRepeat: false)
        stats.recordFrame(sequence: 4, slotTime: 0, isRepeat: false)
        #expect(stats.dropped == 0)
        var wrap = RecordingStatistics()
        wrap.recordFrame(sequence: UInt32.max, slotTime: 0, isRepeat: false)
        wrap.recordFrame(sequence: 1, slotTime: 0, isRepeat: false)
        #expect(wrap.dropped == 1)
    }

    @Test("fps is frames over the slot-time span")
    func fps() {
        var stats = RecordingStatistics()
        for k in 0..<300 { stats.recordFrame(sequence: UInt32(k), slotTime: 7_000 + UInt64(k) * 1_000_000_000 / 30, isRepeat: false) }
        #expect(abs(stats.fps(fallbackSeconds: 10) - 30) < 1e-6)

        // Every other frame lost: 15 fps over the same span.
        var half = RecordingStatistics()
        for k in stride(from: 0, to: 300, by: 2) { half.recordFrame(sequence: UInt32(k), slotTime: UInt64(k) * slot, isRepeat: false) }
        #expect(abs(half.fps(fallbackSeconds: 10) - 15) < 0.001)
        #expect(half.dropped == 149)
    }

    @Test("fps falls back to frames over seconds without a span")
    func fpsFallback() {
        var stats = RecordingStatistics()
        #expect(stats.fps(fallbackSeconds: 10) == 0)
        stats.recordFrame(sequence: 0, slotTime: 100, isRepeat: false)
        #expect(stats.fps(fallbackSeconds: 10) == 0.1)
        #expect(stats.fps(fallbackSeconds: 0) == 0)
    }

    @Test("audio packet sizes and round trips")
    func audioAndRTT() {
        var stats = RecordingStatistics()
        #expect(stats.smallestPacket == nil)
        #expect(stats.meanRoundTripMs == nil)
        for n in [1024, 1024, 512, 2048] { stats.recordAudio(sampleFrames: n) }
        #expect(stats.audioPackets == 4)
        #expect(stats.sampleFrames == 4608)
        #expect(stats.smallestPacket == 512)
        #expect(stats.largestPacket == 2048)
        stats.recordRoundTrip(nanoseconds: 1_000_000)
        stats.recordRoundTrip(nanoseconds: 2_000_000)
        #expect(stats.meanRoundTripMs == 1.5)
    }

    @Test("summary JSON is one line with every key, nulls included")
    func json() throws {
        var stats = RecordingStatistics()
        stats.recordFrame(sequence: 0, slotTime: 0, isRepeat: false)
        stats.recordFrame(sequence: 3, slotTime: 100_000_000, isRepeat: true)
        let summary = RecordingSummary(statistics: stats, avOffsetMs: nil, seconds: 10,
                                       agentName: "lab \"cam\"", codec: "jpeg", width: 640, height: 360)
        let line = try summary.jsonLine()
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["frames", "fps", "dropped", "repeated", "audioPackets", "sampleFrames", "smallestPacket",
                                     "largestPacket", "rttMs", "avOffsetMs", "agentName", "codec", "width", "height",
                                     "noSignal", "sourceFrames", "sourceDuplicates", "sourceGaps"])
        #expect(object["avOffsetMs"] is NSNull)
        #expect(object["smallestPacket"] is NSNull)
        #expect(object["frames"] as? Int == 2)
        #expect(object["dropped"] as? Int == 2)
        #expect(object["repeated"] as? Int == 1)
        #expect(object["fps"] as? Double == 10)
        #expect(object["agentName"] as? String == "lab \"cam\"")
        let decoded = try JSONDecoder().decode(RecordingSummary.self, from: Data(line.utf8))
        #expect(decoded == summary)
    }
}

@Suite("Frame hash")
struct FrameHashTests {
    @Test("FNV-1a 64 reference values")
    func reference() {
        #expect(FrameHash.fnv1a([]) == "cbf29ce484222325")
        #expect(FrameHash.fnv1a(Array("a".utf8)) == "af63dc4c8601ec8c")
        #expect(FrameHash.fnv1a(Array("foobar".utf8)) == "85944171f73967e8")
    }

    @Test("SHA-256 reference values")
    func sha256Reference() {
        #expect(FrameHash.sha256([], rowBytes: 0, rows: 0, stride: 0) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(FrameHash.sha256(Array("abc".utf8), rowBytes: 3, rows: 1, stride: 3) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("row padding is ignored")
    func padding() {
        let tight: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let padded: [UInt8] = [1, 2, 3, 4, 0xEE, 0xEE, 5, 6, 7, 8, 0xEE, 0xEE]
        #expect(FrameHash.fnv1a(padded, rowBytes: 4, rows: 2, stride: 6) == FrameHash.fnv1a(tight))
        #expect(FrameHash.sha256(padded, rowBytes: 4, rows: 2, stride: 6) == FrameHash.sha256(tight, rowBytes: 8, rows: 1, stride: 8))
    }
}
