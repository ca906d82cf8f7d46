@testable import CamoProducerKit
import CamoWire
import Testing

@Suite("SessionOutbox: order, newest wins, audio between fragments")
struct SessionOutboxTests {
    private func video(_ tag: UInt8, bytes: Int = 200_000, isRepeat: Bool = false) -> OutgoingVideo {
        OutgoingVideo(header: [0x10, tag], data: [UInt8](repeating: tag, count: bytes), isRepeat: isRepeat)
    }

    @Test func videoIsFragmentedAndReassemblesExactly() {
        var outbox = SessionOutbox()
        let frame = video(7, bytes: 150_000)
        outbox.offerVideo(frame)
        var received: [UInt8] = []
        var fragments = 0
        while let fragment = outbox.nextFragment(maxPayload: 65_517) {
            #expect(fragment.channel == .video)
            #expect(fragment.bytes.count <= 65_517)
            received += fragment.bytes
            fragments += 1
            if fragment.isFinal { break }
        }
        #expect(fragments == 3)
        #expect(received == frame.header + frame.data)
        #expect(outbox.sentFrames == 1)
        #expect(outbox.isEmpty)
    }

    @Test func audioGoesBetweenTheFragmentsOfAFrame() {
        var outbox = SessionOutbox()
        outbox.offerVideo(video(1, bytes: 300_000))
        let first = outbox.nextFragment(maxPayload: 65_517)
        #expect(first?.channel == .video && first?.isFinal == false)
        let accepted = outbox.enqueueAudio([0x20, 1, 2, 3])
        #expect(accepted)
        let second = outbox.nextFragment(maxPayload: 65_517)
        #expect(second == OutboxFragment(channel: .audio, isFinal: true, bytes: [0x20, 1, 2, 3]))
        let third = outbox.nextFragment(maxPayload: 65_517)
        #expect(third?.channel == .video)
    }

    @Test func controlComesFirst() {
        var outbox = SessionOutbox()
        outbox.offerVideo(video(1))
        let accepted = outbox.enqueueAudio([0x20])
        #expect(accepted)
        outbox.enqueueControl([0x05, 9])
        #expect(outbox.nextFragment(maxPayload: 100)?.channel == .control)
        #expect(outbox.nextFragment(maxPayload: 100)?.channel == .audio)
        #expect(outbox.nextFragment(maxPayload: 100)?.channel == .video)
    }

    @Test func newestFrameWinsAndDropsAreCounted() {
        var outbox = SessionOutbox()
        outbox.offerVideo(video(1))                    // starts at once
        _ = outbox.nextFragment(maxPayload: 65_517)    // frame 1 is in flight
        outbox.offerVideo(video(2))                    // waits
        outbox.offerVideo(video(3))                    // replaces 2
        outbox.offerVideo(video(4, isRepeat: true))    // replaces 3
        #expect(outbox.droppedFrames == 2)
        var frames: [UInt8] = []
        var current: [UInt8] = []
        while let fragment = outbox.nextFragment(maxPayload: 65_517) {
            current += fragment.bytes
            if fragment.isFinal {
                frames.append(current[current.count - 1])
                current = []
            }
        }
        #expect(frames == [1, 4])
        #expect(outbox.sentFrames == 2)
        #expect(outbox.sentRepeats == 1)
    }

    @Test func aFrameNotYetStartedIsReplacedByANewerOne() {
        var outbox = SessionOutbox()
        outbox.offerVideo(video(1))
        outbox.offerVideo(video(2))
        #expect(outbox.droppedFrames == 1)
        let first = outbox.nextFragment(maxPayload: 65_517)
        #expect(first?.bytes.prefix(2) == [0x10, 2])
        outbox.discardWaitingVideo()  // frame 2 has started: it is finished, not cut
        var rest = 0
        while outbox.nextFragment(maxPayload: 65_517) != nil { rest += 1 }
        #expect(rest == 3)
        #expect(outbox.sentFrames == 1)
    }

    @Test func stalledAudioIsRefusedNotBuffered() {
        var outbox = SessionOutbox()
        outbox.maxAudioBytes = 10_000
        let packet = [UInt8](repeating: 0, count: 4_000)
        let results = (0..<3).map { _ in outbox.enqueueAudio(packet) }
        #expect(results == [true, true, false])
        #expect(outbox.queuedAudioBytes == 8_000)
    }

    @Test func pauseKeepsAStartedMessageWhole() {
        var outbox = SessionOutbox()
        let first1 = outbox.enqueueAudio([UInt8](repeating: 1, count: 100))
        let second2 = outbox.enqueueAudio([UInt8](repeating: 2, count: 100))
        #expect(first1 && second2)
        let first = outbox.nextFragment(maxPayload: 60)
        #expect(first?.isFinal == false)
        outbox.discardAudio()
        let rest = outbox.nextFragment(maxPayload: 60)
        #expect(rest == OutboxFragment(channel: .audio, isFinal: true, bytes: [UInt8](repeating: 1, count: 40)))
        #expect(outbox.nextFragment(maxPayload: 60) == nil)
        #expect(outbox.queuedAudioBytes == 0)
    }
}
