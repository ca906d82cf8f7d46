import ArgumentParser
import CAllocationCounter
import CamoMedia
import Crypto
import CamoWire
import Foundation

/// Measures the send path, the JPEG encoder, captured-frame conversion, the image transform and the audio path, each
/// beside references run in the same process.
@main
struct CamoBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camo-bench",
        abstract: "Benchmarks the send path (fragment + AES-GCM + framing), JPEG encoding, BGRA conversion, the image transform, the audio path, the event detectors and H.264 against references.")

    @Option(help: "Frames for the send-path run.") var sendFrames = 120
    @Option(help: "Frames for the JPEG run.") var jpegFrames = 150
    @Option(help: "JPEG quality.") var quality = 80
    @Flag(help: "Print one JSON object instead of text.") var json = false
    @Option(help: "Frames per BGRA conversion measurement.") var conversionFrames = 100
    @Option(help: "Quality of the MJPEG frames the conversion run decodes.") var conversionQuality = 85
    @Flag(help: "Run only the BGRA conversion benchmark (YUYV, NV12, MJPEG at 720p and 1080p).") var conversionOnly = false
    @Option(help: "Sample frames per audio packet (64...48000).") var audioSamples = 1024
    @Option(help: "Audio packets per timed run of each audio measurement.") var audioPackets = 40_000
    @Flag(help: "Run only the audio benchmark (S32_LE/S16_LE capture to float32 stereo packets, beside memcpy).") var audioOnly = false
    @Option(help: "Frames per image transform measurement.") var transformFrames = 100
    @Flag(help: "Run only the image transform benchmark (rotation, flips and viewport at 1080p BGRA, beside libyuv called directly, memcpy and the YUYV conversion).")
    var transformOnly = false
    @Flag(help: "Run only the H.264 benchmarks: encoding beside ffmpeg -c:v libx264 at 720p and 1080p, and the agent's CPU and latency for bgra, jpeg and h264 streams (camo-agent and camo-studio must sit beside camo-bench).")
    var h264Only = false
    @Option(help: "Frames per H.264 encode measurement.") var h264Frames = 90
    @Option(help: "Seconds per stream in the H.264 stream benchmark.") var streamSeconds = 10
    @Flag(help: "Run only the settings benchmark: how long a change takes to reach another studio while both stream.")
    var settingsOnly = false
    @Option(help: "Writes in the settings benchmark.") var settingsWrites = 200
    @Flag(help: "Run only the event detectors' benchmark: motion per frame at 720p and 1080p beside the YUYV conversion, and the audio detectors per second of audio.")
    var eventsOnly = false
    @Option(help: "Frames per motion measurement.") var eventFrames = 300
    @Option(help: "Seconds of audio per audio detector measurement.") var eventAudioSeconds = 20
    @Flag(help: "Run only the recording benchmark: muxing the shared H.264 rendition into CMAF on disk (with and without AAC) beside its encode and beside ffmpeg -c copy.")
    var recordingOnly = false
    @Option(help: "Frames in the recording benchmark.") var recordingFrames = 300
    @Flag(help: "Run only the cost-of-one-frame benchmark: the agent's CPU and peak RSS while one studio takes the synthetic pattern in bgra and jpeg at 720p and 1080p (camo-agent and camo-studio must sit beside camo-bench), the pattern's own cost apart.")
    var frameCostOnly = false
    @Option(help: "Another camo-agent binary to measure beside this build's in the frame-cost benchmark (the figures before a change).")
    var beforeAgent: String?
    @Option(help: "Seconds per stream in the frame-cost benchmark.") var frameCostSeconds = 10
    @Flag(help: "Run only the send-path benchmark: a 1080p BGRA frame fragmented, sealed and framed, beside memcpy and the bare AES-256-GCM seals, with its heap allocations per frame.")
    var sendOnly = false

    func validate() throws {
        // The alarm detector needs two cycles of the T3 pattern (4 s each) before it reports one.
        if eventAudioSeconds < 10 { throw ValidationError("--event-audio-seconds must be at least 10 (two T3 cycles and some), got \(eventAudioSeconds)") }
        for (name, value) in [("--send-frames", sendFrames), ("--jpeg-frames", jpegFrames), ("--conversion-frames", conversionFrames),
                              ("--transform-frames", transformFrames), ("--h264-frames", h264Frames), ("--event-frames", eventFrames),
                              ("--recording-frames", recordingFrames), ("--audio-packets", audioPackets)] where value < 1 {
            throw ValidationError("\(name) must be at least 1, got \(value)")
        }
    }

    func run() throws {
        // The programs this starts (openssl speed, ffmpeg, camo-agent) inherit the signal mask: a test runner that
        // started camo-bench with signals blocked must not leave openssl speed deaf to its own SIGALRM.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        if frameCostOnly {
            let result = try FrameCostBench.run(seconds: frameCostSeconds, beforeAgent: beforeAgent)
            if json {
                let data = try JSONSerialization.data(withJSONObject: ["frameCost": result.json], options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                FrameCostBench.print(result, seconds: frameCostSeconds, beforeAgent: beforeAgent)
            }
            return
        }
        if sendOnly {
            let send = try SendPathBench.run(frames: sendFrames)
            if json {
                let data = try JSONSerialization.data(withJSONObject: ["send": send.json], options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                SendPathBench.print(send, frames: sendFrames)
            }
            return
        }
        if settingsOnly {
            let result = try SettingsBench.run(writes: settingsWrites)
            if json {
                let data = try JSONSerialization.data(withJSONObject: ["settings": result.json], options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                SettingsBench.print(result)
            }
            return
        }
        if h264Only {
            let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
            if ffmpeg == nil { FileHandle.standardError.write(Data("camo-bench: ffmpeg is not installed; no libx264 reference (apt-get install ffmpeg)\n".utf8)) }
            let encode = try H264Bench.run(frames: h264Frames, ffmpeg: ffmpeg)
            let streams = try StreamBench.run(seconds: streamSeconds)
            if json {
                let object: [String: Any] = ["h264Encode": encode.map(\.json), "streams": streams.map(\.json)]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                H264Bench.print(encode, frames: h264Frames)
                StreamBench.print(streams, seconds: streamSeconds)
            }
            return
        }
        if recordingOnly {
            let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
            if ffmpeg == nil { FileHandle.standardError.write(Data("camo-bench: ffmpeg is not installed; no ffmpeg -c copy reference (apt-get install ffmpeg)\n".utf8)) }
            let result = try RecordingBench.run(frames: recordingFrames, ffmpeg: ffmpeg)
            if json {
                let data = try JSONSerialization.data(withJSONObject: ["recording": result.json], options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                RecordingBench.print(result)
            }
            return
        }
        if eventsOnly {
            let result = try EventsBench.run(frames: eventFrames, audioSeconds: eventAudioSeconds)
            if json {
                let data = try JSONSerialization.data(withJSONObject: ["events": result.json], options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                EventsBench.print(result, frames: eventFrames, audioSeconds: eventAudioSeconds)
            }
            return
        }
        if conversionOnly || audioOnly || transformOnly {
            // Only the chosen benchmarks (several flags: each of them).
            let conversion = conversionOnly ? try ConversionBench.run(frames: conversionFrames, jpegQuality: conversionQuality) : nil
            let transform = transformOnly ? try TransformBench.run(frames: transformFrames) : nil
            let audio = audioOnly ? try AudioBench.run(samplesPerPacket: audioSamples, packets: audioPackets) : nil
            if json {
                var object: [String: Any] = [:]
                if let conversion { object["conversion"] = conversion.map(\.json) }
                if let transform { object["transform"] = transform.json }
                if let audio { object["audio"] = audio.json }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                if let conversion { ConversionBench.print(conversion, frames: conversionFrames, quality: conversionQuality) }
                if let transform { TransformBench.print(transform, frames: transformFrames) }
                if let audio { AudioBench.print(audio) }
            }
            return
        }
        let conversion = try ConversionBench.run(frames: conversionFrames, jpegQuality: conversionQuality)
        let transform = try TransformBench.run(frames: transformFrames)
        let audio = try AudioBench.run(samplesPerPacket: audioSamples, packets: audioPackets)
        let send = try SendPathBench.run(frames: sendFrames)
        let jpeg = try JPEGBench.run(frames: jpegFrames, quality: quality)
        let planes = try JPEGPlanesBench.run(frames: jpegFrames)
        let events = try EventsBench.run(frames: eventFrames, audioSeconds: eventAudioSeconds)
        if json {
            let object: [String: Any] = [
                "send": send.json,
                "jpegMs": jpeg.ourMs, "turbojpegDirectMs": jpeg.directMs, "jpegOverDirect": jpeg.ratio,
                "conversion": conversion.map(\.json), "transform": transform.json, "audio": audio.json, "jpegPlanes": planes.json,
                "events": events.json,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        SendPathBench.print(send, frames: sendFrames)
        print(String(format: "JPEG encode, 1280x720 test pattern, quality %d (%d frames):", quality, jpegFrames))
        print(String(format: "  JPEGEncoder                   %8.2f ms/frame", jpeg.ourMs))
        print(String(format: "  tjCompress2 called directly   %8.2f ms/frame", jpeg.directMs))
        print(String(format: "  ours / direct                 %8.3f", jpeg.ratio))
        JPEGPlanesBench.print(planes, frames: jpegFrames)
        ConversionBench.print(conversion, frames: conversionFrames, quality: conversionQuality)
        TransformBench.print(transform, frames: transformFrames)
        AudioBench.print(audio)
        EventsBench.print(events, frames: eventFrames, audioSeconds: eventAudioSeconds)
    }
}

/// Monotonic seconds.
func seconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

enum SendPathBench {
    struct Result {
        var sendMBps: Double
        var memcpyMBps: Double
        /// swift-crypto's `AES.GCM.seal` (BoringSSL) of the same bytes in the same record sizes, nothing else.
        var bareSealMBps: Double
        /// OpenSSL's EVP AES-256-GCM called directly on the same bytes in the same records, into a buffer made once.
        var evpSealMBps: Double
        /// `openssl speed -evp aes-256-gcm` at 64 KiB blocks, one core (nil without the openssl command).
        var opensslMBps: Double?
        var ratio: Double { sendMBps / memcpyMBps }
        /// Heap allocations per frame on the send path in steady state (the goal: 0).
        var allocationsPerFrame: Double
        /// The send path against the faster of the two bare seals of the same bytes in the same records, swift-crypto's
        /// and OpenSSL's EVP (the target: 0.9 or more). `openssl speed` is printed beside it, not used: it seals
        /// its own buffer in place, over and over (the cipher's ceiling on this machine, not the same job).
        var overFastestSeal: Double { sendMBps / max(bareSealMBps, evpSealMBps) }
        /// The share of one core that 30 frames per second of 1080p BGRA costs on this path.
        var coreShare: Double { 30.0 * 1920 * 1080 * 4 / (sendMBps * 1e6) }

        var json: [String: Any] {
            [
                "sendPathMBps": sendMBps, "memcpyMBps": memcpyMBps, "sendOverMemcpy": ratio, "bareSealMBps": bareSealMBps,
                "evpSealMBps": evpSealMBps, "opensslSpeedMBps": opensslMBps.map { $0 as Any } ?? NSNull(),
                "sendOverFastestSeal": overFastestSeal, "allocationsPerFrame": allocationsPerFrame, "coreShareAt1080p30": coreShare,
            ]
        }
    }

    static func print(_ send: Result, frames: Int) {
        Swift.print(String(format: "send path, 1920x1080 BGRA (%d frames of %d bytes):", frames, 1920 * 1080 * 4))
        Swift.print(String(format: "  fragment + AES-GCM + framing  %8.0f MB/s", send.sendMBps))
        Swift.print(String(format: "  memcpy of the same bytes      %8.0f MB/s", send.memcpyMBps))
        Swift.print(String(format: "  send / memcpy                 %8.3f  (1080p30 raw costs %.1f%% of a core)", send.ratio, send.coreShare * 100))
        Swift.print(String(format: "  AES.GCM.seal alone, same records %5.0f MB/s  (swift-crypto)", send.bareSealMBps))
        Swift.print(String(format: "  EVP seal alone, same records  %8.0f MB/s  (OpenSSL's libcrypto, this process)", send.evpSealMBps))
        Swift.print(String(format: "  send / faster bare seal       %8.3f  (of the two above; target 0.9)", send.overFastestSeal))
        if let openssl = send.opensslMBps {
            Swift.print(String(format: "  openssl speed aes-256-gcm 64k  %7.0f MB/s  (its own buffer in place: the cipher's ceiling here)", openssl))
        }
        Swift.print(String(format: "  heap allocations per frame    %8.1f  (%d records of up to %d bytes; goal 0)", send.allocationsPerFrame,
                           (1920 * 1080 * 4 + WireLimits.maxFragmentPayload - 1) / WireLimits.maxFragmentPayload, WireLimits.maxFragmentPayload))
    }

    static func run(frames: Int) throws -> Result {
        // Two ends of an established XX session, in memory.
        var studio = WireConnection.initiator(
            preamble: Preamble(versionMajor: 1, versionMinor: 0, pattern: .xx, initiatorId: ""),
            localStatic: .generate(), remoteStatic: nil, psk: nil)
        var agent = WireConnection.responder()
        var toAgent = try studio.start()
        var toStudio: [UInt8] = []
        while !(studio.isEstablished && agent.isEstablished) {
            let fromStudio = try agent.receive(toAgent)
            toAgent = []
            for event in fromStudio.events {
                if case .preamble = event {
                    toStudio += try agent.accept(localStatic: .generate(), remoteStatic: nil, psk: nil)
                }
            }
            toStudio += fromStudio.send
            let fromAgent = try studio.receive(toStudio)
            toStudio = []
            toAgent += fromAgent.send
        }

        let size = VideoSize(width: 1920, height: 1080)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        TestPattern.render(frameNumber: 7, size: size, into: &pixels)
        let header = VideoMessage(
            sequence: 1, codec: .bgra, flags: [], width: 1920, height: 1080, bytesPerRow: 7680, slotTime: 1,
            captureTime: 1, data: []
        ).encodeHeader()
        var out: [UInt8] = []
        out.reserveCapacity(pixels.count + pixels.count / 1000 + 4096)

        func send(_ count: Int) throws {
            for _ in 0..<count {
                out.removeAll(keepingCapacity: true)
                var fragmenter = MessageFragmenter(channel: .video, header: header, body: pixels[...])
                while !fragmenter.isFinished {
                    try fragmenter.sealNext(using: &agent, into: &out)
                }
            }
        }
        var copy = [UInt8](repeating: 0, count: pixels.count)
        func memcpy(_ count: Int) {
            for i in 0..<count {
                pixels[0] = UInt8(truncatingIfNeeded: i)  // keep the copy from being hoisted
                copy.withUnsafeMutableBytes { destination in
                    pixels.withUnsafeBytes { source in destination.copyMemory(from: source) }
                }
            }
        }

        // Warm up; then rounds of a few frames each, the four jobs taking turns, and each job's best round: on a
        // shared machine a burst of someone else's work then slows one round of every job, not one whole job.
        try send(5)
        let perRound = min(10, frames)
        let rounds = max(1, frames / perRound)
        var best = (send: Double.infinity, memcpy: Double.infinity, bare: Double.infinity, evp: Double.infinity)
        var allocations: UInt = 0
        for _ in 0..<rounds {
            let allocationsBefore = camo_allocation_count()
            var start = seconds()
            try send(perRound)
            best.send = min(best.send, seconds() - start)
            allocations += camo_allocation_count() - allocationsBefore
            start = seconds()
            memcpy(perRound)
            best.memcpy = min(best.memcpy, seconds() - start)
            best.bare = min(best.bare, try bareSealSeconds(pixels, frames: perRound))
            best.evp = min(best.evp, EVPSealBench.seconds(pixels, frames: perRound))
        }
        let megabytes = Double(pixels.count * perRound) / 1e6
        return Result(
            sendMBps: megabytes / best.send, memcpyMBps: megabytes / best.memcpy, bareSealMBps: megabytes / best.bare,
            evpSealMBps: megabytes / best.evp, opensslMBps: opensslSpeedMBps(),
            allocationsPerFrame: Double(allocations) / Double(rounds * perRound))
    }

    /// `AES.GCM.seal` with a 256-bit key of the frame's bytes in the send path's record payloads (65517 bytes), each
    /// with its own nonce: the cipher's work alone. Returns the seconds `frames` frames took.
    static func bareSealSeconds(_ pixels: [UInt8], frames: Int) throws -> Double {
        let key = SymmetricKey(size: .bits256)
        var counter: UInt64 = 0
        var tags = 0
        let start = seconds()
        for _ in 0..<frames {
            var offset = 0
            while offset < pixels.count {
                let end = min(offset + WireLimits.maxFragmentPayload, pixels.count)
                var nonce = [UInt8](repeating: 0, count: 12)
                withUnsafeBytes(of: counter.bigEndian) { nonce.replaceSubrange(4..<12, with: $0) }
                counter += 1
                let box = try AES.GCM.seal(pixels[offset..<end], using: key, nonce: AES.GCM.Nonce(data: nonce))
                tags &+= Int(box.tag.first ?? 0)
                offset = end
            }
        }
        let elapsed = seconds() - start
        precondition(tags >= 0)
        return elapsed
    }

    /// OpenSSL's own figure for AES-256-GCM on this machine: `openssl speed -evp aes-256-gcm -bytes 65536 -seconds 2`,
    /// its last line's MB/s (nil when openssl is missing or prints something else).
    static func opensslSpeedMBps() -> Double? {
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = ["speed", "-evp", "aes-256-gcm", "-bytes", "65536", "-seconds", "2"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        // openssl speed stops itself with SIGALRM; should that signal stay blocked (a mask inherited from whoever
        // started camo-bench), it never stops, nor on SIGTERM: kill it after 30 s and go without its figure.
        let watchdog = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        // "AES-256-GCM   4412345.67k" : thousands of bytes per second at 65536-byte blocks.
        guard let line = output.split(separator: "\n").last(where: { $0.lowercased().hasPrefix("aes-256-gcm") }),
            let figure = line.split(separator: " ").last, figure.hasSuffix("k"), let kilobytes = Double(figure.dropLast())
        else { return nil }
        return kilobytes * 1000 / 1e6
    }
}
