import Foundation
import Testing

// camo-studio's virtual microphone in the VM: the agent's synthetic sound (1 kHz left, 2 kHz right, a click at each
// second) and picture (a white flash every 30th frame, in step with the click) go to `camo-studio camera`, which
// plays the sound into snd-aloop (loaded as CamoMic, as `camo-studio setup` does) and writes the picture to
// v4l2loopback. ffmpeg then records both as one program would: /dev/video10 and hw:CamoMic,1,0 in one run, each
// stream with its own capture timestamps (v4l2's buffer times, ALSA's delay-corrected clock).

/// snd-aloop as `camo-studio setup` loads it: id CamoMic, two substreams.
enum CamoMicCard {
    static func with<T>(_ body: () throws -> T) throws -> T {
        _ = try? shell("rmmod snd_aloop 2>/dev/null")
        let probe = try shell("modprobe snd-aloop index=-2 id=CamoMic pcm_substreams=2 2>&1")
        guard probe.status == 0 else { throw HardwareError("modprobe snd-aloop: \(probe)") }
        guard Hardware.wait(seconds: 20, { FileManager.default.fileExists(atPath: "/proc/asound/CamoMic") }) else {
            throw HardwareError("/proc/asound/CamoMic did not appear")
        }
        defer {
            if !Hardware.wait(seconds: 10, every: 0.25, { (try? shell("grep -q '^snd_aloop ' /proc/modules || exit 0; rmmod snd_aloop 2>&1"))?.status == 0 }) {
                Issue.record("rmmod snd_aloop failed: is a process still holding the card?")
            }
        }
        return try body()
    }
}

@Suite(
    "Virtual microphone: camo-studio camera into snd-aloop, recorded by ffmpeg beside the picture (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test --filter VirtualMicrophoneHardwareTests"))
