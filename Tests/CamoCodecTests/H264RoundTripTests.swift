import CamoCodec
import CamoMedia
import Logging
import Testing

/// What the codec tests share: a logger, the pattern, and encode-then-decode loops.
enum CodecFixture {
    static let logger = Logger(label: "camo.codec.tests")
    static let size = VideoSize.hd720

    /// Frame `number` of the test pattern at 720p, captured at number/30 s.
    static func pattern(_ number: Int, size: VideoSize = size) -> VideoFrame {
        TestPattern.frame(number: UInt64(number), size: size, captureTime: UInt64(number) * 1_000_000_000 / 30)
    }

    /// Seeded noise, twice the size of a 720p frame's top half in BGRA (alpha included; the encoder ignores it).
    static let noise: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let count = 2 * 1280 * 360 * 4
        var bytes = [UInt8](repeating: 0, count: count)
        for word in 0..<(count / 8) {
            // xorshift64*
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            let value = state &* 0x2545_F491_4F6C_DD1D
            for byte in 0..<8 { bytes[word * 8 + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
        }
        return bytes
    }()

    /// The 720p pattern with its top half (the colour bars) replaced by noise that is new in every frame
    /// (a window into ``noise`` that jumps by 7919 pixels a frame), so the encoder can spend any bit rate.
    static func noisyPattern(_ number: Int) -> VideoFrame {
        var frame = pattern(number)
        let region = 1280 * 360 * 4
        let offset = (number * 7919 * 4) % region
        frame.data.replaceSubrange(0..<region, with: noise[offset..<(offset + region)])
        return frame
    }

    /// Whether `packet` holds an IDR slice (NAL type 5) preceded by an SPS (7) and a PPS (8).
    static func isIDRWithParameterSets(_ packet: H264Packet) -> Bool {
        let types = packet.nalUnitTypes
        guard let idr = types.firstIndex(of: 5), let sps = types.firstIndex(of: 7), let pps = types.firstIndex(of: 8) else {
            return false
        }
        return sps < idr && pps < idr
    }
}

@Suite("H.264 round trips")
struct H264RoundTripTests {
    @Test("x264 at 720p and 4 Mb/s: every frame decodes to its own number, 38 dB or better, keyframes at 0 and 30 with GOP 30")
    func x264RoundTrip() throws {
        let settings = H264EncoderSettings(width: 1280, height: 720, bitrate: 4_000_000, gopFrames: 30, kind: .x264)
        let encoder = try H264Encoder(settings: settings, logger: CodecFixture.logger)
        let decoder = try H264Decoder(logger: CodecFixture.logger)
        var keyframes: [Int64] = []
        var psnrs: [Double] = []
        var bytes = 0
        for number in 0..<60 {
            let input = CodecFixture.pattern(number)
            let packet = try #require(try encoder.encode(input, forceKeyframe: false))
            #expect(packet.frameIndex == Int64(number))
            bytes += packet.data.count
            if packet.isKeyframe {
                keyframes.append(packet.frameIndex)
                #expect(CodecFixture.isIDRWithParameterSets(packet), "keyframe \(number): NAL types \(packet.nalUnitTypes)")
            } else {
                #expect(!packet.nalUnitTypes.contains(5), "frame \(number) is an IDR but not flagged as a keyframe")
            }
            let decoded = try #require(try decoder.decode(packet.data, captureTime: input.captureTime), "frame \(number)")
            #expect(!decoder.lastPictureDamaged)
            #expect(decoded.width == 1280 && decoded.height == 720 && decoded.captureTime == input.captureTime)
            #expect(TestPattern.readFrameNumber(decoded) == UInt64(number))
            psnrs.append(PictureQuality.psnr(input, decoded))
        }
        let mean = psnrs.reduce(0, +) / Double(psnrs.count)
        print("x264 720p 4 Mb/s GOP 30: mean luma PSNR \(mean) dB (min \(psnrs.min() ?? 0)), \(bytes * 8 / 2) b/s")
        #expect(mean >= 38)
        #expect(keyframes == [0, 30])
        #expect(encoder.framesEncoded == 60)
        #expect(decoder.framesDecoded == 60)
    }

