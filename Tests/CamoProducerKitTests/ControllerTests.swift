import CamoMedia
@testable import CamoProducerKit
import CamoStudioKit
import CamoTestSupport
import CamoWire
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

/// A controller on a loopback port with real studios (CamoStudioKit) and raw TCP peers.
@Suite("CamoController over loopback", .timeLimit(.minutes(1)))
struct ControllerTests {
    static func makeController(
        allowUnpaired: Bool = true, clock: any MonotonicClock = SystemMonotonicClock(), advertiser: AdvertiserChoice = .off,
        _ adjust: (inout ControllerConfiguration) -> Void = { _ in }
    ) -> CamoController {
        var configuration = ControllerConfiguration(
            identity: AgentIdentity(id: "agent-test", name: "Test agent", keyPair: .generate()),
            description: AgentDescription(model: "test", softwareVersion: "0.0", camera: "none", microphone: "none"),
            admission: AdmissionPolicy(allowUnpaired: allowUnpaired))
        configuration.host = "127.0.0.1"
        configuration.port = 0
        adjust(&configuration)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return CamoController(
            configuration: configuration, logger: logger, clock: clock, pairedDevices: PairedDeviceStore(inMemory: []), advertiser: advertiser)
    }

    static func studio(_ port: Int, name: String = "studio", samples: Int = 1024) async throws -> StudioClient {
        let configuration = StudioClientConfiguration(
            identity: .generated(), studioName: name, audioSamplesRequired: samples)
        return try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration)
    }

    /// Collects states until `predicate` holds (or 5 s pass).
    static func waitForState(
        _ controller: CamoController, _ what: String, _ predicate: @escaping (CamoControllerState?) -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if predicate(controller.state) { return }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        Issue.record("state never became \(what); it is \(String(describing: controller.state))")
    }

    @Test func stateFollowsStudiosAndThePrivacySwitch() async throws {
        let controller = Self.makeController(clock: ManualClock())
        #expect(controller.state == nil)
        try await controller.start()
        let port = try #require(controller.port)
        let updates = controller.stateUpdates()
        #expect(controller.state == .notConnected)

        let studio = try await Self.studio(port, name: "Recorder")
        try await Self.waitForState(controller, "active") { if case .active(let c) = $0 { c.name == "Recorder" } else { false } }
        #expect(controller.connections.count == 1)
        #expect(controller.connections.first?.codec == .bgra, "loopback + agentDecides = bgra")

        controller.pause()
        try await Self.waitForState(controller, "paused") { if case .paused = $0 { true } else { false } }
        controller.resume()
        try await Self.waitForState(controller, "active again") { if case .active = $0 { true } else { false } }
        try await studio.pause()
        try await Self.waitForState(controller, "paused by studio") { if case .paused = $0 { true } else { false } }
        try await studio.resume()
        try await Self.waitForState(controller, "active after studio resume") { if case .active = $0 { true } else { false } }

        await studio.close()
        try await Self.waitForState(controller, "notConnected") { $0 == .notConnected }
        await controller.stop()
        #expect(controller.state == nil)

        var words: [String] = []
        for await state in updates { words.append(state?.word ?? "stopped") }
        #expect(words.first == "notConnected")
        #expect(words.last == "stopped")
        #expect(words.contains("active") && words.contains("paused"))
    }

    @Test func malformedMediaIsRefusedWithATypedError() async throws {
        let controller = Self.makeController()
        let good = VideoFrame(width: 4, height: 2, bytesPerRow: 16, data: [UInt8](repeating: 0, count: 32), captureTime: 0)
        try controller.enqueueVideo(good)
        var notBGRA = good
        notBGRA.pixelFormat = .yuyv
        #expect(throws: ContractError.notBGRA(.yuyv)) { try controller.enqueueVideo(notBGRA) }
        var narrow = good
        narrow.bytesPerRow = 12
        narrow.data = [UInt8](repeating: 0, count: 24)
        #expect(throws: ContractError.self) { try controller.enqueueVideo(narrow) }
        var short = good
        short.data.removeLast()
        #expect(throws: ContractError.bufferLength(expected: 32, actual: 31)) { try controller.enqueueVideo(short) }
        #expect(throws: ContractError.self) {
            try controller.enqueuePCMAudio(AudioChunk(samples: [0, 0, 0], firstSampleTime: 0, sampleFrames: 1))
        }
        #expect(throws: ContractError.self) { try controller.enqueuePCMAudio(bytes: [0, 0, 0, 0, 0, 0], firstSampleTime: 0) }
        #expect(throws: ContractError.self) {
            try controller.enqueuePCMAudio(AudioChunk(samples: [], firstSampleTime: 0, sampleFrames: 0))
        }
    }

    @Test func eachStudioGetsPacketsOfItsOwnSize() async throws {
        let controller = Self.makeController(clock: ManualClock())
        try await controller.start()
        let port = try #require(controller.port)
        let first = try await Self.studio(port, name: "first", samples: 480)
        let second = try await Self.studio(port, name: "second", samples: 2048)
        try await Self.waitForState(controller, "two connections") { _ in controller.connections.count == 2 }
        #expect(controller.audioSamplesRequired == 480, "the primary studio's size")

        // 1 s of audio in 10 ms chunks, with a known ramp so order and continuity can be checked.
        var sample: Float = 0
        for chunk in 0..<100 {
            var samples: [Float] = []
            for _ in 0..<480 {
                samples += [sample, -sample]
                sample += 1
            }
            try controller.enqueuePCMAudio(AudioChunk(samples: samples, firstSampleTime: UInt64(chunk) * 10_000_000, sampleFrames: 480))
        }
        for (client, size) in [(first, 480), (second, 2048)] {
            var received: [Float] = []
            for await event in client.events {
                guard case .audio(let packet) = event else { continue }
                #expect(packet.sampleFrames == size)
                received += packet.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                if received.count / 2 >= (48_000 / size) * size { break }
            }
            let lefts = stride(from: 0, to: received.count, by: 2).map { received[$0] }
            #expect(lefts == (0..<lefts.count).map(Float.init), "samples arrive in order, none lost or doubled")
        }
        await first.close()
        await second.close()
        await controller.stop()
    }

    @Test("a JPEG studio makes the controller want JPEG planes at its size only; it starts with a new frame, not the one left from before it")
    func jpegPlanesAndTheFirstFrame() async throws {
        let clock = ManualClock(now: 1_000_000_000)
        let controller = Self.makeController(clock: clock)
        try await controller.start()
        let port = try #require(controller.port)
        let size = VideoSize(width: 320, height: 180)
        #expect(!controller.wantsJPEGPlanes(for: size), "no studio yet")

        // A frame nobody watches: the pacer sends it to no one, and keeps it as its last frame.
        try controller.enqueueVideo(TestPattern.frame(number: 1, size: size, captureTime: clock.now.nanoseconds))
        for _ in 0..<5 { await Self.advanceOneSlot(clock) }

        var configuration = StudioClientConfiguration(identity: .generated(), studioName: "jpeg")
        configuration.codec = .jpeg
        configuration.preferredWidth = size.width
        configuration.preferredHeight = size.height
        let studio = try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration)
        try await Self.waitForState(controller, "a JPEG studio taking media") { _ in controller.wantsJPEGPlanes(for: size) }
        #expect(!controller.wantsJPEGPlanes(for: VideoSize(width: 640, height: 360)), "another size")

        // Three slots with nothing new: the old frame is held back from the new studio. Then frame 2 arrives.
        // The pacer and the studio's keepalive sleep on the clock.
        for _ in 0..<3 { await Self.advanceOneSlot(clock, sleepers: 2) }
        try controller.enqueueVideo(TestPattern.frame(number: 2, size: size, captureTime: clock.now.nanoseconds))
        for _ in 0..<4 { await Self.advanceOneSlot(clock, sleepers: 2) }
        var received: [ReceivedVideoFrame] = []
        for await event in studio.events {
            guard case .video(let video) = event else { continue }
            received.append(video)
            if received.count == 3 { break }
        }
        #expect(received.first?.frame.sourceSequence == 2 && received.first?.isRepeat == false,
                "the first frame is the new one: \(received.map { ($0.frame.sourceSequence, $0.isRepeat) })")
        #expect(received.dropFirst().allSatisfy { $0.isRepeat && $0.frame.sourceSequence == 2 }, "then repeats of it go out")

        controller.pause()
        #expect(!controller.wantsJPEGPlanes(for: size), "paused: nobody takes media")
        await studio.close()
        await controller.stop()
    }

    /// Moves the clock one slot on once the pacer sleeps, and lets it run.
    /// - Parameter sleepers: how many sleep on the clock when the pacer does: the pacer, and the keepalive of
    ///   each streaming session.
    static func advanceOneSlot(_ clock: ManualClock, sleepers: Int = 1) async {
        await clock.waitForSleepers(sleepers)
        clock.advance(by: 33_333_334)
        try? await Task.sleep(nanoseconds: 5_000_000)
    }

    @Test func tooManyStudiosAreRefusedWithAReason() async throws {
        let controller = Self.makeController { $0.maxSessions = 1 }
        try await controller.start()
        let port = try #require(controller.port)
        let first = try await Self.studio(port)
        await #expect(throws: StudioClientError.self) { _ = try await Self.studio(port) }
        #expect(controller.connections.count == 1)
        await first.close()
        await controller.stop()
    }

    @Test func unpairedStudiosNeedTheFlag() async throws {
        let controller = Self.makeController(allowUnpaired: false)
        try await controller.start()
        let port = try #require(controller.port)
        do {
            _ = try await Self.studio(port)
            Issue.record("an unpaired studio was accepted without --allow-unpaired")
        } catch {
            #expect("\(error)".contains("unpaired"), "\(error)")
        }
        await controller.stop()
    }

    // MARK: Hostile peers

    @Test func garbageGetsAnUnauthenticatedErrorAndOthersKeepStreaming() async throws {
        let controller = Self.makeController()
        try await controller.start()
        let port = try #require(controller.port)
        let studio = try await Self.studio(port)
        let reply = try await RawPeer.exchange(port: port, send: Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(reply.closed)
        let error = try #require(reply.unauthenticatedError, "no 0x7F record in \(reply.bytes)")
        #expect(error.code == WireErrorCode.protocolViolation.rawValue)
        #expect(controller.connections.count == 1, "the real studio is still served")
        await studio.close()
        await controller.stop()
    }

    @Test func aPeerThatStallsMidHandshakeIsClosed() async throws {
        let controller = Self.makeController { $0.handshakeDeadlineSeconds = 0.3 }
        try await controller.start()
        let port = try #require(controller.port)
        let preamble = Preamble(versionMajor: 1, versionMinor: 0, pattern: .xx, initiatorId: "").encoded()
        let reply = try await RawPeer.exchange(port: port, send: preamble)
        #expect(reply.closed)
        #expect(reply.unauthenticatedError?.code == WireErrorCode.handshakeTimeout.rawValue)
        await controller.stop()
    }

    @Test func aPreambleOverTheIdLimitIsRefused() async throws {
        let controller = Self.makeController()
        try await controller.start()
        let port = try #require(controller.port)
        let bytes: [UInt8] = Array("CAMO".utf8) + [1, 0, 3, 200] + [UInt8](repeating: 0x61, count: 200)
        let reply = try await RawPeer.exchange(port: port, send: bytes)
        #expect(reply.closed)
        let code = try #require(reply.unauthenticatedError?.code)
        #expect([WireErrorCode.limitExceeded.rawValue, WireErrorCode.protocolViolation.rawValue].contains(code))
        await controller.stop()
    }

    @Test func aForgedHandshakeMessageFails() async throws {
        let controller = Self.makeController()
        try await controller.start()
        let port = try #require(controller.port)
        let preamble = Preamble(versionMajor: 1, versionMinor: 0, pattern: .xx, initiatorId: "").encoded()
        // Message 1 of XX is a 32-byte ephemeral key; send 10 bytes instead.
        let record: [UInt8] = [0, 11, 0x01] + [UInt8](repeating: 7, count: 10)
        let reply = try await RawPeer.exchange(port: port, send: preamble + record)
        #expect(reply.closed)
        #expect(reply.unauthenticatedError != nil, "got \(reply.bytes)")
        await controller.stop()
    }
}