struct VirtualMicrophoneHardwareTests {
    @Test("The tone arrives at 1 kHz and 2 kHz with no gap longer than a packet (10 ms), and each click within 33 ms of its flash")
    func toneAndSync() throws {
        try Loopback.require()
        try CamoMicCard.with {
            let scratch = try HardwareScratch("vmic")
            let agent = try HardwareAgent(scratch, camera: "test", waitForCamera: false)
            defer { agent.stop() }
            let studio = try VirtualCameraHardwareTests.studio(scratch, port: agent.port, label: "camera-mic", extra: ["--microphone", "auto"])
            defer { studio.stop() }
            #expect(studio.stdout.contains("microphone=hw:CamoMic,1,0"), "the device line: \(studio.stdout)")
            #expect(Hardware.wait(seconds: 30) { studio.stderr.contains("Feeding") }, "the studio did not start feeding: \(tail(studio.stderr))")
            Thread.sleep(forTimeInterval: 3)  // the microphone's buffer fills and the hold settles

            let seconds = 14
            let recording = scratch.path + "/both.nut"
            let ffmpeg = try BackgroundProcess(
                scratch, "ffmpeg-both", executable: "/usr/bin/ffmpeg",
                arguments: ["-hide_banner", "-nostdin", "-loglevel", "info",
                            "-f", "v4l2", "-i", Loopback.device,
                            "-f", "alsa", "-channels", "2", "-sample_rate", "48000", "-i", "hw:CamoMic,1,0",
                            "-t", String(seconds), "-copyts", "-fps_mode", "passthrough",
                            "-map", "0:v", "-c:v", "rawvideo", "-pix_fmt", "gray", "-map", "1:a", "-c:a", "pcm_s16le", "-f", "nut", "-y", recording])
            let ended = ffmpeg.wait(seconds: Double(seconds) + 60)
            #expect(ended && ffmpeg.process.terminationStatus == 0, "ffmpeg: \(tail(ffmpeg.stderr))")

            let (video, audio) = try Self.read(recording, scratch: scratch)
            print("HW virtual microphone: ffmpeg recorded \(video.count) frames and \(audio.samples.count / 2) sample frames (\(String(format: "%.2f", Double(audio.samples.count / 2) / 48_000)) s)")
            #expect(Double(audio.samples.count / 2) >= Double(seconds - 1) * 48_000, "too little sound recorded")

            // Pitch: zero crossings away from the clicks, over the whole recording.
            let left = stride(from: 0, to: audio.samples.count, by: 2).map { Float(audio.samples[$0]) / 32_768 }
            let right = stride(from: 1, to: audio.samples.count, by: 2).map { Float(audio.samples[$0]) / 32_768 }
            let pitchLeft = Self.frequency(left), pitchRight = Self.frequency(right)
            print(String(format: "HW virtual microphone: left %.2f Hz, right %.2f Hz (the agent plays 1000 and 2000; the drift control may move them by its correction, at most 0.5 %%)", pitchLeft, pitchRight))
            #expect(abs(pitchLeft - 1_000) < 5 && abs(pitchRight - 2_000) < 10, "pitch \(pitchLeft) Hz, \(pitchRight) Hz")
            let amplitude = left.map { abs($0) }.sorted()[left.count * 99 / 100]
            #expect(abs(amplitude - 0.251) < 0.02 || amplitude > 0.85, "the tone's level: 99th percentile \(amplitude)")

            // Gaps: the longest run of silence on both channels after the sound began (a sine at -12 dBFS is never
            // within 0.02 of zero for more than a sample or two).
            let begin = left.firstIndex { abs($0) > 0.1 } ?? 0
            var longest = 0, run = 0
            for i in begin..<left.count {
                if abs(left[i]) < 0.02 && abs(right[i]) < 0.02 { run += 1; longest = max(longest, run) } else { run = 0 }
            }
            print("HW virtual microphone: the longest silence after the sound began is \(longest) frames")
            #expect(longest < 480, "a gap of \(longest) frames (more than one 10 ms packet)")

            // A/V: the flash frames' times against the clicks' times, both as ffmpeg stamped them.
            let flashes = Self.flashTimes(video)
            let clicks = Self.clickTimes(left, audio.times)
            var offsets: [Double] = []
            for flash in flashes {
                guard let click = clicks.min(by: { abs($0 - flash) < abs($1 - flash) }), abs(click - flash) < 0.5 else { continue }
                offsets.append((click - flash) * 1_000)
            }
            print("HW virtual microphone: \(flashes.count) flashes, \(clicks.count) clicks; click minus flash (ms): \(offsets.map { String(format: "%.1f", $0) }.joined(separator: " "))")
            #expect(offsets.count >= seconds - 3, "too few flash/click pairs: \(offsets.count)")
            let mean = offsets.isEmpty ? .infinity : offsets.reduce(0, +) / Double(offsets.count)
            #expect(abs(mean) <= 1000.0 / 30, "the mean A/V offset is \(mean) ms (more than one frame)")
            #expect(offsets.allSatisfy { abs($0) <= 1000.0 / 30 + 15 }, "an offset beyond one frame plus one packet of jitter: \(offsets)")

            let status = VirtualCameraHardwareTests.feedStatus(scratch)
            print("HW virtual microphone: status drift \(String(describing: status?["microphoneDriftPPM"])) ppm; studio log: \(studio.stderr.split(separator: "\n").filter { $0.contains("icrophone") }.suffix(3).joined(separator: " | "))")
        }
    }

