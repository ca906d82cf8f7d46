import CamoMedia
import Foundation
import Testing

// The alarm detectors against sound we did not make: sox makes a smoke alarm's T3 pattern and a CO alarm's T4 at
// 3.1 kHz and a melody of sine notes, espeak-ng speaks, all at one RMS level; aplay plays each in turn into the
// snd-aloop card in the VM, and the agent hears it on the card's capture side as its microphone. One agent run hears
// every signal, one after another with silence between, and `camo-agent events --json` afterwards says which
// events came, and when (on the guest's monotonic clock).

@Suite(
    "Alarm hardware: smoke and CO alarms through snd-aloop (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
struct AlarmHardwareTests {
    /// Every signal's level: sines of amplitude 0.2, RMS 0.1414 (-17 dBFS); the speech is scaled to the same RMS.
    static let amplitude = 0.2
    /// Silence at the head of each file, so that whatever the loopback does when a player starts is over before the
    /// first tone.
    static let lead = 0.5
    /// Silence between two signals (no player running).
    static let pause = 2.0

    /// One signal played: its file and when, on CLOCK_MONOTONIC.
    struct Played {
        var name: String
        var file: String
        /// Just before aplay was started: the first sample reached the card later than this, the first tone at least
        /// ``lead`` later still.
        var launched: UInt64
        /// When aplay had finished.
        var finished: UInt64
        /// Whether aplay said it underran (the guest stalled and the card got silence meanwhile).
        var underran: Bool
        /// The earliest the signal's first sound can have reached the card.
        var firstSound: UInt64 { launched + UInt64(AlarmHardwareTests.lead * 1e9) }
    }

    /// One event as `camo-agent events --json` last showed it.
    struct HeardEvent {
        var id: Int
        var trigger: String
        var start: UInt64
        var updates: [UInt64]
        /// The wall clock of the notice that started it, Unix seconds.
        var noticed: Double?
    }

    @Test("T3 at 3.1 kHz: a smoke-alarm event within two cycles (8 s) of the first tone; T4: a CO-alarm event within 11.4 s; espeak-ng speech and a sine melody at the same level: neither alarm")
    func alarmsAndLookalikes() throws {
        try Aloop.with {
            let scratch = try HardwareScratch("alarm")
            // The signals are made while the agent starts (both take seconds under emulation).
            let directory = scratch.path
            let making = Background { try Self.makeSignals(in: directory) }
            // A small grey still for the camera: the guest's CPU goes to the microphone and the detectors.
            let still = scratch.path + "/grey.png"
            try Data(PNGImage.encodeGray(width: 160, height: 90, pixels: [UInt8](repeating: 128, count: 160 * 90))).write(to: URL(fileURLWithPath: still))
            // The agent opens the capture side first (it locks the loopback to what the agent picks); aplay then goes
            // through plughw, which converts to that.
            let agent = try HardwareAgent(scratch, camera: "image:" + still, microphone: "hw:Loopback,1,0", waitForCamera: false)
            defer { agent.stop() }
            try #require(agent.waitForLog("Microphone open"), "the microphone did not open:\n\(tail(agent.log))")
            // Only the alarms. Each event lasts 1 s after the cycle that started it, with no quiet time after it, so
            // every cycle heard, true or false, is an event's start or update that shows below (with the defaults,
            // activity in the 5 s blind time after an event shows nowhere).
            for (name, value) in [("enabledEventTriggers", "smokeAlarm,coAlarm"), ("motionTimeControl.initialDuration", "1"),
                                  ("motionTimeControl.blindDuration", "0")] {
                let result = try agentCommand(["settings", "--state-dir", agent.stateDir, name, value])
                try #require(result.status == 0, "settings \(name) \(value): \(result)")
            }

            let signals = try making.result()
            print(String(format: "HW alarm: signals made and the agent ready %.1f s after the guest booted", Double(Hardware.monotonicNow()) / 1e9))
            var played: [Played] = []
            func play(_ name: String, _ file: String, _ seconds: Double) throws {
                let launched = Hardware.monotonicNow()
                // Not -q: aplay says when it ran dry (an underrun: the guest stalled, and the card played silence).
                let result = try runCommand("/usr/bin/aplay", ["-D", "plughw:Loopback,0,0", file], timeout: seconds * 4 + 30)
                try #require(result.status == 0 && !result.timedOut, "aplay \(name): \(result)")
                played.append(Played(name: name, file: file, launched: launched, finished: Hardware.monotonicNow(), underran: result.stderr.contains("underrun")))
                Thread.sleep(forTimeInterval: Self.pause)
            }
            func heardEvents() throws -> [HeardEvent] {
                // Under emulation the agent may judge the last chunks a while after they were played.
                Thread.sleep(forTimeInterval: 2)
                let listing = try agentCommand(["events", "--state-dir", agent.stateDir, "--json"])
                try #require(listing.status == 0, "events: \(listing)")
                // The alarms' events (nothing else runs once the triggers are set, but the camera ran before).
                return Self.events(listing.stdout).filter { ["smokeAlarm", "coAlarm"].contains($0.trigger) }
            }
            for (name, file, seconds) in signals { try play(name, file, seconds) }
            var events = try heardEvents()

            // Each signal's window runs from its launch to the next signal's launch (the last: to now): an activity
            // time (an event's start or update, the time of the tone that completed a cycle, from the agent's
            // microphone timestamps) belongs to the signal playing then.
            var now = Hardware.monotonicNow()
            func window(of time: UInt64) -> Int? {
                played.indices.first { index in
                    time >= played[index].launched && time < (index + 1 < played.count ? played[index + 1].launched : now)
                }
            }
            func name(of time: UInt64) -> String { window(of: time).map { played[$0].name } ?? "before any signal" }
            let alarms = [(signal: "T3", trigger: "smokeAlarm", bound: 8.0), (signal: "T4", trigger: "coAlarm", bound: 11.4)]
            func missed() -> [(signal: String, trigger: String, bound: Double)] {
                alarms.filter { alarm in !events.contains { $0.trigger == alarm.trigger && name(of: $0.start) == alarm.signal } }
            }
            // Under TCG the whole guest sometimes stops for longer than aplay's buffer or the microphone's ring: the
            // alarm's rhythm reaches the agent broken, and such a run says nothing about the detector. When an alarm was
            // missed and aplay or the microphone says so, that alarm is played once more (and this is printed); the
            // second time must be heard. A miss with no such sign fails at once.
            if !missed().isEmpty {
                let microphone = try microphoneStatus(agent)
                let stalls = played.filter(\.underran).map(\.name)
                let overruns = (microphone["overruns"] as? Int ?? 0) + (microphone["losses"] as? Int ?? 0)
                let filled = microphone["filledFrames"] as? Int ?? 0
                print("HW alarm: missed \(missed().map(\.signal)); aplay underran during \(stalls), microphone overruns and losses \(overruns), frames filled \(filled)")
                if !stalls.isEmpty || overruns > 0 || filled > 0 {
                    for alarm in missed() {
                        guard let signal = signals.first(where: { $0.0 == alarm.signal }) else { continue }
                        print("HW alarm: the guest stalled, so \(alarm.signal) is played once more")
                        try play(signal.0, signal.1, signal.2)
                    }
                    events = try heardEvents()
                    now = Hardware.monotonicNow()
                }
            }

            // The wall clock's offset from the monotonic one, to place the notices' wall-clock times (when the agent
            // judged the cycle) on the monotonic clock, for the printout only.
            let wallMinusMonotonic = Date().timeIntervalSince1970 - Double(Hardware.monotonicNow()) / 1e9
            func describe(_ time: UInt64) -> String {
                guard let index = window(of: time) else { return "before any signal" }
                return played[index].name + String(format: " +%.2f s", Double(Int64(time) - Int64(played[index].firstSound)) / 1e9)
            }
            var report: [String] = []
            for event in events {
                let times = ([event.start] + event.updates).map(describe).joined(separator: ", ")
                let judged = event.noticed.map { String(format: " (judged %.2f s after the tone began)", $0 - wallMinusMonotonic - Double(event.start) / 1e9) } ?? ""
                report.append("\(event.trigger) event \(event.id) at \(times)\(judged)")
            }
            for signal in played {
                print(String(format: "HW alarm: %@ played from %.2f s to %.2f s (guest monotonic)%@", signal.name, Double(signal.launched) / 1e9,
                             Double(signal.finished) / 1e9, signal.underran ? ", aplay underran" : ""))
            }
            print("HW alarm: events: \(report.isEmpty ? "none" : report.joined(separator: "; "))")

            for alarm in alarms {
                // The first event in a window of this alarm, and its latency from that window's first possible sound.
                let first = events.filter { $0.trigger == alarm.trigger && name(of: $0.start) == alarm.signal }.min { $0.start < $1.start }
                guard let first, let index = window(of: first.start) else {
                    Issue.record("no \(alarm.trigger) event while \(alarm.signal) played: \(report)\n\(tail(agent.log))")
                    continue
                }
                // The event's start is when the tone that completed the first cycle began (the agent's microphone
                // timestamps, CLOCK_MONOTONIC); `firstSound` is at or before the first tone, so this over-states the
                // wait, never under-states it.
                let latency = Double(Int64(first.start) - Int64(played[index].firstSound)) / 1e9
                print(String(format: "HW alarm: %@ heard %.2f s after %@'s first tone could have sounded (bound %.1f s = two cycles)", alarm.trigger, latency, alarm.signal, alarm.bound))
                #expect(latency > 0 && latency <= alarm.bound, "\(alarm.trigger) \(latency) s after the first tone of \(alarm.signal)")
            }
            // No alarm outside its own pattern: every activity time of each trigger lies in that pattern's window.
            let allowed = ["smokeAlarm": "T3", "coAlarm": "T4"]
            for event in events {
                for time in [event.start] + event.updates {
                    #expect(name(of: time) == allowed[event.trigger], "\(event.trigger) event \(event.id) fired during \(name(of: time)): \(report)")
                }
            }
        }
    }

    /// Makes the four signals with sox and espeak-ng in `directory`: 48 kHz stereo 16-bit WAV, each with ``lead`` s
    /// of silence first. Returns (name, file, seconds) in playing order: T4, T3, speech, melody.
    static func makeSignals(in directory: String) throws -> [(String, String, Double)] {
        let level = String(Self.amplitude)
        // A melody: sine notes of lengths no alarm has (none near 0.1 or 0.5 s), back to back, one of them at the
        // alarms' 3.1 kHz, played twice.
        let notes: [(Double, Double)] = [
            (523, 0.25), (659, 0.35), (784, 0.2), (1047, 0.7), (880, 0.3), (3100, 0.15), (698, 0.6), (1175, 0.4), (988, 0.8),
            (3100, 0.25), (784, 0.3), (523, 0.65),
        ]
        let script = """
            set -euo pipefail
            cd '\(directory)'
            f="-r 48000 -c 2 -b 16"
            silence() { sox -n $f "$1" trim 0 "$2"; }
            tone() { sox -n $f "$1" synth "$2" sine "$3" vol \(level); }
            silence lead.wav \(lead)
            # T3: three 0.5 s tones 0.5 s apart, then 1.5 s off; two cycles.
            tone t3tone.wav 0.5 3100; silence t3gap.wav 0.5; silence t3off.wav 1.5
            t3cycle="t3tone.wav t3gap.wav t3tone.wav t3gap.wav t3tone.wav t3off.wav"
            sox lead.wav $t3cycle $t3cycle t3.wav
            # T4: four 0.1 s tones 0.1 s apart, then 5 s off; two cycles.
            tone t4tone.wav 0.1 3100; silence t4gap.wav 0.1; silence t4off.wav 5
            t4cycle="t4tone.wav t4gap.wav t4tone.wav t4gap.wav t4tone.wav t4gap.wav t4tone.wav t4off.wav"
            sox lead.wav $t4cycle $t4cycle t4.wav
            # Speech: two voices, scaled to the tones' RMS (amplitude / sqrt 2).
            espeak-ng -w speech1.wav -v en-us -s 160 "The smoke detector in the hall was tested on Tuesday at half past seven. Please call three one hundred if you hear it beeping."
            espeak-ng -w speech2.wav -v en+f3 -p 70 -s 150 "Twenty five people were in the kitchen, and nobody noticed that the oven was still on."
            sox speech1.wav speech2.wav speechraw.wav
            rms=$(sox speechraw.wav -n stat 2>&1 | awk '/^RMS +amplitude/ {print $3}')
            gain=$(awk -v r="$rms" 'BEGIN { printf "%.4f", \(level) / sqrt(2) / r }')
            sox speechraw.wav $f speechlevel.wav vol "$gain"
            sox lead.wav speechlevel.wav speech.wav
            # The melody.
            i=0; list=""
            for note in \(notes.map { "\(Int($0.0)):\($0.1)" }.joined(separator: " ")); do
                tone "note$i.wav" "${note#*:}" "${note%%:*}"; list="$list note$i.wav"; i=$((i + 1))
            done
            sox lead.wav $list $list melody.wav
            # T4 first: the detector wants no tone in the 4.5 s before a T4 cycle (a beeper without the pause is not
            # an alarm), and after T3's last tone and the pause between the files, T4's first would come 4.2 s later.
            for s in t4 t3 speech melody; do
                printf '%s %s %s\\n' "$s" "$(soxi -D $s.wav)" "$(sox $s.wav -n stat 2>&1 | awk '/^RMS +amplitude/ {print $3}')"
            done
            """
        let result = try shell(script, timeout: 180)
        guard result.status == 0 else { throw HardwareError("making the signals: \(result)") }
        var signals: [(String, String, Double)] = []
        for line in result.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let seconds = Double(fields[1]) else { continue }
            print("HW alarm: \(fields[0]).wav \(fields[1]) s, RMS over the file \(fields[2]) (tones sounding: \(Self.amplitude / 2.0.squareRoot()))")
            signals.append((fields[0] == "t3" ? "T3" : fields[0] == "t4" ? "T4" : String(fields[0]), directory + "/\(fields[0]).wav", seconds))
        }
        guard signals.count == 4 else { throw HardwareError("the signals: \(result)") }
        return signals
    }

    /// The events in `camo-agent events --json` output, each as its last notice shows it.
    static func events(_ text: String) -> [HeardEvent] {
        var byID: [Int: HeardEvent] = [:]
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let event = object["event"] as? [String: Any], let id = event["id"] as? Int, let trigger = event["trigger"] as? String,
                let start = (event["start"] as? NSNumber)?.uint64Value
            else { continue }
            let updates = (event["updates"] as? [NSNumber] ?? []).map(\.uint64Value)
            let noticed = object["kind"] as? String == "started" ? object["time"] as? Double : byID[id]?.noticed
            byID[id] = HeardEvent(id: id, trigger: trigger, start: start, updates: updates, noticed: noticed)
        }
        return byID.values.sorted { $0.id < $1.id }
    }
}

/// Work on another thread whose result is taken later.
private final class Background<Value: Sendable>: @unchecked Sendable {
    private var outcome: Result<Value, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () throws -> Value) {
        Thread { [self] in
            outcome = Result(catching: work)
            done.signal()
        }.start()
    }

    /// Waits for the work and returns what it returned, or throws what it threw.
    func result() throws -> Value {
        done.wait()
        done.signal()
        // The semaphore orders the worker's write before this read.
        return try outcome!.get()
    }
}
