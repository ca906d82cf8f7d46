import CamoLive
import CamoMedia
import Foundation
import Synchronization
import Testing

@Suite("RTSP configuration")
struct RTSPConfigurationTests {
    @Test("No credentials are refused beyond loopback and accepted on 127.0.0.1")
    func credentialsRequiredBeyondLoopback() throws {
        #expect(throws: RTSPError.authenticationRequired(bindAddress: "0.0.0.0")) {
            try RTSPLiveServer(configuration: RTSPConfiguration(), logger: RTSPFixture.logger)
        }
        let local = try RTSPLiveServer(configuration: RTSPConfiguration(bindAddress: "127.0.0.1"), logger: RTSPFixture.logger)
        #expect(local.url == "rtsp://127.0.0.1:8554/camo")
        let error = RTSPError.authenticationRequired(bindAddress: "0.0.0.0")
        #expect(error.description.contains("password") && error.description.contains("127.0.0.1"))
    }

    @Test("A path without its slash and an empty password are refused")
    func invalidValues() {
        #expect(throws: RTSPError.self) {
            try RTSPLiveServer(configuration: RTSPConfiguration(path: "camo", bindAddress: "127.0.0.1"), logger: RTSPFixture.logger)
        }
        #expect(throws: RTSPError.self) {
            try RTSPLiveServer(configuration: RTSPConfiguration(credentials: (username: "nvr", password: "")), logger: RTSPFixture.logger)
        }
    }

    @Test("A missing element names its Debian package")
    func missingElementText() {
        let error = RTSPError.missingElements([(element: "rtph264pay", package: "gstreamer1.0-plugins-good")])
        #expect(error.description.contains("rtph264pay"))
        #expect(error.description.contains("apt-get install gstreamer1.0-plugins-good"))
    }
}