    @Test("--microphone with a device that does not exist: a clear message naming it and what to do, exit 1")
    func missingDevice() throws {
        try Loopback.require()
        let scratch = try HardwareScratch("vmic-bad")
        let result = try runCommand(try Hardware.binary("camo-studio"), [
            "camera", "--connect", "127.0.0.1:9", "--device", Loopback.device, "--size", VirtualCameraHardwareTests.size,
            "--microphone", "hw:NoSuchCard,0,0", "--feeds-dir", scratch.path + "/feeds",
        ], timeout: 30)
        print("HW virtual microphone: a missing device: exit \(result.status): \(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        #expect(result.status == 1 && !result.signaled)
        #expect(result.stderr.contains("hw:NoSuchCard,0,0") && result.stderr.contains("camo-studio setup"), "\(result.stderr)")
    }

    /// The video frames (time, mean luma) and audio (interleaved S16, each sample frame's time) of the recording.
    static func read(_ path: String, scratch: HardwareScratch) throws -> (video: [(time: Double, luma: Double)], audio: (samples: [Int16], times: [Double])) {
        let packets = try runCommand("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pts_time,size", "-of", "csv=p=0", path], timeout: 120)
        guard packets.status == 0 else { throw HardwareError("ffprobe: \(packets.stderr)") }
        var videoTimes: [Double] = [], audioPackets: [(time: Double, frames: Int)] = []
        for line in packets.stdout.split(separator: "\n") {
            let fields = line.split(separator: ",")
            guard fields.count >= 3, let stream = Int(fields[0]), let time = Double(fields[1]), let size = Int(fields[2]) else { continue }
            if stream == 0 { videoTimes.append(time) } else { audioPackets.append((time, size / 4)) }
        }
        let gray = scratch.path + "/video.gray", pcm = scratch.path + "/audio.s16"
        let extract = try runCommand("/usr/bin/ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-i", path,
                                                        "-map", "0:v", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", "-y", gray,
                                                        "-map", "0:a", "-f", "s16le", "-y", pcm], timeout: 120)
        guard extract.status == 0 else { throw HardwareError("ffmpeg extract: \(extract.stderr)") }
        let frameBytes = VirtualCameraHardwareTests.width * VirtualCameraHardwareTests.height
        let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: gray)))
        let frames = pixels.count / frameBytes
        guard frames == videoTimes.count else { throw HardwareError("\(frames) frames decoded for \(videoTimes.count) packets") }
        let video = (0..<frames).map { k -> (time: Double, luma: Double) in
            let slice = pixels[(k * frameBytes)..<((k + 1) * frameBytes)]
            return (videoTimes[k], Double(slice.reduce(0) { $0 + Int($1) }) / Double(frameBytes))
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: pcm))
        let samples = bytes.withUnsafeBytes { raw in (0..<(bytes.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) } }
        var times: [Double] = []
        times.reserveCapacity(samples.count / 2)
        for packet in audioPackets {
            for j in 0..<packet.frames { times.append(packet.time + Double(j) / 48_000) }
        }
        guard times.count == samples.count / 2 else { throw HardwareError("\(samples.count / 2) sample frames decoded for \(times.count) in the packets") }
        return (video, (samples, times))
    }

    /// Mean frequency from rising zero crossings, skipping the 48-sample clicks.
    static func frequency(_ x: [Float]) -> Double {
        var crossings: [Int] = []
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 && abs(x[i]) < 0.5 && abs(x[i - 1]) < 0.5 { crossings.append(i) }
        guard crossings.count > 2 else { return 0 }
        // Each interval between crossings is one period, except where a click or gap lies between: take the median.
        let periods = zip(crossings.dropFirst(), crossings).map { Double($0 - $1) }.sorted()
        let median = periods[periods.count / 2]
        let kept = periods.filter { abs($0 - median) < 2 }
        return 48_000 / (kept.reduce(0, +) / Double(kept.count))
    }

    /// The times of flash frames: mean luma well above the median of the recording.
    static func flashTimes(_ video: [(time: Double, luma: Double)]) -> [Double] {
        let median = video.map(\.luma).sorted()[video.count / 2]
        var times: [Double] = []
        var previous = false
        for frame in video {
            let flash = frame.luma > median + 40
            if flash && !previous { times.append(frame.time) }
            previous = flash
        }
        return times
    }

    /// The times of clicks: a run of left samples over 0.8 after at least 0.5 s without one.
    static func clickTimes(_ left: [Float], _ times: [Double]) -> [Double] {
        var clicks: [Double] = []
        var last = -Double.infinity
        for i in left.indices where left[i] > 0.8 && times[i] - last > 0.5 {
            clicks.append(times[i])
            last = times[i]
        }
        return clicks
    }
}
