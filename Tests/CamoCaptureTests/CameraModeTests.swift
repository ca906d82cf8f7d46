import CamoCapture
import CamoMedia
import Testing

/// Mode choice as a plain function of what a camera offers, checked against vivid's webcam input and
/// against typical USB webcams (the offers are written out as `v4l2-ctl --list-formats-ext` reports them).
@Suite("Camera mode choice")
struct CameraModeTests {
    static func rates(_ fps: [Double]) -> [CameraFrameInterval] {
        fps.map { rate in
            rate == 12.5 ? .discrete(Fraction(2, 25)) : .discrete(Fraction(1, Int(rate)))
        }
    }

    /// vivid's "Webcam 0" input: every format has the same sizes and rates.
    static func vividWebcam(_ formats: [FourCC] = [.yuyv, .uyvy, .nv12, .rgb24, .xrgb32LE]) -> [CameraFormat] {
        let sizes: [CameraFrameSize] = [
            .discrete(width: 320, height: 180, intervals: rates([1, 2, 4, 5, 10, 12.5, 15, 25, 30, 40, 50, 60])),
            .discrete(width: 640, height: 360, intervals: rates([1, 2, 4, 5, 10, 12.5, 15, 25, 30, 40])),
            .discrete(width: 640, height: 480, intervals: rates([1, 2, 4, 5, 10, 12.5, 15, 25])),
            .discrete(width: 1280, height: 720, intervals: rates([1, 2, 4, 5, 10, 12.5])),
            .discrete(width: 1920, height: 1080, intervals: rates([1, 2, 4, 5])),
        ]
        return formats.map { CameraFormat(fourcc: $0, name: $0.description, isCompressed: false, sizes: sizes) }
    }

    /// A typical UVC webcam: YUYV is slow above 640x480, MJPEG reaches 30 fps up to 1080p.
    static let uvcWebcam: [CameraFormat] = [
        CameraFormat(fourcc: .yuyv, name: "YUYV 4:2:2", isCompressed: false, sizes: [
            .discrete(width: 640, height: 480, intervals: rates([30, 15])),
            .discrete(width: 1280, height: 720, intervals: rates([10, 5])),
            .discrete(width: 1920, height: 1080, intervals: rates([5])),
        ]),
        CameraFormat(fourcc: .mjpeg, name: "Motion-JPEG", isCompressed: true, sizes: [
            .discrete(width: 640, height: 480, intervals: rates([30, 15])),
            .discrete(width: 1280, height: 720, intervals: rates([60, 30])),
            .discrete(width: 1920, height: 1080, intervals: rates([30])),
        ]),
    ]

    func choose(_ formats: [CameraFormat], _ request: CameraModeRequest) throws -> CameraModeChoice {
        let modes = CameraModeChooser.candidates(formats: formats, request: request, currentRate: nil)
        return try CameraModeChooser.choose(modes, request: request, path: "/dev/video0", canConvert: CameraSource.canConvert)
    }

    @Test("vivid webcam at 640x360: YUYV 640x360 at 30 fps, meeting the request")
    func vividAt360() throws {
        let choice = try choose(Self.vividWebcam(), CameraModeRequest(size: VideoSize(width: 640, height: 360)))
        #expect(choice.mode.fourcc == .yuyv)
        #expect(choice.mode.size == VideoSize(width: 640, height: 360))
        #expect(choice.mode.interval == Fraction(1, 30))
        #expect(choice.meetsRequest)
    }

    @Test("vivid webcam at 720p: no 720p mode reaches 30 fps, so 640x360 at 30 beats 1280x720 at 12.5, and the reason says so")
    func vividAt720() throws {
        let choice = try choose(Self.vividWebcam(), CameraModeRequest(size: .hd720))
        #expect(choice.mode.size == VideoSize(width: 640, height: 360))
        #expect(choice.mode.framesPerSecond == 30)
        #expect(!choice.meetsRequest)
        #expect(choice.reason.contains("12.5 fps"), "\(choice.reason)")
        #expect(choice.reason.contains("scaled"), "\(choice.reason)")
    }