/// A raw TCP peer: sends bytes, collects what comes back until the agent closes (or a generous timeout, so a
/// loaded machine does not turn a slow close into a failure).
enum RawPeer {
    struct Reply {
        var bytes: [UInt8]
        var closed: Bool

        /// The first handshake-phase error record (kind 0x7F): code and reason.
        var unauthenticatedError: (code: UInt16, reason: String)? {
            guard bytes.count >= 7, bytes[2] == 0x7F else { return nil }
            let length = Int(bytes[0]) << 8 | Int(bytes[1])
            guard bytes.count >= 2 + length else { return nil }
            let code = UInt16(bytes[3]) << 8 | UInt16(bytes[4])
            let reasonLength = Int(bytes[5]) << 8 | Int(bytes[6])
            guard 7 + reasonLength <= bytes.count else { return nil }
            return (code, String(decoding: bytes[7..<(7 + reasonLength)], as: UTF8.self))
        }
    }

    static func exchange(port: Int, send: [UInt8], waitSeconds: Double = 20) async throws -> Reply {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            // A loaded machine can let the agent's handshake deadline pass before this write: the agent has
            // then already sent its error and closed, which is what the caller wants to read, so a write to
            // the closed channel is not a failure.
            do {
                try await outbound.write(ByteBuffer(bytes: send))
            } catch ChannelError.ioOnClosedChannel {
            } catch let error as IOError where error.errnoCode == EPIPE || error.errnoCode == ECONNRESET {
            }
            return try await firstOrNil(within: waitSeconds) {
                var received: [UInt8] = []
                for try await var chunk in inbound {
                    // Safe: readBytes(length: readableBytes) always succeeds.
                    received += chunk.readBytes(length: chunk.readableBytes)!
                }
                return Reply(bytes: received, closed: true)
            } ?? Reply(bytes: [], closed: false)
        }
    }
}
