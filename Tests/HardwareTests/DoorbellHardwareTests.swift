import CamoAgentKit
import CamoDoorbell
import CamoLive
import CamoTestSupport
import Foundation
import Logging
import Synchronization
import Testing

// The doorbell (the library, in this process) against real kernel lines in the VM: gpio-sim's "doorbell" line is
// pressed through its simulated pull, its "chime" line is what the wired chime drives (read back from gpio-sim's
// sysfs), and the chime plays on snd-aloop's hw:Loopback,0,0 while arecord captures hw:Loopback,1,0. An input key
// (evdev) is a uinput device made by a small Python program.

@Suite(
    "Doorbell hardware: button, wired chime and speaker on gpio-sim, uinput and snd-aloop (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test --filter DoorbellHardwareTests"))
struct DoorbellHardwareTests {
    /// The times onPress was called with.
    final class Presses: Sendable {
        private let times = Mutex<[UInt64]>([])
        func add(_ time: UInt64) { times.withLock { $0.append(time) } }
        var all: [UInt64] { times.withLock { $0 } }
    }

    static func ms(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }

    /// A progress line on stderr (unbuffered), so a run that stalls shows where.
    static func step(_ text: String) {
        FileHandle.standardError.write(Data(String(format: "HW doorbell [%.3f s] %@\n", Double(Hardware.monotonicNow()) / 1e9, text).utf8))
    }
    static func ms(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1e6 }

