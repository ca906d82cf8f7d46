import Testing

@testable import CamoWire

/// Protocol 1.1: H.264, s16 audio, keyframe requests, receiver reports, the longer hellos and stats, and that a
/// 1.0 peer's messages still decode exactly as before.
@Suite("Protocol 1.1: H.264, s16 audio, keyframe requests, receiver reports")
struct ProtocolOneOneTests {
    static let samples: [AppMessage] = [
        .studioHello(StudioHello(
            studioId: "s", studioName: "n", audioSamplesRequired: 480, codec: .h264, decodes: [.jpeg, .h264], audioFormat: .s16)),
        .agentHello(AgentHello(
            agentId: "a", agentName: "b", model: "m", softwareVersion: "v", camera: "c", microphone: "mic",
            capabilities: [.bgra, .jpeg, .h264, .adaptive], width: 1280, height: 720, codec: .h264,
            audioSamplesRequired: 480, audioFormat: .s16)),
        .setVideo(VideoRequest(width: 1280, height: 720, codec: .h264, jpegQuality: 0)),
        .keyframeRequest(.decoderError),
        .receiverReport(ReceiverReport(
            sequence: 3, intervalNanos: 100_000_000, bytesReceived: 12_345, framesLost: 1,
            frames: [ReceivedFrameReport(sequence: 7, captureTime: 1, receivedAt: .max, bytes: 900)])),
        .receiverReport(ReceiverReport(sequence: 0, intervalNanos: 0, bytesReceived: 0, framesLost: 0, frames: [])),
        .stats(SessionStats(
            framesSent: 1, framesDropped: 2, framesRepeated: 3, audioPackets: 4, rttNanos: 5,
            rate: RateStats(framesSkipped: 6, targetBitrate: 2_000_000, queueDelayMicros: 12_000))),
        .video(VideoMessage(
            sequence: 1, codec: .h264, flags: [.keyframe], width: 1280, height: 720, bytesPerRow: 0,
            slotTime: 10, captureTime: 9, data: [0, 0, 0, 1, 0x67])),
        .video(VideoMessage(
            sequence: 2, codec: .h264, flags: [.skipped], width: 1280, height: 720, bytesPerRow: 0,
            slotTime: 20, captureTime: 19, data: [])),
        .video(VideoMessage(
            sequence: 3, codec: .h264, flags: [.repeat, .noSignal], width: 1280, height: 720, bytesPerRow: 0,
            slotTime: 30, captureTime: 19, data: [])),
        .audio(AudioMessage(sequence: 1, firstSampleTime: 5, samples: [0, 0.5, -1, 1], format: .s16)),
    ]

    @Test(arguments: samples)
    func roundTrips(_ message: AppMessage) throws {
        #expect(try AppMessage.decode(message.encoded()) == message)
    }

    @Test func aVersion1_0HelloHasNoNewFieldsAndMeansFloatAndNoH264() throws {
        let old = StudioHello(versionMinor: 0, studioId: "s", studioName: "n", audioSamplesRequired: 1024)
        let bytes = AppMessage.studioHello(old).encoded()
        let new = StudioHello(versionMinor: 1, studioId: "s", studioName: "n", audioSamplesRequired: 1024)
        #expect(AppMessage.studioHello(new).encoded().count == bytes.count + 2, "1.1 adds decodes and audioFormat")
        guard case .studioHello(let decoded) = try AppMessage.decode(bytes) else {
            Issue.record("not a hello")
            return
        }
        #expect(decoded.decodes == .version1_0 && decoded.audioFormat == .float32)
        // A 1.0 studio may not ask for codec 3.
        var wrong = bytes
        wrong[wrong.count - 2] = 3
        #expect(throws: WireError.self) { try AppMessage.decode(wrong) }
        // A 1.0 agent hello has no audio format byte, and decodes as float32.
        let agent = AgentHello(
            versionMinor: 0, agentId: "a", agentName: "b", model: "m", softwareVersion: "v", camera: "c", microphone: "m",
            capabilities: [.bgra], width: 1, height: 1, codec: .jpeg, audioSamplesRequired: 64, audioFormat: .s16)
        guard case .agentHello(let agentDecoded) = try AppMessage.decode(AppMessage.agentHello(agent).encoded()) else {
            Issue.record("not an agent hello")
            return
        }
        #expect(agentDecoded.audioFormat == .float32, "a 1.0 hello cannot say s16")
    }

    @Test func statsOfBothLengthsDecode() throws {
        let old = SessionStats(framesSent: 1, framesDropped: 0, framesRepeated: 0, audioPackets: 0, rttNanos: 0)
        #expect(AppMessage.stats(old).encoded().count == 41)
        #expect(try AppMessage.decode(AppMessage.stats(old).encoded()) == .stats(old))
        var bad = AppMessage.stats(old).encoded()
        bad.append(1)
        #expect(throws: WireError.self) { try AppMessage.decode(bad) }
    }

