import CamoMedia
import CamoProducerKit
import CamoStudioKit
import CamoWire
import Foundation
import Logging
import Synchronization

/// How long a settings change takes to reach another studio: an in-process agent (real TCP and Noise on loopback)
/// streaming 1280x720 JPEG at 30 fps to two studios; one writes, the time until the other has the notification is
/// measured (both ends on this host's monotonic clock). The reference is a ping's round trip on the same sessions.
enum SettingsBench {
    struct Result {
        var writes: Int
        var p50Ms: Double
        var p95Ms: Double
        var maxMs: Double
        var roundTripP50Ms: Double
        /// The flood: writes sent (16 in flight), answered, refused (every other one is out of range), its seconds,
        /// and the video slots the other studio received meanwhile against the slots of those seconds.
        var floodWrites = 0
        var floodAnswered = 0
        var floodRefused = 0
        var floodSeconds = 0.0
        var floodFramesReceived = 0
        var floodSequenceGaps = 0

        var json: [String: Any] {
            ["writes": writes, "notificationP50Ms": p50Ms, "notificationP95Ms": p95Ms, "notificationMaxMs": maxMs,
             "pingRoundTripP50Ms": roundTripP50Ms, "floodWrites": floodWrites, "floodAnswered": floodAnswered,
             "floodRefused": floodRefused, "floodSeconds": floodSeconds, "floodFramesReceived": floodFramesReceived,
             "floodSequenceGaps": floodSequenceGaps]
        }
    }

