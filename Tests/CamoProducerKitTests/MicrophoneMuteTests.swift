import CamoMedia
@testable import CamoProducerKit
import CamoStudioKit
import CamoTestSupport
import Foundation
import Logging
import Testing

/// Muting the microphone: studios get silence at the same cadence (sizes, timestamps, sequence). The control socket's
/// `mute` command and the status fields that show it are the agent's (CamoAgentKitTests' AgentControlTests).
@Suite("Microphone mute", .timeLimit(.minutes(1)))
struct MicrophoneMuteTests {
    /// Nanoseconds per sample frame at 48 kHz, as the packetizer derives packet times.
    static let nanosPerFrame = 1_000_000_000.0 / 48_000.0

    /// A known, never-zero signal: frame `n` is `(n + 1, -(n + 1))` (exact in float32 up to 2^24).
    static func signal(frames: Range<Int>) -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity(frames.count * 2)
        for n in frames {
            samples += [Float(n + 1), -Float(n + 1)]
        }
        return samples
    }

    /// Waits for the agent's first `streamState`. `SessionHandler.admit` flushes the agent hello (which ends
    /// `StudioClient.connect`) before `applyPause()` sets `takesMedia`, and sends the stream state right after;
    /// audio enqueued before that is silently dropped by `enqueuePCMAudio`. Once the stream state has arrived,
    /// every chunk enqueued is delivered.
    static func waitUntilStreaming(_ events: inout StudioEventStream.AsyncIterator) async -> Bool {
        while let event = await events.next() {
            switch event {
            case .streamState(let state):
                #expect(state == .streaming, "the agent says \(state)")
                return state == .streaming
            case .closed(let reason):
                Issue.record("the session closed before streaming: \(reason)")
                return false
            default:
                continue
            }
        }
        Issue.record("the events ended before the agent's stream state")
        return false
    }

    /// The next `count` audio packets the studio receives (fewer, with an issue, if the session closes).
    static func collectAudio(_ events: inout StudioEventStream.AsyncIterator, count: Int) async -> [ReceivedAudioPacket] {
        var packets: [ReceivedAudioPacket] = []
        guard count > 0 else { return packets }
        while let event = await events.next() {
            switch event {
            case .audio(let packet):
                packets.append(packet)
                if packets.count == count { return packets }
            case .closed(let reason):
                Issue.record("the session closed after \(packets.count) of \(count) audio packets: \(reason)")
                return packets
            default:
                continue
            }
        }
        return packets
    }

    /// Every packet has exactly `frames` frames (and bytes for them), sequences are consecutive, and each packet
    /// starts `frames` frames after the previous one (within 1 ns) and within 1 ns of `base + index · frames`.
    static func expectCadence(_ packets: [ReceivedAudioPacket], frames: Int, base: UInt64) {
        let step = Double(frames) * nanosPerFrame
        for (index, packet) in packets.enumerated() {
            #expect(packet.sampleFrames == frames, "packet \(index)")
            #expect(packet.data.count == frames * 2 * MemoryLayout<Float>.size, "packet \(index)")
            let ideal = Double(base) + Double(index) * step
            #expect(abs(Double(packet.firstSampleTime) - ideal) <= 1, "packet \(index) at \(packet.firstSampleTime), ideal \(ideal)")
            guard index > 0 else { continue }
            let previous = packets[index - 1]
            #expect(packet.sequence == previous.sequence &+ 1, "packet \(index): sequence \(packet.sequence) after \(previous.sequence)")
            let gap = Double(packet.firstSampleTime) - Double(previous.firstSampleTime)
            #expect(abs(gap - step) <= 1, "packet \(index): \(gap) ns after the previous one, expected \(step)")
        }
    }

    // MARK: Audio on the wire

    @Test func mutedChunksArriveAsSilenceWithTheSameCadence() async throws {
        let controller = ControllerTests.makeController(clock: ManualClock())
        try await controller.start()
        let port = try #require(controller.port)
        let studio = try await ControllerTests.studio(port, name: "muted", samples: 480)
        try await ControllerTests.waitForState(controller, "one connection") { _ in controller.connections.count == 1 }
        var events = studio.events.makeAsyncIterator()
        try #require(await Self.waitUntilStreaming(&events))

        // 10 ms chunks of 480 frames, one packet each: 10 live, 10 muted, 10 live again.
        let frames = 480
        let base: UInt64 = 5_000_000_000
        var chunkIndex = 0
        func enqueue(_ count: Int) throws {
            for _ in 0..<count {
                let first = chunkIndex * frames
                let time = base + UInt64(first) * 1_000_000_000 / 48_000
                try controller.enqueuePCMAudio(
                    AudioChunk(samples: Self.signal(frames: first..<(first + frames)), firstSampleTime: time))
                chunkIndex += 1
            }
        }

        #expect(!controller.isMicrophoneMuted, "a controller starts unmuted")
        try enqueue(10)
        controller.muteMicrophone()
        #expect(controller.isMicrophoneMuted)
        controller.muteMicrophone()
        #expect(controller.isMicrophoneMuted, "muting twice keeps it muted")
        try enqueue(10)
        controller.unmuteMicrophone()
        #expect(!controller.isMicrophoneMuted)
        try enqueue(10)

        let packets = await Self.collectAudio(&events, count: 30)
        try #require(packets.count == 30)
        Self.expectCadence(packets, frames: frames, base: base)
        for (index, packet) in packets.enumerated() {
            let samples = packet.samples
            #expect(samples.count == frames * 2, "packet \(index)")
            if (10..<20).contains(index) {
                #expect(samples.allSatisfy { $0 == 0 }, "packet \(index) was enqueued while muted: it must be silence")
            } else {
                #expect(
                    samples == Self.signal(frames: (index * frames)..<((index + 1) * frames)),
                    "packet \(index) was enqueued unmuted: it must carry the signal unchanged")
                #expect(samples.allSatisfy { $0 != 0 }, "packet \(index)")
            }
        }

        await studio.close()
        await controller.stop()
    }

    /// Chunks (256 frames) that do not line up with the packets (480 frames): mute applies per chunk, so the
    /// stream is the signal with exactly the muted chunks zeroed, and packet times stay on the 48 kHz grid.
    @Test func muteAppliesPerChunkWhenChunksAndPacketsDoNotAlign() async throws {
        let controller = ControllerTests.makeController(clock: ManualClock())
        try await controller.start()
        let port = try #require(controller.port)
        let studio = try await ControllerTests.studio(port, name: "unaligned", samples: 480)
        try await ControllerTests.waitForState(controller, "one connection") { _ in controller.connections.count == 1 }
        var events = studio.events.makeAsyncIterator()
        try #require(await Self.waitUntilStreaming(&events))

        let chunkFrames = 256
        let packetFrames = 480
        let base: UInt64 = 7_000_000_000
        var expected: [Float] = []
        var chunkIndex = 0
        func enqueue(_ count: Int, muted: Bool) throws {
            for _ in 0..<count {
                let first = chunkIndex * chunkFrames
                let time = base + UInt64(first) * 1_000_000_000 / 48_000
                let samples = Self.signal(frames: first..<(first + chunkFrames))
                try controller.enqueuePCMAudio(AudioChunk(samples: samples, firstSampleTime: time))
                expected += muted ? [Float](repeating: 0, count: samples.count) : samples
                chunkIndex += 1
            }
        }

        // 45 chunks × 256 = 11 520 frames = 24 packets; the mute edges fall inside packets.
        try enqueue(15, muted: false)
        controller.muteMicrophone()
        try enqueue(15, muted: true)
        controller.unmuteMicrophone()
        try enqueue(15, muted: false)
        #expect(expected.count == 24 * packetFrames * 2)

        let packets = await Self.collectAudio(&events, count: 24)
        try #require(packets.count == 24)
        Self.expectCadence(packets, frames: packetFrames, base: base)
        let received = packets.flatMap(\.samples)
        #expect(received.count == expected.count)
        let firstDifference = zip(received, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(
            firstDifference == nil,
            "sample \(firstDifference?.offset ?? -1): got \(firstDifference?.element.0 ?? 0), expected \(firstDifference?.element.1 ?? 0)")
        // The muted stretch: from the first sample of chunk 15 to the last of chunk 29, and nothing else is zero.
        let mutedSamples = (15 * chunkFrames * 2)..<(30 * chunkFrames * 2)
        #expect(received[mutedSamples].allSatisfy { $0 == 0 })
        #expect(received[..<mutedSamples.lowerBound].allSatisfy { $0 != 0 })
        #expect(received[mutedSamples.upperBound...].allSatisfy { $0 != 0 })

        await studio.close()
        await controller.stop()
    }
}