    @Test("A 0.3 s press: exactly one press event, the wired chime held 1000 ± 50 ms, Westminster heard on the speaker")
    func pressRingsAndChimes() throws {
        try GPIOSim.requireLoaded()
        let sim = try GPIOSim()
        defer { sim.remove() }
        try Aloop.with {
            let scratch = try HardwareScratch("doorbell")
            // arecord opens the loopback first and locks it to the chime's own format (F32 stereo, 48 kHz).
            let capture = scratch.path + "/chime.raw"
            let arecord = Process()
            arecord.executableURL = URL(fileURLWithPath: "/usr/bin/arecord")
            arecord.arguments = ["-q", "-D", "hw:Loopback,1,0", "-t", "raw", "-f", "FLOAT_LE", "-r", "48000", "-c", "2", capture]
            arecord.standardInput = FileHandle.nullDevice
            try arecord.run()
            defer {
                if arecord.isRunning { kill(arecord.processIdentifier, SIGKILL) }
                arecord.waitUntilExit()
            }
            let recording = Hardware.wait(seconds: 20) {
                ((try? String(contentsOfFile: "/proc/asound/Loopback/pcm1c/sub0/status", encoding: .utf8)) ?? "").contains("RUNNING")
            }
            try #require(recording, "arecord did not start capturing hw:Loopback,1,0")
            Self.step("arecord captures hw:Loopback,1,0")

            let recorder = LogRecorder()
            let presses = Presses()
            let doorbell = try Doorbell(
                button: "gpio:doorbell", externalChime: "gpio:chime", speaker: .alsa(device: "hw:Loopback,0,0"),
                logger: recorder.logger("doorbell")) { presses.add($0) }
            doorbell.configure(chime: "westminster", volume: 100, muted: false, externalEnabled: true, externalDurationMs: 1_000)
            try doorbell.start()
            defer { doorbell.stop() }
            let watcher = LineWatcher(path: sim.valuePath(line: 1))
            defer { watcher.stop() }
            Self.step("the doorbell watches \(sim.chip); pressing")
            Thread.sleep(forTimeInterval: 0.5)

            let before = Hardware.monotonicNow()
            try sim.press()
            let after = Hardware.monotonicNow()
            Thread.sleep(forTimeInterval: 0.3)
            try sim.release()

            let rang = Hardware.wait(seconds: 15, every: 0.02) { watcher.history.filter { $0.value == 0 }.count >= 2 }
            Self.step("the wired chime's line went \(watcher.history.map(\.value)); presses \(presses.all.count); waiting for the chime")
            doorbell.waitForChimes()
            Self.step("chime player: \(doorbell.chimeStatistics)")
            Thread.sleep(forTimeInterval: 0.5)  // the loopback's last periods reach arecord
            // arecord writes each period as it reads it, so the raw file is whole up to the kill.
            kill(arecord.processIdentifier, SIGTERM)
            if !Hardware.wait(seconds: 5, { !arecord.isRunning }) { kill(arecord.processIdentifier, SIGKILL) }
            arecord.waitUntilExit()
            watcher.stop()
            Self.step("arecord stopped")

            // One press, stamped by the kernel between the two sides of our write to the pull.
            let times = presses.all
            #expect(times.count == 1, "presses \(times); log: \(recorder.messages)")
            if let time = times.first {
                print("HW doorbell: press stamped \(String(format: "%.2f", Self.ms(Int64(time) - Int64(before)))) ms after the pull-down began (the write took \(String(format: "%.2f", Self.ms(after - before))) ms)")
                #expect(time >= before && time <= after + 5_000_000, "the press's time \(time) is not the pull-down's (\(before)...\(after))")
            }

            // The wired chime: low, then high for 1000 ± 50 ms, then low again.
            let history = watcher.history
            let levels = history.map(\.value)
            #expect(rang && levels == [0, 1, 0], "chime line levels \(levels) (\(watcher.reads) reads); gpioinfo: \(sim.info())")
            if levels == [0, 1, 0] {
                let held = Self.ms(history[2].time - history[1].time)
                let delay = Self.ms(Int64(history[1].time) - Int64(times.first ?? before))
                print("HW doorbell: wired chime held \(String(format: "%.1f", held)) ms (want 1000 ± 50), active \(String(format: "%.1f", delay)) ms after the press")
                #expect(abs(held - 1_000) <= 50, "the wired chime was held \(held) ms, want 1000 ± 50")
            }

            // The speaker: Westminster's four notes, in order, at their frequencies.
            let statistics = doorbell.chimeStatistics
            #expect(statistics.played == 1 && statistics.failed == 0, "chime player \(statistics); log: \(recorder.messages)")
            let data = try Data(contentsOf: URL(fileURLWithPath: capture))
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let left = ToneMeasure.channel(samples, 0, of: 2)
            let onset = try #require(left.firstIndex { abs($0) > 0.05 }, "no chime in \(left.count) captured frames (\(Double(left.count) / 48_000) s)")
            print("HW doorbell: chime onset \(String(format: "%.2f", Double(onset) / 48_000)) s into the capture of \(String(format: "%.2f", Double(left.count) / 48_000)) s")
            let sound = ChimeSound.westminster
            try #require(left.count >= onset + Int(sound.duration * 48_000) - 4_800, "the capture ends before the chime does")
            var heard: [String] = []
            var shifts: [String] = []
            for note in sound.notes {
                // Each note where it should be, or up to 0.5 s later or earlier: under emulation a stalled guest can
                // delay the player or drop captured periods, which moves the notes after the stall. The window
                // where this note's frequency stands out most is measured (and the shift printed).
                let length = Int(0.67 * note.length * 48_000)
                let expected = onset + Int((note.start + 0.03) * 48_000)
                var best = (score: -1.0, from: expected)
                for shift in stride(from: -24_000, through: 24_000, by: 480) {
                    let from = expected + shift
                    guard from >= 0, from + length <= left.count else { continue }
                    let window = left[from..<(from + length)]
                    let own = ToneMeasure.goertzel(window, frequency: note.frequency, rate: 48_000)
                    let others = Set(sound.notes.map(\.frequency)).subtracting([note.frequency])
                        .map { ToneMeasure.goertzel(window, frequency: $0, rate: 48_000) }.reduce(0, +)
                    let score = own / (others + 1e-9)
                    if score > best.score { best = (score, from) }
                }
                shifts.append(String(format: "%+.0f ms", Double(best.from - expected) / 48))
                let from = best.from, to = min(left.count, best.from + length)
                let window = left[from..<to]
                let pitch = ToneMeasure.zeroCrossingFrequency(window, rate: 48_000) ?? 0
                heard.append(String(format: "%.1f", pitch))
                #expect(abs(pitch - note.frequency) / note.frequency < 0.01, "note \(note.frequency) Hz heard at \(pitch) Hz")
                let own = ToneMeasure.goertzel(window, frequency: note.frequency, rate: 48_000)
                for other in Set(sound.notes.map(\.frequency)) where other != note.frequency {
                    #expect(own > 30 * ToneMeasure.goertzel(window, frequency: other, rate: 48_000), "note \(note.frequency) Hz does not stand out over \(other) Hz")
                }
            }
            print("HW doorbell: Westminster heard at \(heard.joined(separator: ", ")) Hz (want 659.25, 523.25, 587.33, 392.00), each found \(shifts.joined(separator: ", ")) from where it was due")
        }
    }

