import CALSA
import CamoStudioKit
import Foundation
import Synchronization
import Testing

// The microphone against the kernel's ALSA loopback card (snd-aloop) in the VM: what aplay (or a small ALSA writer
// here) plays into hw:Loopback,0,0 comes out of hw:Loopback,1,0, which the agent captures. Both ends of a loopback
// lock to the parameters of whichever opens first, so the player always starts before the agent (and a player that
// restarts after the agent uses plughw, which converts to what is locked).

@Suite(
    "Microphone hardware: camo-agent against snd-aloop (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
struct MicrophoneHardwareTests {
    static let capture = "hw:Loopback,1,0"

    @Test("devices lists the loopback's capture devices with formats; a missing device is refused with a reason")
    func devicesAndRefusal() throws {
        try Aloop.with {
            let listing = try agentCommand(["devices", "--json"])
            #expect(listing.status == 0, "devices --json: \(listing)")
            let object = try parseJSON(listing.stdout) as? [String: Any] ?? [:]
            let microphones = object["microphones"] as? [[String: Any]] ?? []
            let loopback = microphones.first { ($0["name"] as? String ?? "").hasPrefix("hw:CARD=Loopback") }
            #expect(loopback != nil, "no hw:CARD=Loopback microphone in \(microphones.compactMap { $0["name"] })")
            #expect(loopback?["card"] as? String == "Loopback", "card of \(loopback ?? [:])")
            let formats = loopback?["formats"] as? [String] ?? []
            #expect(formats.contains("S32_LE") && formats.contains("FLOAT_LE") && formats.contains("S16_LE"), "formats \(formats)")
            let text = try agentCommand(["devices"])
            #expect(text.stdout.contains("Microphones") && text.stdout.contains("Loopback"), "devices: \(text)")

            let scratch = try HardwareScratch("mic-refuse")
            let refused = try runCommand(try Hardware.binary("camo-agent"), [
                "run", "--camera", "test", "--microphone", "hw:Nope,0", "--port", "0", "--state-dir", scratch.path + "/state", "--no-web", "--no-rtsp",
            ], timeout: 60)
            #expect(refused.status != 0 && !refused.signaled, "an unknown microphone must be refused: \(refused)")
            #expect(refused.stderr.contains("hw:Nope,0") && refused.stderr.contains("camo-agent devices"), "\(refused)")
        }
    }

    @Test("440 Hz left and 880 Hz right arrive as continuous-phase sines over 20 s in three studios at once, packets exactly 480, 1024 and 2048")
    func tonesThroughLoopback() throws {
        // Under TCG the whole guest sometimes stops for longer than the 100 ms ring; then arecord, reading the other
        // loopback pair beside the agent, overruns too. Such a run says nothing about the agent, so it is run once
        // more (and that is printed); the second run must be clean. A failure with no overrun in arecord counts at once.
        for attempt in 1...2 {
            let (failures, referenceOverran, shortRecording) = try tonesRun(attempt: attempt)
            if failures.isEmpty { return }
            if attempt == 1 {
                // Also a run with neither: on a slow emulated host (CI, November 2026) two of three studios lost
                // stretches with the agent's capture and the reference both clean; one run more, printed.
                let why = referenceOverran ? "arecord on the other loopback pair overran too"
                    : shortRecording ? "a studio connected so late that its recording held less than 20 s of tone" : "the first run missed"
                print("HW microphone: \(why), so this run is repeated once. Its findings: \(failures.joined(separator: "; "))")
                continue
            }
            for failure in failures { Issue.record(Comment(rawValue: failure)) }
            return
        }
    }

    /// One run of the tone test: the failures found (empty when it passed), whether the reference arecord overran,
    /// and whether a studio's recording was too short to judge (its start came late in a stalled guest).
    private func tonesRun(attempt: Int) throws -> (failures: [String], referenceOverran: Bool, shortRecording: Bool) {
        try Aloop.with {
            var failures: [String] = []
            var shortRecording = false
            func check(_ condition: Bool, _ message: @autoclosure () -> String) {
                if !condition { failures.append(message()) }
            }
            let scratch = try HardwareScratch("mic-tone-\(attempt)")
            let tone = scratch.path + "/tone.raw"
            let began = Hardware.monotonicNow()
            func since(_ start: UInt64) -> String { String(format: "%.1f s", Double(Hardware.monotonicNow() - start) / 1e9) }
            try ToneFile.write(tone, seconds: 90, rate: 48_000, channels: 2, format: .s32, frequencies: [440, 880])
            print("HW microphone timing: tone file written in \(since(began))")
            let player = try Player(scratch, file: tone, device: "hw:Loopback,0,0", format: "S32_LE", rate: 48_000, channels: 2)
            defer { player.stop() }
            let agent = try HardwareAgent(scratch, camera: "test", microphone: Self.capture, waitForCamera: false)
            defer { agent.stop() }
            try #require(agent.waitForLog("Microphone open"), "the microphone did not open:\n\(tail(agent.log))")
            #expect(agent.log.contains("S32_LE, 2 ch, 48000 Hz"), "the loopback is locked to S32_LE stereo 48 kHz by aplay:\n\(tail(agent.log))")
            // The reference for the capture cost (and for stalls of the whole guest): arecord, reading a second
            // loopback pair with the same period, ring and format in the same VM at the same time.
            let referencePlayer = try Player(scratch, file: tone, device: "hw:Loopback,0,1", format: "S32_LE", rate: 48_000, channels: 2, label: "player-ref")
            defer { referencePlayer.stop() }
            let arecordLog = scratch.path + "/arecord.log"
            try #require(FileManager.default.createFile(atPath: arecordLog, contents: nil), "cannot create \(arecordLog)")
            let arecord = Process()
            arecord.executableURL = URL(fileURLWithPath: "/usr/bin/arecord")
            arecord.arguments = ["-q", "-D", "hw:Loopback,1,1", "-t", "raw", "-f", "S32_LE", "-r", "48000", "-c", "2",
                                 "--period-size=480", "--buffer-size=4800", "/dev/null"]
            arecord.standardInput = FileHandle.nullDevice
            arecord.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: arecordLog))
            try arecord.run()
            defer {
                if arecord.isRunning { kill(arecord.processIdentifier, SIGKILL) }
                arecord.waitUntilExit()
            }
            Thread.sleep(forTimeInterval: 1)
            let cpuStart = (microphoneThreadCPU(pid: agent.pid), Hardware.monotonicNow(), cpuSeconds(pid: arecord.processIdentifier))

            let sizes = [480, 1_024, 2_048]
            // The smallest picture: three studios' JPEG at 320x180 kept the emulated guest so busy that a studio fell
            // seconds behind and reconnected (November 2026); the audio is what is judged here.
            let studios = try sizes.map { n in
                try HardwareStudio(scratch, port: agent.port, label: "studio-\(n)", seconds: 22, size: "160x90", codec: "jpeg", samples: n)
            }
            for (n, studio) in zip(sizes, studios) {
                let waited = Hardware.monotonicNow()
                let (summary, line) = try studio.summary()
                print("HW microphone timing: N=\(n) studio ended after \(since(waited)) more")
                check(summary.smallestPacket == n && summary.largestPacket == n, "N=\(n): packets \(line)")
                let analysed = Hardware.monotonicNow()
                let samples = try studio.audio()
                let left = channel(samples, 0), right = channel(samples, 1)
                defer { print("HW microphone timing: N=\(n) read and judged in \(since(analysed))") }
                let start = try #require(left.firstIndex { abs($0) > 0.1 }, "N=\(n): no tone in the recording") + 4_800
                // Up to 20 s judged, at least 15 s: on a slow host the studios' connections ate 3–4 s of the 22 recorded.
                let window = min(20 * 48_000, max(15 * 48_000, left.count - start))
                // 22 s recorded; the three studios' handshakes under emulation took up to 4.5 s once,
                // and that run is repeated (28 s was tried: the studios' JPEG backlog then grew until stretches were lost).
                guard left.count >= start + window else {
                    shortRecording = true
                    failures.append("N=\(n): only \(Double(left.count - start) / 48_000) s of tone recorded (the tone began \(Double(start) / 48_000) s into the recording)")
                    continue
                }
                let l = sineFit(Array(left[start..<(start + window)]), frequency: 440)
                let r = sineFit(Array(right[start..<(start + window)]), frequency: 880)
                print("HW microphone N=\(n): left 440 Hz amplitude \(l.amplitude) residual \(l.residualDBFS) dBFS; right 880 Hz amplitude \(r.amplitude) residual \(r.residualDBFS) dBFS")
                check(abs(l.amplitude - 0.5) < 0.01 && abs(r.amplitude - 0.5) < 0.01, "N=\(n): amplitudes \(l.amplitude), \(r.amplitude), want 0.5")
                check(l.residualDBFS < -60 && r.residualDBFS < -60,
                      "N=\(n): residual left \(l.residualDBFS) dBFS, right \(r.residualDBFS) dBFS, want < -60 (a stretch missing or repeated); \((try? studio.audioIndex()).map(packetDiscontinuities) ?? "no audio.json"); summary \(line)")
                // The channels are not swapped: 440 Hz is not on the right.
                check(sineFit(Array(right[start..<(start + 48_000)]), frequency: 440).amplitude < 0.01, "N=\(n): 440 Hz found on the right channel")
            }
            let cpuEnd = (microphoneThreadCPU(pid: agent.pid), Hardware.monotonicNow(), cpuSeconds(pid: arecord.processIdentifier))
            if let a = cpuStart.0, let b = cpuEnd.0, let ra = cpuStart.2, let rb = cpuEnd.2 {
                let seconds = Double(cpuEnd.1 - cpuStart.1) / 1e9
                let share = (b - a) / seconds, reference = (rb - ra) / seconds
                print(String(format: "BENCH microphone capture CPU in the VM (TCG, ~7x slower than the host), 48 kHz stereo S32, 10 ms periods, over %.1f s: agent's camo-microphone thread %.2f %% of a core, arecord on the other loopback pair %.2f %%, ratio %.2f",
                             seconds, share * 100, reference * 100, reference > 0 ? share / reference : 0))
            }
            let status = try microphoneStatus(agent)
            let overrunLines = agent.log.split(separator: "\n").filter { $0.contains("overrun") || $0.contains("Filled a gap") || $0.contains("Microphone open") }
            check(status["overruns"] as? Int == 0 && status["losses"] as? Int == 0,
                  "status \(status); the agent's log on it: \(overrunLines.joined(separator: " | "))")
            let arecordErrors = (try? String(contentsOfFile: arecordLog, encoding: .utf8)) ?? ""
            if !arecordErrors.isEmpty { print("HW microphone reference arecord: \(arecordErrors.trimmingCharacters(in: .whitespacesAndNewlines))") }
            return (failures, arecordErrors.contains("overrun"), shortRecording)
        }
    }

    @Test("A 44.1 kHz mono source reaches the studio as 48 kHz stereo at the right pitch (ALSA's plug layer resamples)")
    func resampledMono() throws {
        try Aloop.with {
            let scratch = try HardwareScratch("mic-441")
            let tone = scratch.path + "/tone441.raw"
            try ToneFile.write(tone, seconds: 60, rate: 44_100, channels: 1, format: .s16, frequencies: [440])
            let player = try Player(scratch, file: tone, device: "hw:Loopback,0,0", format: "S16_LE", rate: 44_100, channels: 1)
            defer { player.stop() }
            let agent = try HardwareAgent(scratch, camera: "test", microphone: Self.capture, waitForCamera: false)
            defer { agent.stop() }
            try #require(agent.waitForLog("Microphone open"), "the microphone did not open:\n\(tail(agent.log))")
            #expect(agent.log.contains("resamples to 48 kHz") && agent.log.contains("plughw:Loopback,1,0"),
                    "the agent should say ALSA's plug layer resamples:\n\(tail(agent.log))")
            let studio = try HardwareStudio(scratch, port: agent.port, seconds: 6, size: "320x180", codec: "jpeg", samples: 1_024)
            let (summary, line) = try studio.summary()
            #expect(summary.smallestPacket == 1_024 && summary.largestPacket == 1_024, "\(line)")
            let samples = try studio.audio()
            let left = channel(samples, 0), right = channel(samples, 1)
            let differing = zip(left, right).filter { $0 != $1 }.count
            #expect(left.count == right.count && differing == 0, "a mono source must reach both channels unchanged: \(differing) frames differ")
            let start = try #require(left.firstIndex { abs($0) > 0.1 }) + 4_800
            try #require(left.count > start + 4 * 48_000, "only \(left.count) frames")
            let (pitch, gaps) = zeroCrossingPitch(Array(left[start..<(start + 4 * 48_000)]), rate: 48_000)
            let status = (try? microphoneStatus(agent)).map { "\($0)" } ?? "unknown"
            print("HW microphone 44.1 kHz mono: pitch \(pitch) Hz at 48 kHz\(gaps > 0 ? "; \(gaps) periods broken by a gap left out (microphone status \(status))" : "")")
            #expect(abs(pitch - 440) < 1, "pitch \(pitch) Hz, want 440 (unresampled 44.1 kHz read as 48 kHz would be 479 Hz); microphone status \(status)")
            #expect(gaps <= 20, "\(gaps) of the periods in 4 s broken by gaps: the sound is not continuous; microphone status \(status)")
        }
    }

    @Test("Stopped 300 ms with SIGSTOP: the overrun is recovered and counted, samples match the timestamps ± one packet, streaming goes on")
    func stoppedAgentOverrun() throws {
        try Aloop.with {
            let scratch = try HardwareScratch("mic-stop")
            let tone = scratch.path + "/tone.raw"
            try ToneFile.write(tone, seconds: 60, rate: 48_000, channels: 2, format: .s32, frequencies: [440, 880])
            let player = try Player(scratch, file: tone, device: "hw:Loopback,0,0", format: "S32_LE", rate: 48_000, channels: 2)
            defer { player.stop() }
            let agent = try HardwareAgent(scratch, camera: "test", microphone: Self.capture, waitForCamera: false)
            defer { agent.stop() }
            try #require(agent.waitForLog("Microphone open"), "the microphone did not open:\n\(tail(agent.log))")
            let n = 1_024
            let studio = try HardwareStudio(scratch, port: agent.port, seconds: 10, size: "320x180", codec: "jpeg", samples: n)
            try #require(agent.waitForLog("Studio connected"), "no studio connected:\n\(tail(agent.log))")
            Thread.sleep(forTimeInterval: 4)
            let stopped = Hardware.monotonicNow()
            kill(agent.pid, SIGSTOP)
            Thread.sleep(forTimeInterval: 0.3)
            kill(agent.pid, SIGCONT)
            let (summary, line) = try studio.summary()
            #expect(summary.smallestPacket == n && summary.largestPacket == n, "\(line)")

            let status = try microphoneStatus(agent)
            let overruns = status["overruns"] as? Int ?? 0
            let filled = (status["filledFrames"] as? NSNumber)?.intValue ?? 0
            print("HW microphone SIGSTOP 300 ms: overruns \(overruns), filled \(filled) frames (\(Double(filled) / 48.0) ms)")
            #expect(overruns >= 1, "the overrun was not counted: \(status)")
            #expect(filled >= 48 * 150 && filled <= 48 * 600, "filled \(filled) frames for a 300 ms stop (less the 100 ms ring), want 150...600 ms")

            let index = try studio.audioIndex()
            let first = try #require(index.packets.first), last = try #require(index.packets.last)
            let received = index.packets.dropLast().reduce(0) { $0 + $1.frames }
            let span = Double(last.firstSampleTime - first.firstSampleTime) / 1e9 * 48_000
            #expect(abs(Double(received) - span) <= Double(n), "received \(received) frames, timestamps span \(span) frames: more than one packet apart")
            #expect(last.firstSampleTime > stopped + 3_000_000_000, "streaming did not go on after the stop (last packet at \(Double(Int64(last.firstSampleTime) - Int64(stopped)) / 1e9) s)")
            // The timestamps never go backwards and never jump beyond a packet's length.
            for (a, b) in zip(index.packets, index.packets.dropFirst()) {
                let step = Double(Int64(b.firstSampleTime) - Int64(a.firstSampleTime)) / 1e9 * 48_000
                #expect(abs(step - Double(a.frames)) < 48, "packet \(b.sequence): timestamp step \(step) frames after a \(a.frames)-frame packet")
            }
        }
    }

    @Test("Unbind and bind of snd-aloop mid-session: silence at the right rate meanwhile, the same device resumes, the session never drops")
    func unbindAndBind() throws {
        try Aloop.with {
            let scratch = try HardwareScratch("mic-unbind")
            let tone = scratch.path + "/tone.raw"
            try ToneFile.write(tone, seconds: 60, rate: 48_000, channels: 2, format: .s32, frequencies: [440, 880])
            var player = try Player(scratch, file: tone, device: "plughw:Loopback,0,0", format: "S32_LE", rate: 48_000, channels: 2)
            let agent = try HardwareAgent(scratch, camera: "test", microphone: Self.capture, waitForCamera: false)
            defer { agent.stop() }
            try #require(agent.waitForLog("Microphone open"), "the microphone did not open:\n\(tail(agent.log))")
            let n = 1_024
            let seconds = 14.0
            let studio = try HardwareStudio(scratch, port: agent.port, seconds: seconds, size: "320x180", codec: "jpeg", samples: n)
            try #require(agent.waitForLog("Studio connected"), "no studio connected:\n\(tail(agent.log))")
            Thread.sleep(forTimeInterval: 3)
            let unbound = Hardware.monotonicNow()
            try Aloop.unbind()
            player.stop()
            Thread.sleep(forTimeInterval: 3)
            let bound = Hardware.monotonicNow()
            try Aloop.bind()
            player = try Player(scratch, file: tone, device: "plughw:Loopback,0,0", format: "S32_LE", rate: 48_000, channels: 2, label: "player2")
            defer { player.stop() }
            let (summary, line) = try studio.summary()
            #expect(summary.smallestPacket == n && summary.largestPacket == n, "\(line)")
            let expectedPackets = seconds * 48_000 / Double(n)
            #expect(abs(Double(summary.audioPackets) - expectedPackets) <= expectedPackets * 0.03,
                    "audio packets \(summary.audioPackets), want \(Int(expectedPackets)) ± 3 %: silence must flow at 48 kHz while the card is gone")
            #expect(agent.log.contains("The microphone went away") && agent.log.contains("Microphone is back"), "agent log:\n\(tail(agent.log))")
            let status = try microphoneStatus(agent)
            #expect((status["losses"] as? Int ?? 0) >= 1 && status["lost"] as? Bool == false, "status \(status)")

            let index = try studio.audioIndex()
            let samples = try studio.audio()
            let left = channel(samples, 0)
            func rms(from: UInt64, to: UInt64) -> Double? {
                let frames = index.packets.flatMap { p -> [Int] in
                    (0..<p.frames).compactMap { i in
                        let t = p.firstSampleTime + UInt64(i) * 1_000_000_000 / 48_000
                        return t >= from && t < to ? p.offset + i : nil
                    }
                }
                guard !frames.isEmpty else { return nil }
                return (frames.reduce(0.0) { $0 + Double(left[$1]) * Double(left[$1]) } / Double(frames.count)).squareRoot()
            }
            let before = rms(from: unbound - 2_000_000_000, to: unbound - 500_000_000)
            let during = rms(from: unbound + 500_000_000, to: bound)
            let after = rms(from: bound + 2_500_000_000, to: bound + 4_000_000_000)
            print("HW microphone unbind/bind: RMS before \(before ?? -1), while unbound \(during ?? -1), after \(after ?? -1)")
            #expect((before ?? 0) > 0.2, "the tone before the unbind: RMS \(before ?? -1)")
            #expect(during == 0, "silence while the card is gone: RMS \(during ?? -1)")
            #expect((after ?? 0) > 0.2, "the tone after the bind (the same device resumed): RMS \(after ?? -1)")
            let first = try #require(index.packets.first), last = try #require(index.packets.last)
            let received = index.packets.dropLast().reduce(0) { $0 + $1.frames }
            let span = Double(last.firstSampleTime - first.firstSampleTime) / 1e9 * 48_000
            #expect(abs(Double(received) - span) <= Double(n), "received \(received) frames over a timestamp span of \(span) frames")
        }
    }

    @Test("Audio timestamps are true: clicks written through ALSA reach the studio within 20 ms of the time they reached the card")
    func clickTimestamps() throws {
        try Aloop.with {
            let scratch = try HardwareScratch("mic-click")
            let clicks = try ClickWriter(device: "hw:Loopback,0,0")
            defer { clicks.stop() }
            let agent = try HardwareAgent(scratch, camera: "test", microphone: Self.capture, waitForCamera: false)
            defer { agent.stop() }
            try #require(agent.waitForLog("Microphone open"), "the microphone did not open:\n\(tail(agent.log))")
            let studio = try HardwareStudio(scratch, port: agent.port, seconds: 8, size: "320x180", codec: "jpeg", samples: 480)
            _ = try studio.summary()
            let cardTimes = clicks.clickTimes
            let index = try studio.audioIndex()
            let left = channel(try studio.audio(), 0)
            var onsets: [Int] = []
            var quietSince = 0
            for (i, x) in left.enumerated() {
                if abs(x) > 0.5 {
                    if i - quietSince >= 2_400 { onsets.append(i) }
                    quietSince = i + 1
                } else if abs(x) > 0.01 {
                    quietSince = i + 1
                }
            }
            try #require(onsets.count >= 4, "found \(onsets.count) clicks in the recording; written \(cardTimes.count)")
            var errors: [Double] = []
            for onset in onsets {
                guard let packet = index.packets.last(where: { $0.offset <= onset }) else { continue }
                let time = packet.firstSampleTime + UInt64(onset - packet.offset) * 1_000_000_000 / 48_000
                guard let nearest = cardTimes.min(by: { abs(Int64($0) - Int64(time)) < abs(Int64($1) - Int64(time)) }) else { continue }
                errors.append(Double(Int64(time) - Int64(nearest)) / 1e6)
            }
            print("HW microphone click timestamps minus card times (ms): \(errors.map { String(format: "%.2f", $0) }.joined(separator: " "))")
            #expect(errors.count == onsets.count && errors.allSatisfy { abs($0) <= 20 }, "errors (ms) \(errors)")
        }
    }
}

