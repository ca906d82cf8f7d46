import Testing

@testable import CamoWire

@Suite("Application messages")
struct AppMessageTests {
    static let samples: [AppMessage] = [
        .studioHello(studioHello),
        .studioHello(StudioHello(studioId: "", studioName: "Ünïcødé 🎥", audioSamplesRequired: 64, codec: .jpeg, jpegQuality: 100)),
        .agentHello(agentHello),
        .setAudioSamples(48_000),
        .setVideo(VideoRequest(width: 4096, height: 1, codec: .bgra, jpegQuality: 0)),
        .ping(Ping(sequence: 7, sentAt: 123_456_789)),
        .pong(Pong(sequence: 7, echoedSentAt: 123_456_789, receivedAt: .max)),
        .pauseRequest(true),
        .pauseRequest(false),
        .streamState(.cameraLost),
        .goodbye(WireError(.shuttingDown, "The agent is shutting down.")),
        .stats(SessionStats(framesSent: 1, framesDropped: 2, framesRepeated: 3, audioPackets: 4, rttNanos: 5)),
        .video(VideoMessage(
            sequence: 9, codec: .bgra, flags: [.repeat], width: 3, height: 2, bytesPerRow: 16,
            slotTime: 1_000, captureTime: 990, data: Array(0..<32))),
        .video(VideoMessage(
            sequence: 10, codec: .jpeg, flags: [.noSignal], width: 640, height: 480, bytesPerRow: 0,
            slotTime: 2_000, captureTime: 1_990, data: [0xFF, 0xD8, 0xFF, 0xD9])),
        .audio(AudioMessage(sequence: 3, firstSampleTime: 42, samples: [0.5, -0.5, 1, -1])),
        .error(WireError(.limitExceeded, "A message was too large.")),
    ]

    @Test(arguments: samples)
    func roundTrip(_ message: AppMessage) throws {
        let bytes = message.encoded()
        #expect(bytes.first == message.type.rawValue)
        #expect(try AppMessage.decode(bytes) == message)
        // Any truncation is refused with a typed error, and so are trailing bytes. A JPEG frame's data is
        // "the rest of the message", so only cuts into its header (or all of its data) are detectable.
        var isJPEG = false
        if case .video(let video) = message, video.codec == .jpeg { isJPEG = true }
        let detectableCuts = isJPEG ? VideoMessage.headerLength + 1 : bytes.count
        for cut in 0..<detectableCuts {
            #expect(throws: WireError.self) { try AppMessage.decode(Array(bytes.prefix(cut))) }
        }
        if !isJPEG {
            #expect(throws: WireError.self) { try AppMessage.decode(bytes + [0]) }
        }
    }