    @Test("A second press while the wired chime rings restarts its hold: two press events, one hold lasting until 800 ± 50 ms after the second")
    func ringDuringRing() throws {
        try GPIOSim.requireLoaded()
        let sim = try GPIOSim()
        defer { sim.remove() }
        let presses = Presses()
        let doorbell = try Doorbell(button: "gpio:doorbell", externalChime: "gpio:chime", speaker: .none, logger: Logger(label: "doorbell")) {
            presses.add($0)
        }
        doorbell.configure(chime: "dingdong", volume: 50, muted: false, externalEnabled: true, externalDurationMs: 800)
        try doorbell.start()
        defer { doorbell.stop() }
        let watcher = LineWatcher(path: sim.valuePath(line: 1))
        defer { watcher.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        for _ in 0..<2 {
            try sim.press()
            Thread.sleep(forTimeInterval: 0.15)
            try sim.release()
            Thread.sleep(forTimeInterval: 0.35)
        }
        _ = Hardware.wait(seconds: 10, every: 0.02) { watcher.history.count >= 3 }
        Thread.sleep(forTimeInterval: 0.3)
        watcher.stop()
        let times = presses.all
        #expect(times.count == 2, "presses \(times)")
        let history = watcher.history
        #expect(history.map(\.value) == [0, 1, 0], "one hold: levels \(history.map(\.value))")
        if times.count == 2, history.count == 3 {
            let after = Self.ms(Int64(history[2].time) - Int64(times[1]))
            print("HW doorbell: ring during a ring: released \(String(format: "%.1f", after)) ms after the second press (want 800 ± 50), held \(String(format: "%.1f", Self.ms(history[2].time - history[1].time))) ms in all")
            #expect(abs(after - 800) <= 50, "released \(after) ms after the second press")
        }
        #expect(doorbell.externalRings == 2)
    }

    @Test("A press on a running camo-agent: `camo-agent events` shows the doorbell press, the setting's wired chime is held")
    func pressOnTheRunningAgent() throws {
        try GPIOSim.requireLoaded()
        let sim = try GPIOSim()
        defer { sim.remove() }
        let scratch = try HardwareScratch("doorbell-agent")
        let agent = try HardwareAgent(
            scratch, camera: "test", arguments: ["--doorbell-button", "gpio:doorbell", "--external-chime", "gpio:chime", "--speaker", "none"],
            waitForCamera: false)
        defer { agent.stop() }
        #expect(agent.waitForLog("Watching the doorbell button", seconds: 30), "the agent did not watch its doorbell button: \(tail(agent.log))")
        // The wired chime's duration from the settings model, as a studio would set it.
        let set = try agentCommand(["settings", "--state-dir", agent.stateDir, "externalChimeDuration", "600"])
        #expect(set.status == 0, "settings externalChimeDuration 600: \(set)")
        let before = try agentCommand(["events", "--state-dir", agent.stateDir, "--json"])
        #expect(before.status == 0 && !before.stdout.contains("doorbellPress"), "a doorbell event before any press: \(before)")

        let watcher = LineWatcher(path: sim.valuePath(line: 1))
        defer { watcher.stop() }
        // The watcher's first reading (the idle level) before the press, or under emulation it may start late and
        // miss it.
        #expect(Hardware.wait(seconds: 10, every: 0.01) { watcher.reads > 0 }, "the line watcher never read")
        Thread.sleep(forTimeInterval: 0.3)
        try sim.press()
        Thread.sleep(forTimeInterval: 0.2)
        try sim.release()
        var shown = ""
        let seen = Hardware.wait(seconds: 15, every: 0.2) {
            shown = (try? agentCommand(["events", "--state-dir", agent.stateDir, "--json"]))?.stdout ?? ""
            return shown.contains("doorbellPress")
        }
        #expect(seen, "camo-agent events never showed a doorbellPress: \(shown); log: \(tail(agent.log))")
        let notices = shown.split(separator: "\n").compactMap { try? parseJSON(String($0)) as? [String: Any] }
        let presses = notices.filter { (($0["event"] as? [String: Any])?["trigger"] as? String) == "doorbellPress" }
        #expect(presses.first?["kind"] as? String == "started", "the first doorbell notice: \(presses.first ?? [:])")
        let pressIds = Set(presses.compactMap { ($0["event"] as? [String: Any])?["id"] as? Int })
        #expect(pressIds.count == 1, "one press, one event: \(presses)")
        print("HW doorbell: the running agent showed \(presses.count) notice(s) for the press: \(shown.split(separator: "\n").filter { $0.contains("doorbellPress") }.first ?? "")")

        _ = Hardware.wait(seconds: 10, every: 0.02) { watcher.history.count >= 3 }
        watcher.stop()
        let history = watcher.history
        #expect(history.map(\.value) == [0, 1, 0], "chime line levels \(history.map(\.value)); log: \(tail(agent.log))")
        if history.count == 3 {
            let held = Self.ms(history[2].time - history[1].time)
            print("HW doorbell: through the agent the wired chime was held \(String(format: "%.1f", held)) ms (setting 600)")
            #expect(abs(held - 600) <= 50, "held \(held) ms, want 600 ± 50")
        }
        let stopped = agent.stop()
        #expect(stopped?.status == 0, "the agent's exit: \(stopped.map { tail($0.stderr) } ?? "")")
    }

    @Test("Missing and busy lines are clear errors at start; a chip that goes away is logged, and presses count again when it is back")
    func missingBusyAndUnplugged() throws {
        try GPIOSim.requireLoaded()
        let sim = try GPIOSim()
        defer { sim.remove() }
        let missing = try Doorbell(button: "gpio:no-such-button", externalChime: nil, speaker: .none, logger: Logger(label: "doorbell")) { _ in }
        #expect(throws: DoorbellError.lineNotFound("no-such-button")) { try missing.start() }
        let offset = try Doorbell(button: "gpio:\(sim.chip):7", externalChime: nil, speaker: .none, logger: Logger(label: "doorbell")) { _ in }
        #expect(throws: DoorbellError.noSuchOffset(sim.chip, offset: 7, lines: 2)) { try offset.start() }

        let recorder = LogRecorder()
        let presses = Presses()
        let doorbell = try Doorbell(button: "gpio:camo-doorbell:0", externalChime: "gpio:chime", speaker: .none, logger: recorder.logger("doorbell")) {
            presses.add($0)
        }
        try doorbell.start()
        defer { doorbell.stop() }
        // The same lines again: both are held by the first doorbell.
        let second = try Doorbell(button: "gpio:doorbell", externalChime: nil, speaker: .none, logger: Logger(label: "doorbell")) { _ in }
        do {
            try second.start()
            Issue.record("a second doorbell got the held line")
        } catch {
            #expect("\(error)".contains("in use by \"camo-agent doorbell\""), "\(error)")
        }
        let chime = try Doorbell(button: "gpio:no-such-button", externalChime: "gpio:chime", speaker: .none, logger: Logger(label: "doorbell")) { _ in }
        do {
            try chime.start()
            Issue.record("a second doorbell got the held chime line")
        } catch {
            #expect("\(error)".contains("in use by \"camo-agent chime\""), "\(error)")
        }

        // Unplugged: the chip goes away under the watcher.
        try sim.setLive(false)
        #expect(Hardware.wait(seconds: 10) { recorder.messages(at: .error).contains { $0.contains("The doorbell button went away") } },
                "no error logged: \(recorder.messages)")
        try sim.setLive(true)
        let back = Hardware.wait(seconds: 15) { recorder.messages(at: .notice).contains { $0.contains("The doorbell button is back") } }
        #expect(back, "the button did not come back: \(recorder.messages)")
        Thread.sleep(forTimeInterval: 0.3)
        try sim.press()
        Thread.sleep(forTimeInterval: 0.2)
        try sim.release()
        #expect(Hardware.wait(seconds: 10) { presses.all.count == 1 }, "a press after the chip came back: \(presses.all); \(recorder.messages)")
        print("HW doorbell: unplug logged: \(recorder.messages(at: .error).first ?? "none")")
    }

