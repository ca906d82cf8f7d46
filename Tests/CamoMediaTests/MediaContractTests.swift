import CamoMedia
import Testing

@Suite("The media contract refuses what it must")
struct MediaContractTests {
    private func frame(width: Int = 4, height: Int = 2, bytesPerRow: Int? = nil, format: PixelFormat = .bgra, count: Int? = nil)
        -> VideoFrame
    {
        let stride = bytesPerRow ?? width * 4
        return VideoFrame(
            width: width, height: height, bytesPerRow: stride, pixelFormat: format,
            data: [UInt8](repeating: 0, count: count ?? stride * height), captureTime: 0)
    }

    @Test func acceptsTightAndPaddedBGRA() throws {
        try MediaContract.validate(frame())
        try MediaContract.validate(frame(bytesPerRow: 64))
        try MediaContract.validate(frame(width: 4096, height: 1))
    }

    @Test func refusesOtherPixelFormats() {
        for format in [PixelFormat.rgba, .yuyv, .nv12, .other(0x4750_4A4D)] {
            #expect(throws: ContractError.notBGRA(format)) { try MediaContract.validate(frame(format: format)) }
        }
    }

    @Test(arguments: [(0, 10), (10, 0), (-1, 10), (4097, 10), (10, 4097)])
    func refusesSizesOutsideTheRange(width: Int, height: Int) {
        let bad = VideoFrame(width: width, height: height, bytesPerRow: 0, data: [], captureTime: 0)
        #expect(throws: ContractError.invalidSize(width: width, height: height)) { try MediaContract.validate(bad) }
    }

    @Test func refusesAShortStride() {
        #expect(throws: ContractError.strideTooSmall(bytesPerRow: 15, minimum: 16)) {
            try MediaContract.validate(frame(bytesPerRow: 15))
        }
    }

    @Test func refusesABufferThatIsNotExactlyStrideTimesHeight() {
        #expect(throws: ContractError.bufferLength(expected: 32, actual: 31)) { try MediaContract.validate(frame(count: 31)) }
        #expect(throws: ContractError.bufferLength(expected: 32, actual: 33)) { try MediaContract.validate(frame(count: 33)) }
        // One byte short of a padded last row is still refused: the length must be exact.
        #expect(throws: ContractError.bufferLength(expected: 64, actual: 48)) {
            try MediaContract.validate(frame(bytesPerRow: 32, count: 48))
        }
    }

    @Test func strideOverflowIsABufferLengthErrorNotACrash() {
        let huge = VideoFrame(width: 4, height: 4096, bytesPerRow: Int.max / 2, data: [0], captureTime: 0)
        #expect(throws: ContractError.bufferLength(expected: Int.max, actual: 1)) { try MediaContract.validate(huge) }
    }

    @Test func audioMustBeWholeStereoFloatFrames() throws {
        try MediaContract.validateAudio(byteCount: 8)
        try MediaContract.validateAudio(byteCount: 3840)
        #expect(throws: ContractError.audioEmpty) { try MediaContract.validateAudio(byteCount: 0) }
        for count in [1, 4, 7, 9, 12, 3841, -8] {
            #expect(throws: ContractError.audioNotWholeSampleFrames(byteCount: count)) {
                try MediaContract.validateAudio(byteCount: count)
            }
        }
    }

    @Test func descriptionsSayWhatIsWrongAndWhatToDo() {
        let errors: [ContractError] = [
            .notBGRA(.other(0x4750_4A4D)), .invalidSize(width: 0, height: 5), .strideTooSmall(bytesPerRow: 1, minimum: 4),
            .bufferLength(expected: 8, actual: 7), .audioNotWholeSampleFrames(byteCount: 7), .audioEmpty,
            .samplesRequiredOutOfRange(63),
        ]
        for error in errors {
            #expect(error.description.count > 40)
        }
        #expect(ContractError.notBGRA(.other(0x4750_4A4D)).description.contains("MJPG"))
        #expect(ContractError.bufferLength(expected: 8, actual: 7).description.contains("7 bytes"))
        #expect(ContractError.samplesRequiredOutOfRange(63).description.contains("64"))
    }
}
