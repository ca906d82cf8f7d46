import CamoCodec
import CamoMedia
import Testing

@Suite("H.264 decoder on damaged data")
struct DecoderDamageTests {
    /// Decodes `data`, treating a thrown ``H264Error`` like a damaged picture; true when damage was reported.
    static func reportsDamage(_ decoder: H264Decoder, _ data: [UInt8]) -> Bool {
        do {
            _ = try decoder.decode(data, captureTime: 0)
            return decoder.lastPictureDamaged
        } catch {
            print("damaged packet: \(error)")
            return true
        }
    }

    @Test("flipped bytes in a P-frame's slice and a truncated packet are reported; after a keyframe decoding is clean")
    func damagedThenKeyframe() throws {
        let settings = H264EncoderSettings(width: 1280, height: 720, bitrate: 4_000_000, kind: .x264)
        let encoder = try H264Encoder(settings: settings, logger: CodecFixture.logger)
        let decoder = try H264Decoder(logger: CodecFixture.logger)
        for number in 0..<5 {
            let packet = try #require(try encoder.encode(CodecFixture.pattern(number), forceKeyframe: false))
            _ = try #require(try decoder.decode(packet.data, captureTime: 0))
            #expect(!decoder.lastPictureDamaged)
        }

        // Frame 5: a P-frame with 32 bytes inverted in the middle of its slice data.
        var flipped = try #require(try encoder.encode(CodecFixture.pattern(5), forceKeyframe: false))
        #expect(!flipped.isKeyframe)
        let slice = try #require(AnnexB.nalUnits(flipped.data).first { flipped.data[$0.lowerBound] & 0x1F == 1 })
        #expect(slice.count > 200, "the P slice is only \(slice.count) bytes")
        let middle = slice.lowerBound + slice.count / 2
        for index in middle..<min(middle + 32, slice.upperBound) { flipped.data[index] ^= 0xFF }
        #expect(Self.reportsDamage(decoder, flipped.data), "flipped bytes went unnoticed")

        // Frame 6: a P-frame cut in the middle of its last slice. libavcodec reports some cuts and conceals others
        // (x264's zerolatency frames have several slices; where the cut leaves a slice that parses, the missing
        // macroblocks are copied from the previous picture without an error). Either is allowed; a clean-looking
        // frame is not: unreported, the picture must differ from the input (the studio then recovers at the next
        // GOP keyframe, at most 2 s later; the end-to-end damage test shows the reported case).
        let input6 = CodecFixture.pattern(6)
        let whole = try #require(try encoder.encode(input6, forceKeyframe: false))
        let lastSlice = try #require(AnnexB.nalUnits(whole.data).last { whole.data[$0.lowerBound] & 0x1F == 1 })
        let cut = Array(whole.data[..<(lastSlice.lowerBound + lastSlice.count / 2)])
        do {
            let picture = try decoder.decode(cut, captureTime: 0)
            if !decoder.lastPictureDamaged, let picture {
                let psnr = PictureQuality.psnr(input6, picture)
                print("a truncated P-frame was concealed without a report: \(psnr) dB against its input")
                #expect(psnr < 38, "a truncated frame came out clean: the cut removed nothing")
            }
        } catch {
            print("truncated packet reported: \(error)")
        }

        // The stream goes on (no crash, whatever the decoder makes of it) until the sender's keyframe.
        for number in 7..<9 {
            let packet = try #require(try encoder.encode(CodecFixture.pattern(number), forceKeyframe: false))
            _ = Self.reportsDamage(decoder, packet.data)
        }
        for number in 9..<12 {
            let input = CodecFixture.pattern(number)
            let packet = try #require(try encoder.encode(input, forceKeyframe: number == 9))
            #expect(packet.isKeyframe == (number == 9))
            let decoded = try #require(try decoder.decode(packet.data, captureTime: 0), "frame \(number)")
            #expect(!decoder.lastPictureDamaged, "frame \(number)")
            #expect(TestPattern.readFrameNumber(decoded) == UInt64(number))
            let psnr = PictureQuality.psnr(input, decoded)
            print("frame \(number) after the keyframe: \(psnr) dB")
            #expect(psnr >= 38)
        }
    }

    @Test("garbage, an empty packet and a P-frame before any keyframe do not crash the decoder")
    func garbage() throws {
        let decoder = try H264Decoder(logger: CodecFixture.logger)
        #expect(throws: H264Error.self) { try decoder.decode([], captureTime: 0) }
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        _ = Self.reportsDamage(decoder, noise)
        _ = Self.reportsDamage(decoder, [0, 0, 0, 1, 0x65, 0x88, 0x84])

        let settings = H264EncoderSettings(width: 320, height: 180, bitrate: 500_000, kind: .x264)
        let encoder = try H264Encoder(settings: settings, logger: CodecFixture.logger)
        let size = VideoSize(width: 320, height: 180)
        _ = try encoder.encode(CodecFixture.pattern(0, size: size), forceKeyframe: false)
        let predicted = try #require(try encoder.encode(CodecFixture.pattern(1, size: size), forceKeyframe: false))
        // Without its keyframe a P-frame cannot give a picture: nil or a damage report, never a clean frame.
        let late = try H264Decoder(logger: CodecFixture.logger)
        let picture = try? late.decode(predicted.data, captureTime: 0)
        #expect(picture == nil || late.lastPictureDamaged)
    }
}