    @Test func headerPlusDataEqualsEncoded() {
        for message in Self.samples {
            #expect(message.encodeHeader() + message.bulkData == message.encoded())
        }
        #expect(VideoMessage(sequence: 0, codec: .jpeg, width: 1, height: 1, bytesPerRow: 0, slotTime: 0, captureTime: 0, data: [1])
            .encodeHeader().count == VideoMessage.headerLength)
        #expect(AudioMessage(sequence: 0, firstSampleTime: 0, samples: [0, 0]).encodeHeader().count == AudioMessage.headerLength)
    }

    @Test func audioSamplesRoundTrip() {
        let samples: [Float] = [0.25, -0.75, .pi, 0]
        let audio = AudioMessage(sequence: 1, firstSampleTime: 2, samples: samples)
        #expect(audio.sampleFrames == 2)
        #expect(audio.samples == samples)
        #expect(audio.data[0..<4] == [0x00, 0x00, 0x80, 0x3E])  // 0.25 as float32 little-endian
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let code: WireErrorCode
        var testDescription: String { name }
    }

    static func studioHelloBytes(
        major: UInt8 = 1, id: [UInt8] = Array("s".utf8), name: [UInt8] = Array("n".utf8), samples: UInt32 = 480,
        width: UInt16 = 1280, height: UInt16 = 720, codec: UInt8 = 0, quality: UInt8 = 0
    ) -> [UInt8] {
        var w = ByteWriter()
        w.u8(0x01)
        w.u8(major)
        w.u8(0)
        w.u8(UInt8(id.count))
        w.bytes += id
        w.u8(UInt8(name.count))
        w.bytes += name
        w.u32(samples)
        w.u16(width)
        w.u16(height)
        w.u8(codec)
        w.u8(quality)
        return w.bytes
    }

    static func videoBytes(codec: UInt8 = 1, flags: UInt8 = 0, width: UInt16 = 2, height: UInt16 = 2, bytesPerRow: UInt32 = 8, dataCount: Int = 16) -> [UInt8] {
        var w = ByteWriter()
        w.u8(0x10)
        w.u32(1)
        w.u8(codec)
        w.u8(flags)
        w.u16(width)
        w.u16(height)
        w.u32(bytesPerRow)
        w.u64(1)
        w.u64(1)
        w.u32(42)  // sourceSequence
        w.bytes += [UInt8](repeating: 7, count: dataCount)
        return w.bytes
    }

    static func audioBytes(frames: UInt32 = 2, channels: UInt8 = 2, format: UInt8 = 1, rate: UInt32 = 48_000, dataCount: Int = 16) -> [UInt8] {
        var w = ByteWriter()
        w.u8(0x20)
        w.u32(1)
        w.u64(1)
        w.u32(frames)
        w.u8(channels)
        w.u8(format)
        w.u32(rate)
        w.bytes += [UInt8](repeating: 0, count: dataCount)
        return w.bytes
    }

    static let malformed: [Malformed] = [
        Malformed(name: "empty", bytes: [], code: .protocolViolation),
        Malformed(name: "unknown type", bytes: [0x42], code: .protocolViolation),
        Malformed(name: "hello well formed", bytes: studioHelloBytes() + [1], code: .protocolViolation),
        Malformed(name: "hello major 2", bytes: studioHelloBytes(major: 2), code: .unsupportedVersion),
        Malformed(name: "hello bad UTF-8", bytes: studioHelloBytes(name: [0xC3, 0x28]), code: .protocolViolation),
        Malformed(name: "hello control char in id", bytes: studioHelloBytes(id: [0x61, 0x0A]), code: .protocolViolation),
        Malformed(name: "hello DEL in name", bytes: studioHelloBytes(name: [0x7F]), code: .protocolViolation),
        Malformed(name: "hello C1 control in name", bytes: studioHelloBytes(name: [0xC2, 0x85]), code: .protocolViolation),
        Malformed(name: "hello id of 65 bytes", bytes: studioHelloBytes(id: Array(repeating: 0x61, count: 65)), code: .protocolViolation),
        Malformed(name: "hello samples 63", bytes: studioHelloBytes(samples: 63), code: .badRequest),
        Malformed(name: "hello samples 48001", bytes: studioHelloBytes(samples: 48_001), code: .badRequest),
        Malformed(name: "hello width 0", bytes: studioHelloBytes(width: 0), code: .badRequest),
        Malformed(name: "hello height 4097", bytes: studioHelloBytes(height: 4097), code: .badRequest),
        Malformed(name: "hello codec 3", bytes: studioHelloBytes(codec: 3), code: .badRequest),
        Malformed(name: "hello quality 101", bytes: studioHelloBytes(quality: 101), code: .badRequest),
        Malformed(name: "setAudioSamples 0", bytes: [0x03, 0, 0, 0, 0], code: .badRequest),
        Malformed(name: "setAudioSamples 48001", bytes: [0x03, 0, 0, 0xBB, 0x81], code: .badRequest),
        Malformed(name: "setAudioSamples short", bytes: [0x03, 0, 0, 1], code: .protocolViolation),
        Malformed(name: "setVideo width 0", bytes: [0x04, 0, 0, 0, 1, 0, 0], code: .badRequest),
        Malformed(name: "setVideo 5000 wide", bytes: [0x04, 0x13, 0x88, 0, 1, 0, 0], code: .badRequest),
        Malformed(name: "pauseRequest 2", bytes: [0x07, 2], code: .badRequest),
        Malformed(name: "streamState 4", bytes: [0x08, 4], code: .protocolViolation),
        Malformed(name: "goodbye unknown code", bytes: [0x09, 0, 99, 0, 0], code: .protocolViolation),
        Malformed(name: "error reason too short", bytes: [0x7E, 0, 1, 0, 5, 0x61], code: .protocolViolation),
        Malformed(name: "video codec 3", bytes: videoBytes(codec: 3), code: .protocolViolation),
        Malformed(name: "video unknown flag", bytes: videoBytes(flags: 4), code: .protocolViolation),
        Malformed(name: "video width 0", bytes: videoBytes(width: 0, bytesPerRow: 0, dataCount: 0), code: .protocolViolation),
        Malformed(name: "video width 4097", bytes: videoBytes(width: 4097, height: 1, bytesPerRow: 16388, dataCount: 16388), code: .protocolViolation),
        Malformed(name: "bgra stride < 4·width", bytes: videoBytes(bytesPerRow: 7, dataCount: 14), code: .protocolViolation),
        Malformed(name: "bgra data short", bytes: videoBytes(dataCount: 15), code: .protocolViolation),
        Malformed(name: "jpeg with stride", bytes: videoBytes(codec: 2, bytesPerRow: 8, dataCount: 4), code: .protocolViolation),
        Malformed(name: "jpeg without data", bytes: videoBytes(codec: 2, bytesPerRow: 0, dataCount: 0), code: .protocolViolation),
        Malformed(name: "audio mono", bytes: audioBytes(channels: 1, dataCount: 8), code: .protocolViolation),
        Malformed(name: "audio format 2", bytes: audioBytes(format: 2), code: .protocolViolation),
        Malformed(name: "audio 44.1 kHz", bytes: audioBytes(rate: 44_100), code: .protocolViolation),
        Malformed(name: "audio 0 frames", bytes: audioBytes(frames: 0, dataCount: 0), code: .protocolViolation),
        Malformed(name: "audio data length", bytes: audioBytes(dataCount: 17), code: .protocolViolation),
    ]

    @Test(arguments: malformed)
    func decodeRejects(_ sample: Malformed) {
        do {
            let message = try AppMessage.decode(sample.bytes)
            Issue.record("decoded \(message) from a malformed message")
        } catch {
            #expect(error.code == sample.code, "\(error)")
            #expect(!error.reason.isEmpty)
        }
    }

    @Test func wellFormedBuildersDecode() throws {
        _ = try AppMessage.decode(Self.studioHelloBytes())
        guard case .video(let video) = try AppMessage.decode(Self.videoBytes()) else {
            Issue.record("not a video message")
            return
        }
        #expect(video.sourceSequence == 42)
        #expect(video.data.count == 16)
        _ = try AppMessage.decode(Self.audioBytes())
    }

    @Test func encoderReplacesControlCharactersAndTruncates() throws {
        let hello = StudioHello(studioId: "a\nb", studioName: String(repeating: "é", count: 200), audioSamplesRequired: 480)
        guard case .studioHello(let decoded) = try AppMessage.decode(AppMessage.studioHello(hello).encoded()) else {
            Issue.record("not a studioHello")
            return
        }
        #expect(decoded.studioId == "a b")
        #expect(decoded.studioName.utf8.count <= 255)
        #expect(decoded.studioName.utf8.count == 254)  // cut at a character boundary
    }

    @Test func channels() {
        #expect(AppMessage.ping(Ping(sequence: 0, sentAt: 0)).channel == .control)
        for message in Self.samples {
            switch message {
            case .video: #expect(message.channel == .video)
            case .audio: #expect(message.channel == .audio)
            default: #expect(message.channel == .control)
            }
        }
    }
}