    static func run(writes: Int, flood: Int = 10_000) throws -> Result {
        let box = Mutex<Result?>(nil)
        let failure = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let result = try await measure(writes: writes, flood: flood)
                box.withLock { $0 = result }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        done.wait()
        if let message = failure.withLock({ $0 }) { throw BenchError(message) }
        return box.withLock { $0! }
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private static func measure(writes: Int, flood: Int) async throws -> Result {
        var configuration = ControllerConfiguration(
            identity: AgentIdentity(id: "bench-agent", name: "bench", keyPair: .generate()),
            description: AgentDescription(model: "bench", softwareVersion: "0", camera: "pattern", microphone: "none"),
            admission: AdmissionPolicy(allowUnpaired: true))
        configuration.host = "127.0.0.1"
        configuration.port = 0
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let controller = CamoController(configuration: configuration, logger: logger, pairedDevices: PairedDeviceStore(inMemory: []), advertiser: .off)
        try await controller.start()
        defer { Task { await controller.stop() } }
        let port = controller.port!
        let feeding = Task.detached {
            var pixels = [UInt8](repeating: 0, count: 1280 * 720 * 4)
            let clock = SystemMonotonicClock()
            var n: UInt64 = 0
            while !Task.isCancelled {
                n += 1
                TestPattern.render(frameNumber: n, size: .hd720, into: &pixels)
                try? controller.enqueueVideo(VideoFrame(width: 1280, height: 720, bytesPerRow: 5120, data: pixels,
                                                        captureTime: clock.now.nanoseconds, sourceSequence: n))
                try? await Task.sleep(nanoseconds: 33_000_000)
            }
        }
        defer { feeding.cancel() }
        func studio(_ name: String, decode: Bool) async throws -> StudioClient {
            var c = StudioClientConfiguration(identity: .generated(), studioName: name, audioSamplesRequired: 1024, codec: .jpeg)
            c.decodeVideo = decode
            return try await StudioClient.connect(host: "127.0.0.1", port: port, configuration: c, logger: logger)
        }
        let writer = try await studio("writer", decode: false)
        let watcher = try await studio("watcher", decode: true)
        // The watcher reads all along and stamps each change; the writer's results are drained too.
        let arrivals = Mutex<[UInt64: UInt64]>([:])
        let roundTrips = Mutex<[UInt64]>([])
        let video = Mutex<(frames: Int, gaps: Int, last: UInt32?)>((0, 0, nil))
        let watching = Task.detached {
            for await event in watcher.events {
                switch event {
                case .settings(let snapshot) where snapshot.reason == .change:
                    let now = DispatchTime.now().uptimeNanoseconds
                    arrivals.withLock { $0[snapshot.revision] = now }
                case .roundTrip(let nanos):
                    roundTrips.withLock { $0.append(nanos) }
                case .video(let frame):
                    video.withLock { v in
                        if let last = v.last, frame.sequence != last &+ 1 { v.gaps += 1 }
                        v.last = frame.sequence
                        v.frames += 1
                    }
                default:
                    continue
                }
            }
        }
        let results = Mutex<(answered: Int, refused: Int)>((0, 0))
        let draining = Task.detached {
            for await event in writer.events {
                if case .settingsResult(let result) = event {
                    results.withLock { r in
                        r.answered += 1
                        if !result.refused.isEmpty { r.refused += 1 }
                    }
                }
            }
        }
        try await Task.sleep(nanoseconds: 1_000_000_000)
        var latencies: [Double] = []
        for i in 0..<writes {
            let before = arrivals.withLock { $0.count }
            let sent = DispatchTime.now().uptimeNanoseconds
            try await writer.writeSettings(["imageFlipHorizontal": .bool(i % 2 == 0)], requestId: UInt32(i))
            let deadline = sent + 2_000_000_000
            var arrived: UInt64?
            while DispatchTime.now().uptimeNanoseconds < deadline {
                let snapshot = arrivals.withLock { $0 }
                if snapshot.count > before, let newest = snapshot.max(by: { $0.key < $1.key }) { arrived = newest.value; break }
                try await Task.sleep(nanoseconds: 200_000)
            }
            guard let arrived else { throw BenchError("change \(i) did not reach the other studio within 2 s") }
            latencies.append(Double(arrived - sent) / 1e6)
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        // The flood: writes 16 in flight, every other one out of range; the other studio's video meanwhile.
        let answeredBefore = results.withLock { $0.answered }
        let framesBefore = video.withLock { ($0.frames, $0.gaps) }
        let floodStart = DispatchTime.now().uptimeNanoseconds
        for i in 0..<flood {
            while i - (results.withLock { $0.answered } - answeredBefore) >= 16 { try await Task.sleep(nanoseconds: 100_000) }
            let value: SettingValue = i % 2 == 0 ? .int(i % 4 == 0 ? 90 : 0) : .int(45)
            try await writer.writeSettings(["imageRotation": value], requestId: UInt32(1_000_000 + i))
        }
        let floodDeadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while results.withLock({ $0.answered }) - answeredBefore < flood, DispatchTime.now().uptimeNanoseconds < floodDeadline {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        let floodSeconds = Double(DispatchTime.now().uptimeNanoseconds - floodStart) / 1e9
        let floodAnswers = results.withLock { $0 }
        let framesAfter = video.withLock { ($0.frames, $0.gaps) }
        _ = try? await writer.writeSettings(["imageRotation": .int(0)], requestId: 9)
        watching.cancel()
        draining.cancel()
        await writer.close()
        await watcher.close()
        latencies.sort()
        let rtts = roundTrips.withLock { $0 }.sorted()
        func quantile(_ q: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))] }
        var result = Result(writes: writes, p50Ms: quantile(0.5), p95Ms: quantile(0.95), maxMs: latencies.last ?? 0,
                            roundTripP50Ms: rtts.isEmpty ? 0 : Double(rtts[rtts.count / 2]) / 1e6)
        result.floodWrites = flood
        result.floodAnswered = floodAnswers.answered - answeredBefore
        result.floodRefused = floodAnswers.refused
        result.floodSeconds = floodSeconds
        result.floodFramesReceived = framesAfter.0 - framesBefore.0
        result.floodSequenceGaps = framesAfter.1 - framesBefore.1
        return result
    }

    static func print(_ r: Result) {
        Swift.print("settings change to another studio (in-process agent, 1280x720 JPEG at 30 fps to both, \(r.writes) writes):")
        Swift.print(String(format: "  notification latency        p50 %6.2f ms  p95 %6.2f ms  max %6.2f ms", r.p50Ms, r.p95Ms, r.maxMs))
        Swift.print(String(format: "  ping round trip (reference) p50 %6.2f ms", r.roundTripP50Ms))
        Swift.print(String(format: "  flood of %d writes (16 in flight, half out of range): %d answered, %d refused, %.1f s; the other studio got %d frames (%.1f fps), %d gaps in its sequence",
                           r.floodWrites, r.floodAnswered, r.floodRefused, r.floodSeconds, r.floodFramesReceived,
                           Double(r.floodFramesReceived) / max(r.floodSeconds, 0.001), r.floodSequenceGaps))
    }
}