    @Test("a forced keyframe is an IDR with SPS and PPS; the frames between are not keyframes")
    func forcedKeyframe() throws {
        let settings = H264EncoderSettings(width: 1280, height: 720, bitrate: 4_000_000, kind: .x264)
        let encoder = try H264Encoder(settings: settings, logger: CodecFixture.logger)
        let decoder = try H264Decoder(logger: CodecFixture.logger)
        for number in 0..<16 {
            let force = number == 11
            let packet = try #require(try encoder.encode(CodecFixture.pattern(number), forceKeyframe: force))
            #expect(packet.isKeyframe == (number == 0 || force), "frame \(number): NAL types \(packet.nalUnitTypes)")
            if packet.isKeyframe { #expect(CodecFixture.isIDRWithParameterSets(packet)) }
            let decoded = try #require(try decoder.decode(packet.data, captureTime: 0))
            #expect(TestPattern.readFrameNumber(decoded) == UInt64(number))
        }
    }

    @Test("setBitrate: 30 frames at 0.5 Mb/s are more than 3x smaller than 30 at 6 Mb/s (the pattern under moving noise)")
    func bitrateChange() throws {
        let settings = H264EncoderSettings(width: 1280, height: 720, bitrate: 6_000_000, kind: .x264)
        let encoder = try H264Encoder(settings: settings, logger: CodecFixture.logger)
        func meanSize(_ range: Range<Int>) throws -> Double {
            var total = 0
            for number in range {
                total += try #require(try encoder.encode(CodecFixture.noisyPattern(number), forceKeyframe: false)).data.count
            }
            return Double(total) / Double(range.count)
        }
        // Frame 0 (the first IDR) and frame 30 (the first at the new rate, and a flash frame) stay out.
        _ = try meanSize(0..<1)
        let high = try meanSize(1..<30)
        encoder.setBitrate(500_000)
        #expect(encoder.bitrate == 500_000)
        _ = try meanSize(30..<31)
        let low = try meanSize(31..<60)
        print("x264 mean packet at 6 Mb/s: \(Int(high)) bytes, at 0.5 Mb/s: \(Int(low)) bytes (ratio \(high / low))")
        #expect(high > 3 * low)
        encoder.setBitrate(10)
        #expect(encoder.bitrate == H264EncoderSettings.minimumBitrate)
    }

    @Test("openh264 round trip through H264Decoder, or a stated reason and a throwing resolve")
    func openH264RoundTrip() throws {
        let record = try #require(H264Encoders.probe().first { $0.kind == .openh264 })
        guard record.available else {
            print("openh264 unavailable: \(record.detail)")
            #expect(throws: H264Error.self) { try H264Encoders.resolve(.kind(.openh264)) }
            return
        }
        print("openh264: \(record.detail)")
        #expect(try H264Encoders.resolve(.kind(.openh264)) == .openh264)
        let settings = H264EncoderSettings(width: 1280, height: 720, bitrate: 4_000_000, gopFrames: 30, kind: .openh264)
        let encoder = try H264Encoder(settings: settings, logger: CodecFixture.logger)
        let decoder = try H264Decoder(logger: CodecFixture.logger)
        var keyframes: [Int64] = []
        var psnrs: [Double] = []
        for number in 0..<45 {
            let input = CodecFixture.pattern(number)
            let packet = try #require(try encoder.encode(input, forceKeyframe: number == 40))
            if packet.isKeyframe {
                keyframes.append(packet.frameIndex)
                #expect(CodecFixture.isIDRWithParameterSets(packet), "keyframe \(number): NAL types \(packet.nalUnitTypes)")
            }
            let decoded = try #require(try decoder.decode(packet.data, captureTime: 0), "frame \(number)")
            #expect(!decoder.lastPictureDamaged)
            #expect(TestPattern.readFrameNumber(decoded) == UInt64(number))
            psnrs.append(PictureQuality.psnr(input, decoded))
        }
        let mean = psnrs.reduce(0, +) / Double(psnrs.count)
        print("openh264 720p 4 Mb/s: mean luma PSNR \(mean) dB (min \(psnrs.min() ?? 0)), keyframes \(keyframes)")
        #expect(keyframes == [0, 30, 40])
        #expect(mean >= 35)

        encoder.setBitrate(500_000)
        var low = 0
        for number in 45..<75 {
            low += try #require(try encoder.encode(CodecFixture.pattern(number), forceKeyframe: false)).data.count
        }
        print("openh264 mean packet after setBitrate(500_000): \(low / 30) bytes")
        #expect(low / 30 < 500_000 / 8 / 30 * 2)
    }

    @Test("PSNR: infinity for identical frames, NaN for different sizes, finite and lower for a changed picture")
    func psnr() {
        let a = CodecFixture.pattern(3, size: VideoSize(width: 320, height: 180))
        #expect(PictureQuality.psnr(a, a) == .infinity)
        #expect(PictureQuality.psnr(a, CodecFixture.pattern(3, size: VideoSize(width: 160, height: 90))).isNaN)
        let other = PictureQuality.psnr(a, CodecFixture.pattern(4, size: VideoSize(width: 320, height: 180)))
        #expect(other.isFinite && other < 30)
    }
}