@Suite("Preamble")
struct PreambleTests {
    @Test(arguments: HandshakePattern.allCases)
    func roundTrip(_ pattern: HandshakePattern) throws {
        let preamble = Preamble(pattern: pattern, initiatorId: "studio-ä")
        let bytes = preamble.encoded()
        #expect(bytes.prefix(8) == [0x43, 0x41, 0x4D, 0x4F, 1, WireLimits.versionMinor, pattern.rawValue, 9])
        let decoded = try #require(try Preamble.decode(bytes[...]))
        #expect(decoded.0 == preamble)
        #expect(decoded.consumed == bytes.count)
        // Every prefix asks for more; extra bytes are left alone.
        for cut in 0..<bytes.count { #expect(try Preamble.decode(bytes.prefix(cut)) == nil) }
        #expect(try Preamble.decode((bytes + [1, 2, 3])[...])?.consumed == bytes.count)
    }

    @Test func rejects() {
        func code(_ bytes: [UInt8]) -> WireErrorCode? {
            do {
                _ = try Preamble.decode(bytes[...])
                return nil
            } catch { return error.code }
        }
        #expect(code([0x47]) == .protocolViolation)  // "G": refused at the first byte
        #expect(code(Array("GET / HTTP/1.1".utf8)) == .protocolViolation)
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 2, 0, 1, 0]) == .unsupportedVersion)
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 1, 0, 9, 0]) == .unsupportedPattern)
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 1, 0, 3, 0]) == .protocolViolation)  // KK without id
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 1, 0, 1, 65]) == .protocolViolation)
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 1, 0, 1, 1, 0x07]) == .protocolViolation)
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 1, 0, 1, 1, 0xFF]) == .protocolViolation)
        #expect(code([0x43, 0x41, 0x4D, 0x4F, 1, 7, 1, 0]) == nil)  // a later minor version is fine
    }
}