@Suite("RTSP server", .serialized)
struct RTSPLiveServerTests {
    @Test("Without clients nothing is pushed and no keyframe is asked for")
    func idleServerPushesNothing() throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let asked = Mutex(0)
        server.onKeyframeNeeded = { asked.withLock { $0 += 1 } }
        let size = RTSPFixture.size
        for number in 0..<10 {
            server.pushVideo(LiveAccessUnit(data: [0, 0, 0, 1, 0x65, 0x88], isKeyframe: number == 0, captureTime: UInt64(number) * 33_000_000, size: size))
            server.pushAudio(AudioChunk(samples: [Float](repeating: 0, count: 960), firstSampleTime: UInt64(number) * 10_000_000))
        }
        #expect(server.stats == RTSPStats())
        #expect(!server.isStreaming)
        #expect(server.clientCount == 0)
        #expect(asked.withLock { $0 } == 0)
    }

    @Test("ffprobe sees an H.264 video stream and an Opus audio stream", arguments: ["tcp", "udp"])
    func streamsAreH264AndOpus(transport: String) async throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let feeder = try RTSPFeeder(server: server)
        let (streams, outcome) = try await ProcessRunner.probeStreams(RTSPFixture.url(server), transport: transport)
        await feeder.stop()
        #expect(!outcome.timedOut)
        #expect(outcome.status == 0, "ffprobe: \(outcome.standardError)")
        #expect(streams["video"] == ["h264"])
        #expect(streams["audio"] == ["opus"])
        #expect(server.stats.streamsConfigured == 1)
    }

    @Test("A 10 s pull holds 300 ± 3 video frames with consecutive pattern numbers, and Opus audio")
    func tenSecondPull() async throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pull.mkv")
        let feeder = try RTSPFeeder(server: server)
        let outcome = try await ProcessRunner.record(RTSPFixture.url(server), seconds: 10, to: file)
        await feeder.stop()
        #expect(!outcome.timedOut)
        #expect(outcome.status == 0, "ffmpeg: \(outcome.standardError)")

        #expect(try await ProcessRunner.codecs(file) == ["h264", "opus"])
        let frames = try #require(try await ProcessRunner.countVideoFrames(file))
        #expect((297...303).contains(frames), "\(frames) frames in 10 s")

        let numbers = try await ProcessRunner.frameNumbers(file)
        let read = numbers.compactMap { $0 }
        #expect(numbers.count == frames)
        #expect(read.count >= numbers.count * 95 / 100, "\(read.count) of \(numbers.count) frames carry a readable number")
        let gaps = zip(read, read.dropFirst()).filter { $1 != $0 + 1 }
        #expect(gaps.isEmpty, "frame number jumps: \(gaps.prefix(10))")

        let stats = server.stats
        #expect(stats.videoFramesDropped == 0)
        #expect(stats.audioChunksDropped == 0)
        #expect(stats.videoFramesPushed >= frames)
        #expect(stats.audioChunksPushed >= 900)
    }

    @Test("A wrong password and no credentials are refused with 401")
    func authenticationRefused() async throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let wrong = try await ProcessRunner.probeStreams(RTSPFixture.url(server, password: "wrong"))
        #expect(wrong.outcome.status != 0)
        #expect(wrong.outcome.standardError.contains("401") || wrong.outcome.standardError.contains("Unauthorized"), "\(wrong.outcome.standardError)")
        #expect(wrong.streams.isEmpty)

        let anonymous = try await ProcessRunner.probeStreams(server.url)
        #expect(anonymous.outcome.status != 0)
        #expect(anonymous.outcome.standardError.contains("401") || anonymous.outcome.standardError.contains("Unauthorized"), "\(anonymous.outcome.standardError)")
        #expect(anonymous.streams.isEmpty)
        #expect(server.stats.streamsConfigured == 0)
    }

    @Test("Two clients at once both get the stream from one shared feed, which stops after they leave")
    func twoClientsShareOneFeed() async throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = [directory.appendingPathComponent("a.mkv"), directory.appendingPathComponent("b.mkv")]
        let feeder = try RTSPFeeder(server: server)
        let url = RTSPFixture.url(server)
        async let first = ProcessRunner.record(url, seconds: 5, to: files[0])
        async let second = ProcessRunner.record(url, seconds: 5, to: files[1])
        let bothConnected = await eventually(within: .seconds(15)) { server.clientCount == 2 }
        let outcomes = try await [first, second]
        let fed = feeder.videoFramesFed
        let stats = server.stats
        let stopped = await eventually(within: .seconds(10)) { !server.isStreaming && server.clientCount == 0 }
        await feeder.stop()

        #expect(bothConnected)
        for outcome in outcomes {
            #expect(!outcome.timedOut)
            #expect(outcome.status == 0, "ffmpeg: \(outcome.standardError)")
        }
        for file in files {
            let frames = try await ProcessRunner.countVideoFrames(file) ?? 0
            #expect(frames >= 140, "\(frames) frames in 5 s")
        }
        #expect(stats.streamsConfigured == 1)
        #expect(stats.videoFramesPushed <= fed, "one feed: \(stats.videoFramesPushed) pushed of \(fed) fed")
        #expect(stats.videoFramesPushed >= 140)
        #expect(stopped)
    }

    @Test("A client joining a running stream starts within a few frames: the server asks for a keyframe")
    func lateJoinerGetsKeyframe() async throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = [directory.appendingPathComponent("first.mkv"), directory.appendingPathComponent("late.mkv")]
        // Keyframes only when asked: without a request the late client would wait 20 s for one.
        let feeder = try RTSPFeeder(server: server, gopFrames: 600)
        let url = RTSPFixture.url(server)
        async let first = ProcessRunner.record(url, seconds: 7, to: files[0])
        let streaming = await eventually(within: .seconds(15)) { server.stats.videoFramesPushed >= 60 }
        let requestsBefore = feeder.keyframesRequested
        let late = try await ProcessRunner.record(url, seconds: 3, to: files[1])
        let requestsAfter = feeder.keyframesRequested
        let firstOutcome = try await first
        await feeder.stop()

        #expect(streaming)
        #expect(firstOutcome.status == 0 && late.status == 0, "ffmpeg: \(firstOutcome.standardError) \(late.standardError)")
        #expect(requestsAfter > requestsBefore)
        let lateFrames = try await ProcessRunner.countVideoFrames(files[1]) ?? 0
        #expect(lateFrames >= 80, "\(lateFrames) frames in 3 s")
        #expect(server.stats.streamsConfigured == 1)
    }

    @Test("stop closes the clients and drops the stream; the server starts again")
    func stopAndRestart() async throws {
        let server = try RTSPFixture.startedServer()
        defer { server.stop() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let feeder = try RTSPFeeder(server: server)
        let url = RTSPFixture.url(server)
        async let pull = ProcessRunner.record(url, seconds: 20, to: directory.appendingPathComponent("cut.mkv"))
        let streaming = await eventually(within: .seconds(15)) { server.stats.videoFramesPushed >= 30 }
        server.stop()
        let cut = try await pull
        #expect(streaming)
        #expect(!cut.timedOut)
        #expect(!server.isStreaming)
        #expect(server.clientCount == 0)
        let pushed = server.stats.videoFramesPushed
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.stats.videoFramesPushed == pushed)

        try server.start()
        let (streams, outcome) = try await ProcessRunner.probeStreams(RTSPFixture.url(server))
        await feeder.stop()
        #expect(outcome.status == 0, "ffprobe: \(outcome.standardError)")
        #expect(streams["video"] == ["h264"])
        #expect(server.stats.streamsConfigured == 2)
    }

    @Test("A port in use is a clear error naming the port and --rtsp-port")
    func portInUse() throws {
        let blocker = try ListeningSocket()
        defer { blocker.close() }
        let configuration = RTSPConfiguration(port: blocker.port, bindAddress: "127.0.0.1", credentials: RTSPFixture.credentials)
        let server = try RTSPLiveServer(configuration: configuration, logger: RTSPFixture.logger)
        #expect(throws: RTSPError.portInUse(port: blocker.port, bindAddress: "127.0.0.1")) { try server.start() }
        let text = RTSPError.portInUse(port: blocker.port, bindAddress: "127.0.0.1").description
        #expect(text.contains("\(blocker.port)") && text.contains("--rtsp-port"))
    }
}

/// A TCP socket listening on 127.0.0.1 on a port the system picked.
struct ListeningSocket {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 4) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        Glibc.close(descriptor)
    }
}
