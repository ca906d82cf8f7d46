import CamoMedia
@testable import CamoProducerKit
import CamoWire
import Foundation
import Testing

/// A 1.0 studio is served exactly as before by an agent that can send H.264; a 1.1 studio that asks for H.264 gets
/// it, starting at a keyframe, with the 1.1 stats. Raw wire studios on loopback, the real controller.
@Suite("Protocol versions: 1.0 studios as before, 1.1 studios get H.264", .serialized)
struct ProtocolVersionTests {
    /// A controller that can send H.264 (the counting encoder double), fed with the test pattern and silence.
    private func running() async throws -> (CamoController, Task<Void, Never>) {
        let controller = ControllerTests.makeController { configuration in
            configuration.h264 = H264Options(encoderName: "counting") { _ in CountingEncoder() }
        }
        try await controller.start()
        let feeder = Task {
            var frame: UInt64 = 0
            while !Task.isCancelled {
                var picture = TestPattern.frame(number: frame, size: VideoSize(width: 320, height: 180), captureTime: SystemMonotonicClock().now.nanoseconds)
                picture.sourceSequence = frame
                try? controller.enqueueVideo(picture)
                try? controller.enqueuePCMAudio(AudioChunk(
                    samples: [Float](repeating: 0, count: 960), firstSampleTime: SystemMonotonicClock().now.nanoseconds))
                frame += 1
                try? await Task.sleep(nanoseconds: 20_000_000)
            }
        }
        return (controller, feeder)
    }

    /// Talks to the controller until a stats message, a video message and an audio message have arrived.
    private func converse(
        _ port: Int, minor: UInt8, codec: VideoCodecRequest, width: UInt16 = 320, height: UInt16 = 180
    ) async throws -> [AppMessage] {
        let preamble = Preamble(versionMinor: minor, pattern: .xx, initiatorId: "studio-\(minor)")
        let hello = StudioHello(
            versionMinor: minor, studioId: "studio-\(minor)", studioName: "Raw", audioSamplesRequired: 480,
            preferredWidth: width, preferredHeight: height, codec: codec, jpegQuality: 0)
        let conversation = try await RawStudio.converse(
            port: port, wire: WireConnection.initiator(preamble: preamble, localStatic: .generate(), remoteStatic: nil, psk: nil),
            seconds: 10,
            until: { events in
                var stats = false, video = false, audio = false
                for case .message(let message) in events {
                    switch message {
                    case .stats: stats = true
                    case .video: video = true
                    case .audio: audio = true
                    default: break
                    }
                }
                return stats && video && audio
            },
            respond: RawStudio.sendHello(hello))
        return conversation.events.compactMap { event in
            if case .message(let message) = event { return message }
            return nil
        }
    }

    @Test func aVersion1_0StudioGetsA1_0HelloBgraFloatAndShortStats() async throws {
        let (controller, feeder) = try await running()
        defer { feeder.cancel() }
        let messages = try await converse(try #require(controller.port), minor: 0, codec: .agentDecides)
        await controller.stop()
        var hello: AgentHello?
        var checked = (stats: 0, video: 0, audio: 0)
        for message in messages {
            switch message {
            case .agentHello(let agentHello): hello = agentHello
            case .stats(let stats):
                #expect(stats.rate == nil, "a 1.0 studio must get the 1.0 stats")
                checked.stats += 1
            case .video(let video):
                #expect(video.codec == .bgra && VideoFlags([.repeat, .noSignal]).isSuperset(of: video.flags))
                checked.video += 1
            case .audio(let audio):
                #expect(audio.format == AudioMessage.formatFloat32LE)
                checked.audio += 1
            default: break
            }
        }
        let agentHello = try #require(hello)
        #expect(agentHello.versionMinor == 0 && agentHello.audioFormat == .float32)
        #expect(agentHello.capabilities.isDisjoint(with: [.h264, .adaptive]), "\(agentHello.capabilities)")
        #expect(AppMessage.agentHello(agentHello).encoded().count == AppMessage.agentHello(AgentHello(
            versionMinor: 0, agentId: agentHello.agentId, agentName: agentHello.agentName, model: agentHello.model,
            softwareVersion: agentHello.softwareVersion, camera: agentHello.camera, microphone: agentHello.microphone,
            capabilities: agentHello.capabilities, width: agentHello.width, height: agentHello.height, codec: agentHello.codec,
            audioSamplesRequired: agentHello.audioSamplesRequired)).encoded().count)
        #expect(checked.stats > 0 && checked.video > 0 && checked.audio > 0, "\(checked)")
    }

    @Test func aVersion1_1StudioAskingForH264GetsItFromAKeyframe() async throws {
        let (controller, feeder) = try await running()
        defer { feeder.cancel() }
        let messages = try await converse(try #require(controller.port), minor: 1, codec: .h264)
        await controller.stop()
        let hello = try #require(messages.lazy.compactMap { message -> AgentHello? in
            if case .agentHello(let hello) = message { return hello }
            return nil
        }.first)
        #expect(hello.versionMinor == 1 && hello.codec == .h264 && hello.capabilities.isSuperset(of: [.h264, .adaptive]))
        #expect(hello.audioFormat == .float32, "loopback keeps float32")
        let videos = messages.compactMap { message -> VideoMessage? in
            if case .video(let video) = message { return video }
            return nil
        }
        let first = try #require(videos.first)
        #expect(first.codec == .h264 && first.flags.contains(.keyframe), "the stream starts at a keyframe: \(first.flags)")
        let stats = messages.compactMap { message -> SessionStats? in
            if case .stats(let stats) = message { return stats }
            return nil
        }
        #expect(stats.allSatisfy { $0.rate != nil }, "a 1.1 studio gets the rate figures")
    }

    @Test func anOddSizeGetsTheEvenSizeBelowItInH264() async throws {
        let (controller, feeder) = try await running()
        defer { feeder.cancel() }
        let messages = try await converse(try #require(controller.port), minor: 1, codec: .h264, width: 321, height: 181)
        await controller.stop()
        let videos = messages.compactMap { message -> VideoMessage? in
            if case .video(let video) = message { return video }
            return nil
        }
        let first = try #require(videos.first, "an odd size must still get video: \(messages.count) messages")
        #expect(first.codec == .h264 && first.width == 320 && first.height == 180)
    }
}
