import CamoEvents
import CamoMedia
import CamoTestSupport
import Foundation
import Testing

/// Ten minutes of what a living room hears — espeak-ng speech in several voices, sine melodies, noise, and short beeps
/// of appliances — made at run time with sox and espeak-ng, through the alarm detector: how often it hears a smoke or
/// CO alarm that is not there. T3 and T4 laid over silence and over excerpts of each kind show that it still hears
/// real alarms (over silence and noise; over the rest it is reported). Not in CI (it needs a minute or more of a core and some 400 MB): `CAMO_ALARM_SOAK=1 swift test --filter
/// AlarmSoakTests` (a release build: add `-c release`). It prints `alarm soak: …` with the counts.
@Suite(
    "Alarm soak: false alarms over 10 minutes of speech, music, noise and beeps",
    .enabled(if: ProcessInfo.processInfo.environment["CAMO_ALARM_SOAK"] == "1", "set CAMO_ALARM_SOAK=1 to run it"))
struct AlarmSoakTests {
    static let rate = 48_000
    static let seconds = 600.0

    @Test("no smoke or CO alarm in 10 minutes of speech, melodies, noise and beeps; T3 and T4 laid over silence and noise are heard")
    func falseAlarms() throws {
        let directory = NSTemporaryDirectory() + "camo-alarm-soak-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var plan = SoakPlan(seed: 0xA1A2_0003)
        let made = try Self.shell("set -euo pipefail\ncd '\(directory)'\n" + plan.script(seconds: Self.seconds))
        try #require(made.status == 0, "making the mix: \(made.output)")
        let mix = try Self.readFloat32(directory + "/mix.f32")
        let kinds = SoakPlan.Kinds(lengths: try String(contentsOfFile: directory + "/lengths.txt", encoding: .utf8))
        let duration = Double(mix.count) / Double(Self.rate)
        try #require(duration >= Self.seconds - 1, "the mix is \(duration) s")

        let falseAlarms = Self.detections(mix)
        let byPattern = Dictionary(grouping: falseAlarms, by: \.pattern).mapValues(\.count)
        let places = falseAlarms.map { String(format: "%@ at %.1f s (%@)", $0.pattern.rawValue, Double($0.time) / 1e9, kinds.kind(at: Double($0.time) / 1e9)) }
        print(String(format: "alarm soak: %.0f s of %@: smokeAlarm (T3) %d, coAlarm (T4) %d false detections%@", duration,
                     kinds.summary, byPattern[.t3] ?? 0, byPattern[.t4] ?? 0, places.isEmpty ? "" : ": " + places.joined(separator: ", ")))
        #expect(falseAlarms.isEmpty, "\(places)")

        // The control: T3 and T4 (three cycles at 3.1 kHz, amplitude 0.5: louder than the room, as an alarm is) laid
        // over 20 s of silence and over 20 s of each kind of sound in the mix, scaled to a peak of 0.1; the alarm must be heard within two
        // cycles over silence and noise. Over speech, melodies and beeps it is reported, not judged: their tones in
        // the alarm's pauses break its rhythm. Found so: neither alarm was heard over speech peaking at 0.1 (heard at
        // 0.01), nor over melodies or beeps even at 0.01.
        var heardOver: [String: [AlarmPattern: Double]] = [:]
        for background in ["silence"] + kinds.names {
            var excerpt = background == "silence" ? [Float](repeating: 0, count: 20 * Self.rate) : kinds.excerpt(of: background, seconds: 20, from: mix)
            guard excerpt.count >= 20 * Self.rate else { continue }
            // The room at a tenth of full scale at its loudest: the alarm's tones are 14 dB above its peaks.
            let peak = excerpt.reduce(0) { max($0, abs($1)) }
            if peak > 0 { excerpt = excerpt.map { $0 * 0.1 / peak } }
            for pattern in AlarmPattern.allCases {
                var overlaid = excerpt
                Self.overlay(pattern, at: 1, into: &overlaid)
                let first = Self.detections(overlaid).filter { $0.pattern == pattern }.map { Double($0.time) / 1e9 - 1 }.min()
                heardOver[background, default: [:]][pattern] = first ?? -1
            }
        }
        let control = heardOver.sorted { $0.key < $1.key }.map { background, heard in
            "\(background): " + AlarmPattern.allCases.map { pattern in
                heard[pattern].map { $0 < 0 ? "\(pattern.rawValue) not heard" : String(format: "%@ after %.2f s", pattern.rawValue, $0) } ?? "-"
            }.joined(separator: ", ")
        }
        print("alarm soak: alarms laid over: " + control.joined(separator: "; "))
        for background in ["silence", "noise"] {
            for pattern in AlarmPattern.allCases {
                let cycle = Double(pattern.tones * 2 - 1) * Double(pattern.toneNanos) / 1e9 + Double(pattern.pauseNanos) / 1e9
                let first = heardOver[background]?[pattern] ?? -1
                #expect(first >= 0 && first <= 2 * cycle, "\(pattern) over \(background): first heard after \(first) s")
            }
        }
    }