    @Test func h264VideoRulesAreChecked() {
        func video(_ flags: VideoFlags, bytesPerRow: UInt32 = 0, data: [UInt8], codec: VideoCodec = .h264) -> [UInt8] {
            AppMessage.video(VideoMessage(
                sequence: 1, codec: codec, flags: flags, width: 2, height: 2, bytesPerRow: bytesPerRow, slotTime: 0,
                captureTime: 0, data: data)).encoded()
        }
        let refused: [(String, [UInt8])] = [
            ("an empty new frame", video([], data: [])),
            ("a stride", video([], bytesPerRow: 8, data: [1])),
            ("a skip with data", video([.skipped], data: [1])),
            ("a repeat with data", video([.repeat], data: [1])),
            ("a keyframe placeholder", video([.skipped, .keyframe], data: [])),
            ("a keyframe flag on jpeg", video([.keyframe], data: [0xFF], codec: .jpeg)),
            ("a skipped flag on bgra", video([.skipped], bytesPerRow: 8, data: [UInt8](repeating: 0, count: 16), codec: .bgra)),
        ]
        for (name, bytes) in refused {
            #expect(throws: WireError.self, "\(name) must be refused") { try AppMessage.decode(bytes) }
        }
    }

    @Test func receiverReportsAreBounded() {
        var bytes = AppMessage.receiverReport(
            ReceiverReport(sequence: 0, intervalNanos: 0, bytesReceived: 0, framesLost: 0, frames: [])).encoded()
        bytes[bytes.count - 1] = 65
        #expect(throws: WireError.self) { try AppMessage.decode(bytes) }
        // More than 64 frames: the newest 64 are sent.
        let many = (0..<70).map { ReceivedFrameReport(sequence: UInt32($0), captureTime: 0, receivedAt: 0, bytes: 1) }
        let report = ReceiverReport(sequence: 0, intervalNanos: 0, bytesReceived: 0, framesLost: 0, frames: many)
        guard case .receiverReport(let decoded) = try? AppMessage.decode(AppMessage.receiverReport(report).encoded()) else {
            Issue.record("did not decode")
            return
        }
        #expect(decoded.frames.map(\.sequence) == Array(6..<70))
        #expect(throws: WireError.self) { try AppMessage.decode([AppMessageType.keyframeRequest.rawValue, 9]) }
    }

    @Test func s16AudioRoundsAndClamps() throws {
        let message = AudioMessage(sequence: 0, firstSampleTime: 0, samples: [1.5, -2, 0.25, .nan], format: .s16)
        #expect(message.data.count == 8)
        #expect(message.samples == [32767.0 / 32768, -1, 0.25, 0])
        var wrong = AppMessage.audio(message).encoded()
        wrong.removeLast()
        #expect(throws: WireError.self) { try AppMessage.decode(wrong) }
    }
}

@Suite("Protocol 1.1: later minor versions may add fields at the end of the hellos")
struct HelloForwardCompatibilityTests {
    @Test func aHelloOfAHigherMinorVersionIsReadAsFarAsThisSideKnowsIt() throws {
        let later = StudioHello(versionMinor: WireLimits.versionMinor + 1, studioId: "s", studioName: "n", audioSamplesRequired: 480, codec: .h264, purpose: .settingsOnly)
        var bytes = AppMessage.studioHello(later).encoded()
        bytes += [9, 9, 9]  // a field a later minor version might add
        guard case .studioHello(let decoded) = try AppMessage.decode(bytes) else {
            Issue.record("not a hello")
            return
        }
        #expect(decoded.codec == .h264 && decoded.versionMinor == WireLimits.versionMinor + 1 && decoded.purpose == .settingsOnly)
        // The same extra bytes in a hello of this side's version or an earlier one are still a violation.
        for minor: UInt8 in 1...WireLimits.versionMinor {
            var current = AppMessage.studioHello(StudioHello(versionMinor: minor, studioId: "s", studioName: "n", audioSamplesRequired: 480)).encoded()
            current.append(9)
            #expect(throws: WireError.self) { try AppMessage.decode(current) }
        }
        let agent = AgentHello(
            versionMinor: WireLimits.versionMinor + 1, agentId: "a", agentName: "b", model: "m", softwareVersion: "v", camera: "c", microphone: "m",
            capabilities: [.bgra], width: 2, height: 2, codec: .bgra, audioSamplesRequired: 64)
        #expect(throws: Never.self) { try AppMessage.decode(AppMessage.agentHello(agent).encoded() + [1, 2]) }
    }
}
