import CamoVirtualDevices
import Testing

@Suite("Microphone feed: buffering, playing, running dry, bursts and the agent going away, period by period")
struct MicrophoneFeedTests {
    /// 480 frames of a ramp whose values say which frame they are (left = index/1e6, right = -index/1e6).
    static func packet(_ first: Int, frames: Int = 480) -> [Float] {
        (first..<(first + frames)).flatMap { [Float($0) / 1e6, -Float($0) / 1e6] }
    }
    static func time(_ frame: Int) -> UInt64 { UInt64(frame) * 1_000_000_000 / 48_000 }
    /// Sends `frames` (whole 480-frame packets) of the ramp from frame `sent` on.
    static func send(_ frames: Int, to feed: inout MicrophoneFeed, from sent: inout Int) {
        for _ in 0..<(frames / 480) {
            feed.receive(packet(sent), firstSampleTime: time(sent))
            sent += 480
        }
    }

    @Test("Silence until the buffer holds its target, then the agent's frames in order; the period's capture time is its first frame's")
    func buffersThenPlays() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 1_920, packetFrames: 480)
        #expect(feed.state == .idle)
        #expect(feed.nextPeriod(deviceDelay: 0).samples.allSatisfy { $0 == 0 })
        let target = feed.targetFrames
        #expect(target == 1_920 + 960 + 2_880, "the device's buffer, two packets and 60 ms for the arrival's jitter")
        var sent = 0
        while sent + 480 < target {
            feed.receive(Self.packet(sent), firstSampleTime: Self.time(sent))
            sent += 480
            let period = feed.nextPeriod(deviceDelay: 0)
            #expect(period.captureTime == nil && period.samples.allSatisfy { $0 == 0 }, "still buffering at \(sent)")
            feed.receive(Self.packet(sent), firstSampleTime: Self.time(sent))
            sent += 480
        }
        let first = feed.nextPeriod(deviceDelay: 480)
        #expect(feed.state == .playing)
        #expect(first.captureTime == Self.time(0))
        #expect(first.samples.count == 960)
        // Step is 1 + the correction (a few hundred ppm at most here): frame k is close to k/1e6.
        #expect(abs(first.samples[2 * 100] - 100 / 1e6) < 5e-7 && abs(first.samples[2 * 100 + 1] + 100 / 1e6) < 5e-7)
        #expect(feed.counters.playedFrames == 480)
    }

    @Test("Running dry mid-stream: the period ends in silence, counted, and it buffers to the target again")
    func underrun() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 480, packetFrames: 480)
        var sent = 0
        while sent < feed.targetFrames + 480 {
            feed.receive(Self.packet(sent), firstSampleTime: Self.time(sent))
            sent += 480
        }
        _ = feed.nextPeriod(deviceDelay: 0)
        #expect(feed.state == .playing)
        var played = 0
        while feed.state != .buffering && played < 100 {
            _ = feed.nextPeriod(deviceDelay: 0)
            played += 1
        }
        #expect(feed.state == .buffering)
        #expect(feed.counters.underruns == 1 && feed.counters.underrunFrames > 0)
        #expect(feed.nextPeriod(deviceDelay: 0).samples.allSatisfy { $0 == 0 })
        #expect(feed.jitterFrames == 2_880 + 960 && feed.targetFrames == feed.baseTargetFrames + 2_880 + 960, "running dry adds 20 ms to the target")
    }

    @Test("A dry spell grows the allowance by its length, at least 20 ms and at most 100 ms", arguments: [1, 5, 12])
    func drySpellLength(silentPeriods: Int) {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 480, packetFrames: 480, initialJitterFrames: 0)
        var sent = 0
        func send(_ frames: Int) { Self.send(frames, to: &feed, from: &sent) }
        send(feed.targetFrames)
        _ = feed.nextPeriod(deviceDelay: 0)
        #expect(feed.state == .playing)
        while feed.state != .buffering { _ = feed.nextPeriod(deviceDelay: 0) }
        // Running dry adds 20 ms at once; the silence so far is the end of that period.
        #expect(feed.jitterFrames == 960)
        let dry = feed.counters.underrunFrames + silentPeriods * 480
        let growth = min(max(dry, 960), 4_800)
        for _ in 0..<silentPeriods { _ = feed.nextPeriod(deviceDelay: 0) }
        // The backlog arrives at once and playing resumes.
        send(feed.targetFrames + 4_800)
        _ = feed.nextPeriod(deviceDelay: 0)
        #expect(feed.state == .playing)
        #expect(feed.jitterFrames == growth, "after \(dry) silent frames: allowance \(feed.jitterFrames), want \(growth)")
        #expect(feed.controller.targetFrames == Double(feed.targetFrames))
    }

    @Test("The jitter allowance grows by 20 ms each time the buffer runs dry, to 300 ms, and shrinks by 5 ms per 10 s played without")
    func jitterAllowance() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 480, packetFrames: 480)
        var sent = 0
        func fill(_ frames: Int) {
            let end = sent + frames
            while sent < end {
                feed.receive(Self.packet(sent % 100_000), firstSampleTime: Self.time(sent))
                sent += 480
            }
        }
        // Twenty times: fill to the target, play until dry.
        for _ in 0..<20 {
            fill(feed.targetFrames)
            var periods = 0
            repeat {
                _ = feed.nextPeriod(deviceDelay: 0)
                periods += 1
            } while feed.state == .playing && periods < 10_000
        }
        #expect(feed.jitterFrames == feed.maximumJitterFrames && feed.maximumJitterFrames == 14_400, "allowance \(feed.jitterFrames)")
        // 20 s of steady input: two decays of 5 ms.
        fill(feed.targetFrames)
        _ = feed.nextPeriod(deviceDelay: 0)
        for _ in 0..<2_000 {
            fill(480)
            _ = feed.nextPeriod(deviceDelay: 0)
        }
        #expect(feed.counters.underruns == 20)
        #expect(feed.jitterFrames == 14_400 - 2 * 240, "allowance \(feed.jitterFrames)")
    }

    @Test("A burst after a stall (half a second at once) is cut back to the target at once, and counted")
    func burstIsTrimmed() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 1_920, packetFrames: 480)
        var sent = 0
        func send(_ frames: Int) { Self.send(frames, to: &feed, from: &sent) }
        send(feed.targetFrames)
        _ = feed.nextPeriod(deviceDelay: 0)
        #expect(feed.state == .playing)
        send(24_000)
        let period = feed.nextPeriod(deviceDelay: 1_920)
        #expect(feed.counters.trimmedFrames > 20_000, "trimmed \(feed.counters.trimmedFrames)")
        // What plays now is the newest audio: the frame at the target's distance from the end.
        let index = Int((period.samples[0] * 1e6).rounded())
        #expect(abs(index - (sent - (feed.targetFrames - 1_920))) < 3, "plays frame \(index) of \(sent)")
    }

    @Test("The agent going away: what is queued plays out, then silence (idle); its return starts a fresh buffer")
    func sessionLostPlaysOut() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 1_920, packetFrames: 480)
        var sent = 0
        while sent < feed.targetFrames {
            feed.receive(Self.packet(sent), firstSampleTime: Self.time(sent))
            sent += 480
        }
        _ = feed.nextPeriod(deviceDelay: 0)
        feed.sessionLost()
        var periods = 0
        while feed.state == .playing && periods < 100 {
            _ = feed.nextPeriod(deviceDelay: 0)
            periods += 1
        }
        #expect(feed.state == .idle)
        #expect(feed.counters.underruns == 0, "running out after the agent left is not an underrun")
        #expect(feed.counters.playedFrames >= sent - 3)
        feed.receive(Self.packet(0), firstSampleTime: Self.time(1_000_000))
        #expect(feed.state == .buffering)
    }

    @Test("Over ten simulated minutes with the agent 250 ppm slow in 1024-frame packets: no underrun, no trim, drift -250 ppm")
    func holdsAgainstDrift() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 1_920, packetFrames: 1_024)
        var due = 0.0, sent = 0
        var deviceDelay = 0
        for _ in 0..<60_000 {
            due += 480 * (1 - 250e-6)
            while Double(sent + 1_024) <= due {
                feed.receive(Self.packet(sent % 100_000, frames: 1_024), firstSampleTime: Self.time(sent))
                sent += 1_024
            }
            _ = feed.nextPeriod(deviceDelay: deviceDelay)
            deviceDelay = 1_440
        }
        #expect(feed.counters.underruns == 0 && feed.counters.trimmedFrames == 0, "\(feed.counters)")
        #expect(abs(feed.controller.driftPPM + 250) < 25, "drift \(feed.controller.driftPPM)")
    }

    @Test("More than half a second queued before playing (a consumer-less stall): the oldest input is dropped and counted")
    func capacity() {
        var feed = MicrophoneFeed(periodFrames: 480, deviceBufferFrames: 1_920, packetFrames: 480)
        for k in 0..<60 { feed.receive(Self.packet(k * 480), firstSampleTime: Self.time(k * 480)) }
        #expect(feed.counters.droppedFrames == 60 * 480 - feed.capacityFrames)
    }
}