    /// The detections of the alarm detector fed `samples` (mono) as stereo chunks of 10 ms from time 0.
    static func detections(_ samples: [Float]) -> [AlarmDetection] {
        var detector = AlarmPatternDetector()
        var found: [AlarmDetection] = []
        let frames = 480
        var index = 0
        var stereo = [Float](repeating: 0, count: frames * 2)
        while index + frames <= samples.count {
            for i in 0..<frames {
                stereo[2 * i] = samples[index + i]
                stereo[2 * i + 1] = samples[index + i]
            }
            let chunk = AudioChunk(samples: stereo, firstSampleTime: UInt64(index) * 1_000_000_000 / UInt64(rate))
            found += detector.process(chunk)
            index += frames
        }
        return found
    }

    /// Adds three cycles of `pattern` at 3.1 kHz, amplitude 0.5, from `start` s.
    static func overlay(_ pattern: AlarmPattern, at start: Double, into samples: inout [Float]) {
        let tone = Double(pattern.toneNanos) / 1e9, gap = Double(pattern.gapNanos) / 1e9, pause = Double(pattern.pauseNanos) / 1e9
        var t = start
        for _ in 0..<3 {
            for index in 0..<pattern.tones {
                let first = Int(t * Double(rate)), count = Int(tone * Double(rate))
                for i in 0..<count where first + i < samples.count {
                    samples[first + i] += Float(0.5 * sin(2 * Double.pi * 3_100 * Double(i) / Double(rate)))
                }
                t += tone + (index + 1 < pattern.tones ? gap : pause)
            }
        }
    }

    static func readFloat32(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var samples = [Float](repeating: 0, count: data.count / 4)
        _ = samples.withUnsafeMutableBytes { data.copyBytes(to: $0) }
        return samples
    }