// MARK: snd-aloop

/// Loads and unloads snd-aloop, and unplugs/replugs its card.
enum Aloop {
    /// Runs `body` with a fresh snd-aloop (loaded with `options`, its card named `card`) and removes it afterwards
    /// (every player and agent must be stopped by then).
    static func with<T>(options: String = "", card: String = "Loopback", _ body: () throws -> T) throws -> T {
        _ = try? shell("rmmod snd_aloop 2>/dev/null")
        let probe = try shell("modprobe snd-aloop \(options) 2>&1")
        guard probe.status == 0 else { throw HardwareError("modprobe snd-aloop: \(probe)") }
        guard Hardware.wait(seconds: 20, { FileManager.default.fileExists(atPath: "/proc/asound/\(card)") }) else {
            throw HardwareError("/proc/asound/\(card) did not appear")
        }
        defer {
            if !Hardware.wait(seconds: 10, every: 0.25, { (try? shell("grep -q '^snd_aloop ' /proc/modules || exit 0; rmmod snd_aloop 2>&1"))?.status == 0 }) {
                Issue.record("rmmod snd_aloop failed: is a process still holding the card?")
            }
        }
        return try body()
    }

    /// The card goes away (the microphone is unplugged); returns once the driver let go (the agent closed its PCM).
    static func unbind() throws {
        let result = try shell("echo snd_aloop.0 > /sys/bus/platform/drivers/snd_aloop/unbind", timeout: 20)
        guard result.status == 0 else { throw HardwareError("unbind: \(result)") }
    }

