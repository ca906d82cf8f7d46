import CamoStudioKit
import CamoTestSupport
import Synchronization
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

    /// The session's deadlines follow the clock it is given: a silent agent times the handshake out when the manual
    /// clock passes the deadline, however long the test waits before that.
    @Test("the handshake deadline follows the studio's clock")
    func handshakeDeadlineOnTheStudiosClock() async throws {
        let agent = try FakeAgent(.silent)
        let clock = ManualClock(now: 1_000_000_000)
        var config = StudioClientConfiguration(identity: .generated(id: "test-studio"))
        config.clock = clock
        config.handshakeTimeoutNanos = 5_000_000_000
        let finished = Mutex(false)
        // High priority: in a full parallel run the cooperative pool has hundreds of test tasks queued, and this one
        // must connect before the fake agent stops waiting for it.
        let connecting = Task(priority: .high) {
            defer { finished.withLock { $0 = true } }
            return try await StudioClient.connect(host: "127.0.0.1", port: agent.port, configuration: config)
        }
        // The session arms its deadline on the clock once connected (bounded real-time wait, so a connect that fails
        // instead says why rather than hanging).
        for _ in 0..<6_000 where clock.nextDeadline == nil && !finished.withLock({ $0 }) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        guard clock.nextDeadline != nil else {
            do {
                _ = try await connecting.value
                Issue.record("the session armed no deadline on the studio's clock; connect succeeded")
            } catch {
                Issue.record("the session armed no deadline on the studio's clock; connect failed: \(error)")
            }
            return
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        clock.advance(by: 4_000_000_000)
        try await Task.sleep(nanoseconds: 100_000_000)
        clock.advance(by: 500_000_000)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(!finished.withLock { $0 }, "4.5 s on the studio's clock: still waiting, however long in real time")
        clock.advance(by: 1_000_000_000)
        await #expect(throws: StudioClientError.handshakeTimeout) { _ = try await connecting.value }
    }

    @Test("nobody listening is a connect failure")
    func refusedTCP() async throws {
        let port = try FakeAgent.unusedPort()
        await #expect(throws: StudioClientError.self) {
            _ = try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: configuration())
        }
    }
}