    static func shell(_ script: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// The soak's mix: segments drawn from a seeded generator, each made by sox or espeak-ng, concatenated into
/// `mix.f32` (float32 mono, 48 kHz); `lengths.txt` says what lies where.
struct SoakPlan {
    /// Which kind of sound lies where, for the report.
    struct Kinds {
        var spans: [(start: Double, end: Double, kind: String)] = []

        /// From `lengths.txt`: a line `KIND SECONDS` per segment, in order.
        init(lengths: String) {
            var time = 0.0
            for line in lengths.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 2, let length = Double(fields[1]) else { continue }
                if fields[0] != "quiet" { spans.append((time, time + length, String(fields[0]))) }
                time += length
            }
        }

        /// The kinds, in order of name.
        var names: [String] { Set(spans.map(\.kind)).sorted() }

        /// The first `seconds` of the segments of `kind`, one after another (mono samples of `mix`).
        func excerpt(of kind: String, seconds: Int, from mix: [Float]) -> [Float] {
            var samples: [Float] = []
            for span in spans where span.kind == kind && samples.count < seconds * AlarmSoakTests.rate {
                let start = Int(span.start * Double(AlarmSoakTests.rate)), end = min(Int(span.end * Double(AlarmSoakTests.rate)), mix.count)
                if start < end { samples += mix[start..<end] }
            }
            return Array(samples.prefix(seconds * AlarmSoakTests.rate))
        }

        func kind(at time: Double) -> String {
            spans.first { time >= $0.start && time < $0.end }?.kind ?? "?"
        }

        var summary: String {
            let totals = Dictionary(grouping: spans, by: \.kind).mapValues { $0.reduce(0) { $0 + $1.end - $1.start } }
            return totals.sorted { $0.key < $1.key }.map { String(format: "%@ %.0f s", $0.key, $0.value) }.joined(separator: ", ")
        }
    }

    var generator: SeededGenerator

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(generator.next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }

    mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(generator.next() % UInt64(choices.count))]
    }

    static let sentences = [
        "Could you pass me the salt, please? I think the soup needs a little more.",
        "The train to Edinburgh leaves at twenty past nine from platform four.",
        "Beep beep, said the child, pushing the little red car across the floor.",
        "We tested the smoke alarm last week, and the battery is still fine.",
        "Three, two, one, go! Run as fast as you can to the end of the garden.",
        "Good evening. Here is the news. Heavy rain is expected in the north tonight.",
        "Hello? Yes, this is she. No, I will call you back in five minutes.",
        "Add two cups of flour, one egg, and a pinch of salt, then stir for a minute.",
    ]
    static let voices = ["en-us", "en", "en+f3", "en+m3", "en+f4", "en-us+m7", "en+klatt"]

    /// The shell script that makes `mix.f32` and `lengths.txt` from segments of about `seconds` s in all.
    mutating func script(seconds: Double) -> String {
        var lines = ["f='-r 48000 -c 1 -b 16'"]
        var files: [String] = []
        var total = 0.0
        var index = 0
        while total < seconds {
            let file = "s\(index).wav"
            index += 1
            let level = uniform(0.05...0.3)
            let kind: String
            var length: Double
            switch generator.next() % 4 {
            case 0:
                // Speech; its length is known only once made, so the script prints it.
                kind = "speech"
                let voice = pick(Self.voices), text = pick(Self.sentences)
                let pitch = Int(uniform(20...80)), speed = Int(uniform(130...190))
                lines.append("espeak-ng -w raw\(index).wav -v \(voice) -p \(pitch) -s \(speed) \"\(text)\"")
                lines.append("sox raw\(index).wav $f \(file) norm \(String(format: "%.1f", 20 * log10(level) + 9))")
                length = 0
            case 1:
                // A melody: sine, square or plucked notes of random lengths and pitches, back to back.
                kind = "melody"
                var notes: [String] = []
                length = 0
                let wave = pick(["sine", "sine", "square", "pluck"])
                while length < 8 {
                    let note = uniform(0.08...0.9), pitch = uniform(400...4_000)
                    notes.append("n\(index)_\(notes.count).wav")
                    lines.append("sox -n $f \(notes.last!) synth \(String(format: "%.3f", note)) \(wave) \(String(format: "%.0f", pitch)) vol \(String(format: "%.3f", level))")
                    length += (note * 1_000).rounded(.down) / 1_000
                }
                lines.append("sox \(notes.joined(separator: " ")) \(file)")
            case 2:
                // Noise: a fan, a shower, traffic.
                kind = "noise"
                length = uniform(4...12)
                let colour = pick(["whitenoise", "pinknoise", "brownnoise"])
                lines.append("sox -n $f \(file) synth \(String(format: "%.2f", length)) \(colour) vol \(String(format: "%.3f", level))")
            default:
                // Short beeps of appliances: a microwave's three, a timer's quick fours with a 1 s pause, a lorry
                // reversing (0.5 s on, 0.5 s off, no pause), single beeps at random times.
                kind = "beeps"
                let pitch = uniform(800...3_500)
                let (on, off, count): (Double, Double, Int)
                switch generator.next() % 4 {
                case 0: (on, off, count) = (0.3, 0.3, 3)
                case 1: (on, off, count) = (0.1, 0.1, 4)
                case 2: (on, off, count) = (0.5, 0.5, 12)
                default: (on, off, count) = (uniform(0.05...0.3), uniform(0.3...2), 6)
                }
                let repeats = count == 4 ? 4 : 1
                var parts: [String] = []
                lines.append("sox -n $f b\(index)on.wav synth \(on) sine \(String(format: "%.0f", pitch)) vol \(String(format: "%.3f", level))")
                lines.append("sox -n $f b\(index)off.wav trim 0 \(off)")
                lines.append("sox -n $f b\(index)pause.wav trim 0 1")
                for _ in 0..<repeats {
                    for _ in 0..<count { parts += ["b\(index)on.wav", "b\(index)off.wav"] }
                    parts.append("b\(index)pause.wav")
                }
                lines.append("sox \(parts.joined(separator: " ")) \(file)")
                length = Double(repeats) * (Double(count) * (on + off) + 1)
            }
            // A second or two of quiet room between segments.
            let quiet = uniform(0.5...2)
            lines.append("sox -n $f q\(index).wav trim 0 \(String(format: "%.2f", quiet))")
            lines.append("printf '%s %s\\nquiet %s\\n' \(kind) \"$(soxi -D \(file))\" \"$(soxi -D q\(index).wav)\" >> lengths.txt")
            files += [file, "q\(index).wav"]
            if length == 0 { length = 6 }  // about a sentence, for the plan; lengths.txt has the real one
            total += length + quiet
        }
        lines.append("sox \(files.joined(separator: " ")) -t raw -e floating-point -b 32 -r 48000 -c 1 mix.f32")
        return lines.joined(separator: "\n")
    }
}