    @Test("An input key (uinput, KEY_PROG1): a 0.3 s press is one press event, stamped on the monotonic clock")
    func evdevKey() throws {
        _ = try? shell("modprobe uinput 2>&1; modprobe evdev 2>&1")
        guard FileManager.default.fileExists(atPath: "/dev/uinput") else {
            print("HW doorbell: SKIPPED: no /dev/uinput in this kernel")
            try Test.cancel("no /dev/uinput")
        }
        let scratch = try HardwareScratch("doorbell-evdev")
        let go = scratch.path + "/go", ready = scratch.path + "/ready"
        // A uinput keyboard with one key; it presses it for 0.3 s once `go` exists, then waits to be killed.
        let python = """
            import fcntl, os, struct, sys, time
            go, ready = sys.argv[1], sys.argv[2]
            fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
            fcntl.ioctl(fd, 0x40045564, 1); fcntl.ioctl(fd, 0x40045565, 148)
            fcntl.ioctl(fd, 0x405c5503, struct.pack("<HHHH80sI", 0x06, 0x1209, 0xd00b, 1, b"Camo doorbell test", 0))
            fcntl.ioctl(fd, 0x5501)
            def ev(t, c, v): os.write(fd, struct.pack("<qqHHi", 0, 0, t, c, v))
            open(ready, "w").write("ok")
            while not os.path.exists(go): time.sleep(0.01)
            ev(1, 148, 1); ev(0, 0, 0); time.sleep(0.3); ev(1, 148, 0); ev(0, 0, 0)
            time.sleep(60)
            """
        let device = Process()
        device.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        device.arguments = ["-c", python, go, ready]
        device.standardInput = FileHandle.nullDevice
        try device.run()
        defer {
            if device.isRunning { kill(device.processIdentifier, SIGKILL) }
            device.waitUntilExit()
        }
        var node: String?
        _ = Hardware.wait(seconds: 30) {
            guard FileManager.default.fileExists(atPath: ready) else { return false }
            let inputs = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/input")) ?? []
            node = inputs.filter { $0.hasPrefix("event") }.first {
                ((try? String(contentsOfFile: "/sys/class/input/\($0)/device/name", encoding: .utf8)) ?? "").hasPrefix("Camo doorbell test")
            }.map { "/dev/input/" + $0 }
            return node.map { FileManager.default.fileExists(atPath: $0) } ?? false
        }
        let path = try #require(node, "the uinput device did not appear")
        // A key it does not have is refused at start.
        let wrongKey = try Doorbell(button: "evdev:\(path):30", externalChime: nil, speaker: .none, logger: Logger(label: "doorbell")) { _ in }
        do {
            try wrongKey.start()
            Issue.record("a key the device lacks was accepted")
        } catch {
            #expect("\(error)".contains("has no key with code 30"), "\(error)")
        }

        let presses = Presses()
        let doorbell = try Doorbell(button: "evdev:\(path):148", externalChime: nil, speaker: .none, logger: Logger(label: "doorbell")) { presses.add($0) }
        try doorbell.start()
        defer { doorbell.stop() }
        Thread.sleep(forTimeInterval: 0.3)
        let before = Hardware.monotonicNow()
        try Data().write(to: URL(fileURLWithPath: go))
        #expect(Hardware.wait(seconds: 10) { presses.all.count == 1 }, "no press from the input key")
        Thread.sleep(forTimeInterval: 0.6)
        let times = presses.all
        #expect(times.count == 1, "presses \(times)")
        if let time = times.first {
            let delay = Self.ms(Int64(time) - Int64(before))
            print("HW doorbell: input key press stamped \(String(format: "%.1f", delay)) ms after the go")
            #expect(time >= before && delay < 5_000, "the key's time \(time) is not on the monotonic clock near \(before)")
        }
    }
}
