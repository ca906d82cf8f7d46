import CamoCodec
import CamoMedia
import Testing

@Suite("Encoder probing, choice and bad input")
struct EncoderChoiceTests {
    @Test("probe: x264 works here, the hardware encoders do not and say why; auto resolves to x264")
    func probe() throws {
        let records = H264Encoders.probe()
        for record in records { print("\(record.kind.rawValue): \(record.available ? "available" : "unavailable") - \(record.detail)") }
        #expect(records.map(\.kind) == H264EncoderKind.allCases)
        let x264 = try #require(records.first { $0.kind == .x264 })
        #expect(x264.available)
        #expect(x264.detail.contains("libx264"))
        for kind in [H264EncoderKind.v4l2m2m, .vaapi] {
            let record = try #require(records.first { $0.kind == kind })
            #expect(!record.available)
            #expect(!record.detail.isEmpty)
            let error = #expect(throws: H264Error.self) { try H264Encoders.resolve(.kind(kind)) }
            if case .unavailable(let reason) = error {
                #expect(reason.contains(record.detail))
            } else {
                Issue.record("resolve(.\(kind)) threw \(String(describing: error))")
            }
        }
        #expect(try H264Encoders.resolve(.auto) == .x264)
        #expect(try H264Encoders.resolve(.kind(.x264)) == .x264)
        // Cached: the second call gives the same answer.
        #expect(H264Encoders.probe().map(\.detail) == records.map(\.detail))
    }

    @Test("--encoder arguments")
    func arguments() {
        #expect(H264EncoderChoice(argument: "auto") == .auto)
        #expect(H264EncoderChoice(argument: "x264") == .kind(.x264))
        #expect(H264EncoderChoice(argument: "openh264") == .kind(.openh264))
        #expect(H264EncoderChoice(argument: "v4l2m2m") == .kind(.v4l2m2m))
        #expect(H264EncoderChoice(argument: "VAAPI") == .kind(.vaapi))
        #expect(H264EncoderChoice(argument: "nvenc") == nil)
        #expect(H264EncoderChoice(argument: "") == nil)
        #expect(H264EncoderChoice.arguments == ["auto", "x264", "openh264", "v4l2m2m", "vaapi"])
        for choice in [H264EncoderChoice.auto, .kind(.x264), .kind(.vaapi)] {
            #expect(H264EncoderChoice(argument: choice.description) == choice)
        }
    }

    @Test("a frame of the wrong size, format or length is a badFrame error", arguments: [H264EncoderKind.x264, .openh264])
    func badFrames(kind: H264EncoderKind) throws {
        guard H264Encoders.availability(of: kind).available else {
            print("\(kind.rawValue) unavailable: \(H264Encoders.availability(of: kind).detail)")
            return
        }
        let size = VideoSize(width: 320, height: 180)
        let encoder = try H264Encoder(
            settings: H264EncoderSettings(width: 320, height: 180, bitrate: 500_000, kind: kind), logger: CodecFixture.logger)
        let good = CodecFixture.pattern(0, size: size)
        var rgba = good
        rgba.pixelFormat = .rgba
        var short = good
        short.data.removeLast(4)
        let padded = VideoFrame(
            width: 320, height: 180, bytesPerRow: 320 * 4 + 64, data: [UInt8](repeating: 128, count: (320 * 4 + 64) * 180),
            captureTime: 0)
        for frame in [CodecFixture.pattern(0, size: VideoSize(width: 640, height: 360)), rgba, short] {
            let error = #expect(throws: H264Error.self) { try encoder.encode(frame, forceKeyframe: false) }
            guard case .badFrame(let reason) = error else {
                Issue.record("\(frame.width)x\(frame.height) \(frame.pixelFormat): \(String(describing: error))")
                continue
            }
            #expect(!reason.isEmpty)
        }
        #expect(encoder.framesEncoded == 0)
        // A padded stride is fine, and the encoder goes on after the rejected frames.
        #expect(try encoder.encode(padded, forceKeyframe: false)?.isKeyframe == true)
        #expect(try encoder.encode(good, forceKeyframe: false) != nil)
        #expect(encoder.framesEncoded == 2)
    }

    @Test("settings without pixels, odd, oversized or without bits are an open error", arguments: [H264EncoderKind.x264, .openh264])
    func badSettings(kind: H264EncoderKind) {
        let cases = [
            H264EncoderSettings(width: 0, height: 0, bitrate: 1_000_000, kind: kind),
            H264EncoderSettings(width: 321, height: 180, bitrate: 1_000_000, kind: kind),
            H264EncoderSettings(width: 8192, height: 180, bitrate: 1_000_000, kind: kind),
            H264EncoderSettings(width: 320, height: 180, bitrate: 0, kind: kind),
            H264EncoderSettings(width: 320, height: 180, bitrate: 1_000_000, fps: 0, kind: kind),
            H264EncoderSettings(width: 320, height: 180, bitrate: 1_000_000, gopFrames: 0, kind: kind),
        ]
        for settings in cases {
            let error = #expect(throws: H264Error.self) { try H264Encoder(settings: settings, logger: CodecFixture.logger) }
            guard case .open(let reason) = error else {
                Issue.record("\(settings): \(String(describing: error))")
                continue
            }
            #expect(!reason.isEmpty)
            #expect(error?.description.hasSuffix(".") == true)
        }
    }

    @Test("an unavailable hardware kind cannot be opened directly either")
    func hardwareOpenFails() {
        for kind in [H264EncoderKind.v4l2m2m, .vaapi] where !H264Encoders.availability(of: kind).available {
            let settings = H264EncoderSettings(width: 640, height: 480, bitrate: 1_000_000, kind: kind)
            #expect(throws: H264Error.self) { try H264Encoder(settings: settings, logger: CodecFixture.logger) }
        }
    }
}