    /// The card comes back.
    static func bind() throws {
        let result = try shell("echo snd_aloop.0 > /sys/bus/platform/drivers/snd_aloop/bind", timeout: 20)
        guard result.status == 0 else { throw HardwareError("bind: \(result)") }
        guard Hardware.wait(seconds: 20, { FileManager.default.fileExists(atPath: "/proc/asound/Loopback") }) else {
            throw HardwareError("the card did not come back after bind")
        }
    }
}

/// `aplay` playing a raw file into the loopback, started before the agent (it locks the loopback's parameters).
final class Player {
    let process = Process()
    let log: String

    init(_ scratch: HardwareScratch, file: String, device: String, format: String, rate: Int, channels: Int, label: String = "player",
         card: String = "Loopback") throws {
        log = scratch.path + "/\(label).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/aplay")
        process.arguments = ["-q", "-D", device, "-t", "raw", "-f", format, "-r", String(rate), "-c", String(channels), file]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        let subdevice = device.split(separator: ",").last.flatMap { Int($0) } ?? 0
        let running = Hardware.wait(seconds: 20, every: 0.05) {
            ((try? String(contentsOfFile: "/proc/asound/\(card)/pcm0p/sub\(subdevice)/status", encoding: .utf8)) ?? "").contains("RUNNING")
                || !self.process.isRunning
        }
        guard running, process.isRunning else {
            stop()
            throw HardwareError("aplay \(process.arguments ?? []) did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Writes silence with a click every second into a playback PCM through ALSA, and notes for each click the monotonic
/// time its first sample reaches the card: the time just before the write plus `snd_pcm_delay` (the frames queued
/// ahead of it).
final class ClickWriter: @unchecked Sendable {
    private let times = Mutex<[UInt64]>([])
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(device: String) throws {
        var pcm: OpaquePointer?
        var code = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard code >= 0, let pcm else { throw HardwareError("snd_pcm_open \(device): \(String(cString: snd_strerror(code)))") }
        code = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S32_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48_000, 0, 40_000)
        guard code >= 0 else {
            snd_pcm_close(pcm)
            throw HardwareError("snd_pcm_set_params: \(String(cString: snd_strerror(code)))")
        }
        let handle = PCMHandle(pointer: pcm)
        let thread = Thread { [self] in
            let pcm = handle.pointer
            let frames = 480
            var chunk = [Int32](repeating: 0, count: frames * 2)
            var index = 0
            while !stopFlag.load(ordering: .relaxed) {
                let click = index > 0 && index % 100 == 0  // every second
                for i in 0..<(frames * 2) { chunk[i] = click && i < 96 ? Int32.max / 10 * 8 : 0 }
                if click {
                    var delay: snd_pcm_sframes_t = 0
                    if snd_pcm_delay(pcm, &delay) >= 0 {
                        let now = Hardware.monotonicNow()
                        times.withLock { $0.append(now + UInt64(max(0, delay)) * 1_000_000_000 / 48_000) }
                    }
                }
                let written = chunk.withUnsafeBytes { snd_pcm_writei(pcm, $0.baseAddress, snd_pcm_uframes_t(frames)) }
                if written < 0 { _ = snd_pcm_recover(pcm, Int32(written), 1) }
                index += 1
            }
            snd_pcm_close(pcm)
            done.signal()
        }
        thread.start()
        // Wait until the loopback runs (the parameters are locked) before the agent opens the other end.
        guard Hardware.wait(seconds: 20, every: 0.05, {
            ((try? String(contentsOfFile: "/proc/asound/Loopback/pcm0p/sub0/status", encoding: .utf8)) ?? "").contains("RUNNING")
        }) else {
            stop()
            throw HardwareError("the click writer's PCM did not start")
        }
    }

    /// When each click reached the card (monotonic ns).
    var clickTimes: [UInt64] { times.withLock { $0 } }

    func stop() {
        guard !stopFlag.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }
}

/// A PCM handle handed to the writer thread (only that thread uses it).
private struct PCMHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

// MARK: Signals

/// Raw tone files for aplay.
enum ToneFile {
    enum Format { case s16, s32 }

    /// `seconds` of sines (one frequency per channel, amplitude 0.5), little-endian, interleaved. The sines repeat
    /// after `rate / gcd(rate, frequencies)` frames, so one such stretch is computed and written over and over
    /// (the guest is emulated: a sine per sample for 90 s took 40 s there).
    static func write(_ path: String, seconds: Int, rate: Int, channels: Int, format: Format, frequencies: [Double]) throws {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let period = frequencies.allSatisfy({ $0 == $0.rounded() && $0 > 0 })
            ? rate / frequencies.reduce(rate) { gcd($0, Int($1)) } : seconds * rate
        var block: [UInt8] = []
        block.reserveCapacity(period * channels * (format == .s16 ? 2 : 4))
        for i in 0..<period {
            for c in 0..<channels {
                let x = 0.5 * sin(2 * Double.pi * frequencies[c] * Double(i) / Double(rate))
                switch format {
                case .s16: withUnsafeBytes(of: Int16((x * 32_767).rounded()).littleEndian) { block += $0 }
                case .s32: withUnsafeBytes(of: Int32((x * 2_147_483_647).rounded()).littleEndian) { block += $0 }
                }
            }
        }
        let frames = seconds * rate
        var data = Data(capacity: frames * block.count / period)
        for _ in 0..<(frames / period) { data.append(contentsOf: block) }
        data.append(contentsOf: block.prefix((frames % period) * block.count / period))
        try data.write(to: URL(fileURLWithPath: path))
    }
}

/// Where the packets a studio received do not follow on: a skipped sequence number (the agent dropped packets for
/// it) or a first-sample time more than 1 ms from the previous packet's end (the capture's own timeline jumped).
func packetDiscontinuities(_ index: AudioIndex) -> String {
    var notes: [String] = []
    for (previous, packet) in zip(index.packets, index.packets.dropFirst()) {
        if packet.sequence != previous.sequence &+ 1 {
            notes.append("packets \(previous.sequence + 1)..<\(packet.sequence) never arrived (at sample \(packet.offset))")
        }
        let expected = previous.firstSampleTime + UInt64(previous.frames) * 1_000_000_000 / UInt64(max(1, index.sampleRate))
        let jump = Double(Int64(bitPattern: packet.firstSampleTime &- expected)) / 1e6
        if abs(jump) > 1 { notes.append(String(format: "packet %u starts %+.1f ms from the last one's end", packet.sequence, jump)) }
    }
    return notes.isEmpty ? "every packet follows on (sequence and time)" : notes.prefix(6).joined(separator: "; ") + (notes.count > 6 ? "; \(notes.count - 6) more" : "")
}

/// One channel of interleaved stereo.
func channel(_ samples: [Float], _ index: Int) -> [Float] {
    let count = max(0, (samples.count - index + 1) / 2)
    return [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
        samples.withUnsafeBufferPointer { source in
            for k in 0..<count { buffer[k] = source[2 * k + index] }
        }
        initialized = count
    }
}

/// The least-squares sine of `frequency` at 48 kHz in `x` (any phase): its amplitude and the RMS of what is left,
/// in dB relative to full scale (1.0).
func sineFit(_ x: [Float], frequency: Double, rate: Double = 48_000) -> (amplitude: Double, residualDBFS: Double) {
    // sin and cos of w·n from a table of one period when the sine repeats after a whole number of samples (440 and
    // 880 Hz at 48 kHz: 1200 and 600), else from libm: this runs in a debug build in an emulated guest.
    let w = 2 * Double.pi * frequency / rate
    func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
    let whole = frequency == frequency.rounded() && rate == rate.rounded() && frequency > 0
    let period = whole ? Int(rate) / gcd(Int(rate), Int(frequency)) : x.count
    let sines = (0..<max(1, period)).map { sin(w * Double($0)) }, cosines = (0..<max(1, period)).map { cos(w * Double($0)) }
    var ss = 0.0, cc = 0.0, sc = 0.0, xs = 0.0, xc = 0.0
    x.withUnsafeBufferPointer { x in
        sines.withUnsafeBufferPointer { sines in
            cosines.withUnsafeBufferPointer { cosines in
                var j = 0
                for n in 0..<x.count {
                    let s = sines[j], c = cosines[j], v = Double(x[n])
                    ss += s * s; cc += c * c; sc += s * c; xs += v * s; xc += v * c
                    j += 1
                    if j == period { j = 0 }
                }
            }
        }
    }
    let det = ss * cc - sc * sc
    let a = (xs * cc - xc * sc) / det, b = (xc * ss - xs * sc) / det
    var residual = 0.0
    x.withUnsafeBufferPointer { x in
        sines.withUnsafeBufferPointer { sines in
            cosines.withUnsafeBufferPointer { cosines in
                var j = 0
                for n in 0..<x.count {
                    let e = Double(x[n]) - a * sines[j] - b * cosines[j]
                    residual += e * e
                    j += 1
                    if j == period { j = 0 }
                }
            }
        }
    }
    let rms = (residual / Double(max(1, x.count))).squareRoot()
    return ((a * a + b * b).squareRoot(), 20 * log10(max(rms, 1e-12)))
}

/// The pitch of a sine from its rising zero crossings (interpolated): the mean of the periods within 10 % of their
/// median, so a gap in the sound (a stalled player leaves silence in the loopback) does not bend the figure;
/// `gaps` counts the periods left out.
func zeroCrossingPitch(_ x: [Float], rate: Double) -> (hertz: Double, gaps: Int) {
    var crossings: [Double] = []
    for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
        crossings.append(Double(i - 1) + Double(-x[i - 1]) / Double(x[i] - x[i - 1]))
    }
    guard crossings.count > 2 else { return (0, 0) }
    let periods = zip(crossings, crossings.dropFirst()).map { $1 - $0 }
    let median = periods.sorted()[periods.count / 2]
    let steady = periods.filter { abs($0 - median) <= 0.1 * median }
    guard !steady.isEmpty else { return (0, periods.count) }
    return (rate * Double(steady.count) / steady.reduce(0, +), periods.count - steady.count)
}

/// CPU seconds of the agent's `camo-microphone` thread.
func microphoneThreadCPU(pid: Int32) -> Double? {
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
    for task in tasks {
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard comm == "camo-microphone", let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
    return nil
}

/// The running agent's `microphoneDetail` from `camo-agent status --json`.
func microphoneStatus(_ agent: HardwareAgent) throws -> [String: Any] {
    let result = try agentCommand(["status", "--json", "--state-dir", agent.stateDir])
    guard result.status == 0 else { throw HardwareError("status: \(result)") }
    let object = try parseJSON(result.stdout) as? [String: Any] ?? [:]
    guard let detail = object["microphoneDetail"] as? [String: Any] else { throw HardwareError("no microphoneDetail in \(result.stdout)") }
    return detail
}
