import CamoMedia
@testable import CamoProducerKit
import CamoWire
import Logging
import Testing

@Suite("VideoPreparer: shared work per slot, repeats reuse their bytes")
struct VideoPreparerTests {
    private func paced(slot: UInt64, input: UInt64, isRepeat: Bool) -> PacedFrame {
        PacedFrame(
            frame: TestPattern.frame(number: input, size: VideoSize(width: 320, height: 180), captureTime: input),
            slot: slot, slotTime: slot * 33_333_333, isRepeat: isRepeat, inputIndex: input)
    }

    @Test func aRepeatedSlotReusesTheEncodedFrameWithANewHeader() throws {
        var preparer = VideoPreparer(logger: Logger(label: "test"))
        let jpeg = VideoSettings(size: VideoSize(width: 160, height: 90), codec: .jpeg, jpegQuality: 80)
        let raw = VideoSettings(size: VideoSize(width: 320, height: 180), codec: .bgra, jpegQuality: 80)

        preparer.beginSlot()
        let firstPrepared = preparer.prepare(paced(slot: 1, input: 0, isRepeat: false), for: jpeg)
        let first = try #require(firstPrepared)
        _ = preparer.prepare(paced(slot: 1, input: 0, isRepeat: false), for: jpeg)  // a second session, same setting
        _ = preparer.prepare(paced(slot: 1, input: 0, isRepeat: false), for: raw)
        #expect(preparer.encodeCount == 2, "one encode per setting per input frame")

        preparer.beginSlot()
        let repeatedPrepared = preparer.prepare(paced(slot: 2, input: 0, isRepeat: true), for: jpeg)
        let repeated = try #require(repeatedPrepared)
        #expect(preparer.encodeCount == 2, "a repeat is not encoded again")
        #expect(repeated.data == first.data)
        #expect(repeated.header != first.header, "the header carries the new slot and the repeat flag")
        #expect(repeated.isRepeat)

        preparer.beginSlot()
        let nextPrepared = preparer.prepare(paced(slot: 3, input: 1, isRepeat: false), for: jpeg)
        let next = try #require(nextPrepared)
        #expect(preparer.encodeCount == 3)
        #expect(next.data != first.data)
    }
}
