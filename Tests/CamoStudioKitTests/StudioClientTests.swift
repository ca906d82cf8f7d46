import CamoStudioKit
import Testing

@Suite("Studio client error paths")
struct StudioClientTests {
    private func configuration() -> StudioClientConfiguration {
        var config = StudioClientConfiguration(identity: .generated(id: "test-studio"))
        config.handshakeTimeoutNanos = 300_000_000
        return config
    }

    @Test("an unauthenticated refusal surfaces as 'agent refused: <reason>'")
    func refused() async throws {
        let agent = try FakeAgent(.refuse(code: 13, reason: "unpaired studios are not allowed"))
        await #expect(throws: StudioClientError.agentRefused(code: 13, reason: "unpaired studios are not allowed")) {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: agent.port, configuration: configuration())
        }
    }

    @Test("the recorder reports a refusal as a connection error")
    func recorderRefused() async throws {
        let agent = try FakeAgent(.refuse(code: 9, reason: "too many connections"))
        let recorder = Recorder(configuration: RecorderConfiguration(
            address: HostPort(host: "127.0.0.1", port: agent.port), seconds: 1,
            outputDirectory: temporaryPath("refused"), client: configuration()))
        do {
            _ = try await recorder.run()
            Issue.record("the recording should have failed")
        } catch {
            #expect(error.description == "agent refused: too many connections (code 9)")
        }
    }

    @Test("a hang-up before the hello ends the session")
    func hangUp() async throws {
        let agent = try FakeAgent(.hangUp)
        do {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: agent.port, configuration: configuration())
            Issue.record("connect should have failed")
        } catch {
            guard case .sessionEnded(let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.isError)
        }
    }

    @Test("a silent peer hits the handshake deadline")
    func silent() async throws {
        let agent = try FakeAgent(.silent)
        await #expect(throws: StudioClientError.handshakeTimeout) {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: agent.port, configuration: configuration())
        }
    }

    @Test("nobody listening is a connect failure")
    func refusedTCP() async throws {
        let port = try FakeAgent.unusedPort()
        await #expect(throws: StudioClientError.self) {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration())
        }
    }
}