    @Test("a 30 fps mode at the size beats any format preference: MJPEG 720p30 over YUYV 720p10")
    func rateBeatsFormat() throws {
        let choice = try choose(Self.uvcWebcam, CameraModeRequest(size: .hd720))
        #expect(choice.mode.fourcc == .mjpeg)
        #expect(choice.mode.size == .hd720)
        #expect(choice.mode.framesPerSecond == 30, "30 before 60: nothing to decimate")
        #expect(choice.meetsRequest)
    }

    @Test("among modes that reach 30 fps, cheap YUV beats MJPEG")
    func cheapBeatsMJPEG() throws {
        let choice = try choose(Self.uvcWebcam, CameraModeRequest(size: VideoSize(width: 640, height: 480)))
        #expect(choice.mode.fourcc == .yuyv)
        #expect(choice.mode.size == VideoSize(width: 640, height: 480))
    }

    @Test("MJPEG beats the rest (RGB) when both reach the rate")
    func mjpegBeatsRGB() throws {
        let sizes: [CameraFrameSize] = [.discrete(width: 1280, height: 720, intervals: Self.rates([30]))]
        let offer = [
            CameraFormat(fourcc: .rgb24, name: "RGB3", isCompressed: false, sizes: sizes),
            CameraFormat(fourcc: .mjpeg, name: "MJPG", isCompressed: true, sizes: sizes),
        ]
        #expect(try choose(offer, CameraModeRequest(size: .hd720)).mode.fourcc == .mjpeg)
    }

    @Test("asked for 60 fps at 640x360, vivid's fastest (40 fps) is taken and said to be below the request")
    func sixty() throws {
        let choice = try choose(Self.vividWebcam(), CameraModeRequest(size: VideoSize(width: 640, height: 360), framesPerSecond: 60))
        #expect(choice.mode.size == VideoSize(width: 640, height: 360))
        #expect(choice.mode.framesPerSecond == 40)
        #expect(!choice.meetsRequest)
    }

    @Test("asked for 15 fps, the 15 fps mode is chosen (not 30)")
    func fifteen() throws {
        let choice = try choose(Self.vividWebcam(), CameraModeRequest(size: VideoSize(width: 640, height: 360), framesPerSecond: 15))
        #expect(choice.mode.framesPerSecond == 15)
        #expect(choice.meetsRequest)
    }

    @Test("a forced format is honoured; one the camera lacks is a clear error; one we cannot convert too")
    func forcedFormat() throws {
        let nv12 = try choose(Self.vividWebcam(), CameraModeRequest(size: VideoSize(width: 640, height: 360), format: .nv12))
        #expect(nv12.mode.fourcc == .nv12)
        #expect(throws: CameraError.self) {
            try choose(Self.vividWebcam([.yuyv]), CameraModeRequest(size: .hd720, format: .mjpeg))
        }
        do {
            _ = try choose(Self.vividWebcam([.yuyv]), CameraModeRequest(size: .hd720, format: .mjpeg))
        } catch {
            #expect("\(error)".contains("does not offer MJPG"), "\(error)")
            #expect("\(error)".contains("YUYV"), "\(error)")
        }
        let hsv = try #require(FourCC("HSV3"))
        do {
            _ = try choose(Self.vividWebcam([hsv]), CameraModeRequest(size: .hd720))
            Issue.record("an HSV-only camera was accepted")
        } catch {
            #expect("\(error)".contains("no format this agent can convert"), "\(error)")
        }
    }

    @Test("stepwise sizes (vivid's HDMI input) use the requested size and the driver's current rate")
    func stepwise() throws {
        let range = CameraFrameSize.Stepwise(minWidth: 16, maxWidth: 16384, stepWidth: 16, minHeight: 16, maxHeight: 8640, stepHeight: 16)
        let offer = [CameraFormat(fourcc: .yuyv, name: "YUYV", isCompressed: false, sizes: [.stepwise(range)])]
        let request = CameraModeRequest(size: .hd720)
        let modes = CameraModeChooser.candidates(formats: offer, request: request, currentRate: 30)
        let choice = try CameraModeChooser.choose(modes, request: request, path: "/dev/video0", canConvert: CameraSource.canConvert)
        #expect(choice.mode.size == .hd720)
        #expect(choice.mode.interval == nil)
        #expect(choice.meetsRequest)
        #expect(range.nearest(to: VideoSize(width: 1000, height: 10)) == VideoSize(width: 992, height: 16))
    }

    @Test("a continuous interval range is asked for the target rate")
    func intervalRange() throws {
        let offer = [CameraFormat(fourcc: .nv12, name: "NV12", isCompressed: false, sizes: [
            .discrete(width: 1280, height: 720, intervals: [.range(min: Fraction(1, 60), max: Fraction(1, 1))]),
        ])]
        let choice = try choose(offer, CameraModeRequest(size: .hd720))
        #expect(choice.mode.interval.map { abs($0.framesPerSecond - 30) < 0.01 } == true)
    }
}

@Suite("Camera controls")
struct CameraControlTests {
    let powerLine = CameraControl(
        id: 0x0098_0918, name: "power_line_frequency", label: "Power Line Frequency", kind: .menu, minimum: 0, maximum: 2,
        step: 1, defaultValue: 1, value: 1, isReadOnly: false, isInactive: false,
        menu: [.init(value: 0, name: "Disabled"), .init(value: 1, name: "50 Hz"), .init(value: 2, name: "60 Hz")])

    @Test func namesLikeV4L2Ctl() {
        #expect(CameraControl.normalizedName("White Balance Temperature") == "white_balance_temperature")
        #expect(CameraControl.normalizedName("Exposure Time, Absolute") == "exposure_time_absolute")
        #expect(CameraControl.normalizedName("Power Line Frequency") == "power_line_frequency")
    }

    @Test func parsesNumbersMenuNamesAndBooleans() throws {
        #expect(try powerLine.parse("2") == 2)
        #expect(try powerLine.parse("60 hz") == 2)
        #expect(throws: CameraControlError.self) { try powerLine.parse("3") }
        #expect(throws: CameraControlError.self) { try powerLine.parse("70 Hz") }
        var toggle = powerLine
        toggle.kind = .boolean
        toggle.minimum = 0
        toggle.maximum = 1
        toggle.menu = []
        #expect(try toggle.parse("on") == 1)
        #expect(try toggle.parse("false") == 0)
        var brightness = toggle
        brightness.kind = .integer
        brightness.maximum = 255
        #expect(try brightness.parse("200") == 200)
        do {
            _ = try brightness.parse("300")
            Issue.record("300 accepted")
        } catch {
            #expect(error.description.contains("0...255"), "\(error)")
        }
    }

    @Test func commonControlsComeFirst() {
        var other = powerLine
        other.name = "zzz_vendor"
        var brightness = powerLine
        brightness.name = "brightness"
        #expect(CommonControls.ordered([other, powerLine, brightness]).map(\.name) == ["brightness", "power_line_frequency", "zzz_vendor"])
    }
}

@Suite("No-signal picture")
struct NoSignalFrameTests {
    @Test("the last frame dimmed to a third, with a white label in the middle, at the same size")
    func dimmedWithLabel() {
        let size = VideoSize(width: 320, height: 180)
        let last = VideoFrame(
            width: 320, height: 180, bytesPerRow: 1280, data: [UInt8](repeating: 150, count: 320 * 180 * 4), captureTime: 5,
            sourceSequence: 77)
        let frame = NoSignalFrame.make(from: last, size: size, captureTime: 9, sourceSequence: 77)
        #expect(frame.size == size)
        #expect(frame.data.count == 320 * 180 * 4)
        #expect(Array(frame.data[0..<4]) == [50, 50, 50, 255])
        let white = stride(from: 0, to: frame.data.count, by: 4).filter { frame.data[$0] == 255 && frame.data[$0 + 1] == 255 }.count
        #expect(white > 300, "the label is drawn")
        #expect(frame.captureTime == 9)
        #expect(throws: Never.self) { try MediaContract.validate(frame) }
    }

    @Test("without a last frame: grey with the label")
    func grey() {
        let frame = NoSignalFrame.make(from: nil, size: .hd720, captureTime: 0, sourceSequence: 0)
        #expect(Array(frame.data[0..<4]) == [48, 48, 48, 255])
    }
}
