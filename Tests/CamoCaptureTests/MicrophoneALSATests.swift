import CamoCapture
import CamoMedia
import Foundation
import Logging
import Synchronization
import Testing

/// The real libasound code path without hardware: ALSA's `null` device under the `file` plugin, whose `infile`
/// supplies the captured bytes. The configuration text is written by the test and added to the system's.
/// `null` neither paces nor writes its buffer, so only the first `infile`-many frames are compared, and the
/// source's own guard keeps it from running ahead of the clock.
@Suite("Microphone through libasound (null + file plugin)", .serialized)
struct MicrophoneALSATests {
    static let logger = Logger(label: "test.microphone")

    /// An input file and the ALSA configuration that reads it as capture from device `camotest`.
    struct Fixture {
        var directory: String
        var configuration: String
        var infile: String

        init(bytes: [UInt8], extra: String = "") throws {
            directory = NSTemporaryDirectory() + "camo-alsa-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            infile = directory + "/in.raw"
            try Data(bytes).write(to: URL(fileURLWithPath: infile))
            configuration = """
                pcm.camotest {
                    type file
                    slave.pcm { type null }
                    file "/dev/null"
                    infile "\(infile)"
                    format raw
                }
                \(extra)
                """
        }
    }

    /// Little-endian bytes for `frames` frames of a known pattern; returns the bytes and the floats expected
    /// per channel (integers scaled to [-1, 1)).
    static func pattern(_ format: MicrophoneSampleFormat, channels: Int, frames: Int) -> (bytes: [UInt8], expected: [[Float]]) {
        var bytes: [UInt8] = []
        var expected = [[Float]](repeating: [], count: channels)
        for i in 0..<frames {
            for c in 0..<channels {
                // A ramp per channel, distinct between channels, covering negative and positive values.
                let unit = Double((i * 7919 + c * 104_729) % 65_536) / 32_768.0 - 1.0  // [-1, 1)
                switch format {
                case .s16:
                    let v = Int16(unit * 32_768)
                    bytes += withUnsafeBytes(of: v.littleEndian, Array.init)
                    expected[c].append(Float(v) / 32_768)
                case .s32:
                    let v = Int32(unit * 2_147_483_648) | Int32(c + 1)  // low bits matter too
                    bytes += withUnsafeBytes(of: v.littleEndian, Array.init)
                    expected[c].append(Float(v) / 2_147_483_648)
                case .s24Packed:
                    let v = Int32(unit * 8_388_608)
                    bytes += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16)]
                    expected[c].append(Float(v) / 8_388_608)
                case .float32:
                    let v = Float(unit * 0.75)
                    bytes += withUnsafeBytes(of: v.bitPattern.littleEndian, Array.init)
                    expected[c].append(v)
                }
            }
        }
        return (bytes, expected)
    }

    /// Runs a source until `frames` frames arrived (or 10 s passed) and returns the chunks.
    static func capture(_ configuration: MicrophoneSource.Configuration, frames: Int) async -> (chunks: [AudioChunk], statistics: MicrophoneSource.Statistics, events: [MicrophoneSource.Event]) {
        let chunks = Mutex<[AudioChunk]>([])
        let events = Mutex<[MicrophoneSource.Event]>([])
        let source = MicrophoneSource(configuration: configuration, logger: logger)
        let task = Task {
            await source.run(deliver: { chunk in chunks.withLock { $0.append(chunk) } },
                             events: { event in events.withLock { $0.append(event) } })
        }
        let giveUp = Date().addingTimeInterval(10)
        while chunks.withLock({ $0.reduce(0) { $0 + $1.sampleFrames } }) < frames && Date() < giveUp {
            try? await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        await task.value
        return (chunks.withLock { $0 }, source.statistics, events.withLock { $0 })
    }

    static func configuration(_ fixture: Fixture, device: String = "camotest", format: MicrophoneSampleFormat?, channels: Int?) -> MicrophoneSource.Configuration {
        var configuration = MicrophoneSource.Configuration(device: device)
        configuration.format = format
        configuration.channels = channels
        configuration.alsaConfiguration = fixture.configuration
        configuration.realtimePriority = false
        return configuration
    }

    @Test("The null device offers everything: FLOAT_LE stereo at 48 kHz, a 10 ms period, a ring of at least 4 periods, monotonic timestamps")
    func preferredParameters() throws {
        let fixture = try Fixture(bytes: [UInt8](repeating: 0, count: 4800 * 8))
        let setup = try MicrophoneSource(configuration: Self.configuration(fixture, format: nil, channels: nil), logger: Self.logger).probe()
        #expect(setup.format == .float32)
        #expect(setup.channels == 2)
        #expect(setup.rate == 48_000)
        #expect(setup.periodFrames == 480)
        #expect(setup.bufferFrames >= 4 * setup.periodFrames)
        #expect(!setup.throughPlugLayer)
        #expect(setup.monotonicTimestamps)
    }

    @Test("S16, S32, S24_3LE and FLOAT input, mono and stereo, come out as float32 stereo with the right values",
          arguments: [MicrophoneSampleFormat.s16, .s32, .s24Packed, .float32], [1, 2])
    func formatsAndChannels(format: MicrophoneSampleFormat, channels: Int) async throws {
        let frames = 14_400  // 300 ms: a first whole ring, then period by period at the pace of the clock
        let (bytes, expected) = Self.pattern(format, channels: channels, frames: frames)
        let fixture = try Fixture(bytes: bytes)
        let start = SystemMonotonicClock().now.nanoseconds
        let (chunks, statistics, events) = await Self.capture(Self.configuration(fixture, format: format, channels: channels), frames: frames)
        let end = SystemMonotonicClock().now.nanoseconds
        guard case .opened(let setup)? = events.first else {
            Issue.record("the source did not open: \(events)")
            return
        }
        #expect(setup.format == format && setup.channels == channels && setup.rate == 48_000)
        let samples = chunks.flatMap(\.samples)
        try #require(samples.count >= frames * 2, "only \(samples.count / 2) frames arrived")
        var wrong = 0
        for i in 0..<frames {
            let left = expected[0][i]
            let right = expected[channels == 1 ? 0 : 1][i]
            if samples[2 * i] != left || samples[2 * i + 1] != right { wrong += 1 }
        }
        #expect(wrong == 0, "\(wrong) of \(frames) frames differ; first: \(samples[0...3]) vs \(expected.map { $0[0] })")
        // Timestamps: on the monotonic clock of this run, and each chunk follows the previous without a gap or an
        // overlap (the source reads an unpaced device no faster than the clock, so its chunks are not early).
        for (a, b) in zip(chunks, chunks.dropFirst()) {
            let step = Int64(a.sampleFrames) * 1_000_000_000 / 48_000
            let off = Int64(b.firstSampleTime) - Int64(a.firstSampleTime) - step
            #expect(abs(off) <= 1_000_000, "chunk step off the 48 kHz line by \(off) ns")
        }
        #expect(chunks.count > 10, "the unpaced device was read in \(chunks.count) chunks, want a ring and then periods")
        let first = try #require(chunks.first?.firstSampleTime)
        #expect(first + 1_000_000_000 > start && first < end, "the first timestamp is not on this run's monotonic clock")
        #expect(statistics.overruns == 0 && statistics.losses == 0 && statistics.filledFrames == 0)
    }

    @Test("A device that lacks the asked format is opened through ALSA's plug layer, which converts")
    func plugLayerFallback() async throws {
        let frames = 4_800
        let (bytes, expected) = Self.pattern(.s16, channels: 1, frames: frames)
        // `camolinear` takes linear integer formats only (no FLOAT_LE) and hands S16 mono to the file/null pair.
        let fixture = try Fixture(bytes: bytes, extra: """
            pcm.camolinear {
                type linear
                slave { pcm camotest format S16_LE }
            }
            """)
        let (chunks, _, events) = await Self.capture(Self.configuration(fixture, device: "camolinear", format: .float32, channels: 1), frames: frames)
        guard case .opened(let setup)? = events.first else {
            Issue.record("the source did not open: \(events)")
            return
        }
        #expect(setup.throughPlugLayer)
        #expect(setup.openedName.hasPrefix("plug:"))
        #expect(setup.format == .float32)
        let samples = chunks.flatMap(\.samples)
        try #require(samples.count >= frames * 2)
        let worst = (0..<frames).map { abs(samples[2 * $0] - expected[0][$0]) }.max() ?? 1
        #expect(worst < 1e-6, "the plug layer's S16 to float differs by \(worst)")
    }

    @Test("A 44.1 kHz mono source (resampled by ALSA's plug layer) reaches the studio as 48 kHz stereo at the right pitch")
    func resampledPitch() async throws {
        let inputFrames = 44_100  // one second of a 440 Hz sine, S16 mono
        var bytes: [UInt8] = []
        for i in 0..<inputFrames {
            let v = Int16((sin(2 * Double.pi * 440 * Double(i) / 44_100) * 16_000).rounded())
            bytes += withUnsafeBytes(of: v.littleEndian, Array.init)
        }
        let fixture = try Fixture(bytes: bytes, extra: """
            pcm.camo441 {
                type plug
                slave { pcm camotest rate 44100 channels 1 format S16_LE }
            }
            """)
        let wanted = 40_000  // < 48000 * 44100/44100 s, all from the file
        var configuration = Self.configuration(fixture, device: "camo441", format: nil, channels: nil)
        // A ring longer than the read: the file plugin under the rate converter skips input when an unpaced
        // null ring wraps (arecord shows the same with --buffer-size=4800; a real, paced device does not).
        configuration.bufferMilliseconds = 1_000
        let (chunks, _, events) = await Self.capture(configuration, frames: wanted)
        guard case .opened(let setup)? = events.first else {
            Issue.record("the source did not open: \(events)")
            return
        }
        #expect(setup.rate == 48_000 && setup.channels == 2)
        let samples = chunks.flatMap(\.samples)
        try #require(samples.count >= wanted * 2)
        let left = (0..<wanted).map { samples[2 * $0] }
        let right = (0..<wanted).map { samples[2 * $0 + 1] }
        #expect(left == right, "a mono source must be the same on both channels")
        // Pitch from zero crossings over the steady part (skip the resampler's first milliseconds).
        let body = Array(left[1_000..<wanted])
        var crossings: [Double] = []
        for i in 1..<body.count where body[i - 1] < 0 && body[i] >= 0 {
            let fraction = Double(-body[i - 1]) / Double(body[i] - body[i - 1])
            crossings.append(Double(i - 1) + fraction)
        }
        try #require(crossings.count > 100)
        let period = (crossings.last! - crossings.first!) / Double(crossings.count - 1)
        let pitch = 48_000 / period
        #expect(abs(pitch - 440) < 0.5, "pitch \(pitch) Hz at 48 kHz; a source not resampled would read \(440 * 44_100 / 48_000.0) Hz")
    }

    @Test("A device name that does not exist is refused with a reason that names it")
    func unknownDevice() throws {
        var configuration = MicrophoneSource.Configuration(device: "camo-no-such-device")
        configuration.realtimePriority = false
        #expect {
            try MicrophoneSource(configuration: configuration, logger: Self.logger).probe()
        } throws: { error in
            guard let error = error as? MicrophoneError else { return false }
            return error.isDisconnect && error.description.contains("camo-no-such-device") && error.description.contains("camo-agent devices")
        }
    }

    @Test("ALSA's own error messages go to swift-log, not stderr")
    func libraryMessagesAreLogged() throws {
        let captured = LogCapture()
        ALSALog.route(to: Logger(label: "test.alsa") { _ in captured })
        defer { ALSALog.route(to: Logger(label: "camo.alsa")) }
        var configuration = MicrophoneSource.Configuration(device: "camo-no-such-device")
        configuration.realtimePriority = false
        _ = try? MicrophoneSource(configuration: configuration, logger: Self.logger).probe()
        let messages = captured.messages
        #expect(messages.contains { $0.contains("camo-no-such-device") || $0.contains("Unknown PCM") }, "logged: \(messages)")
    }
}

/// A log handler that keeps the messages.
final class LogCapture: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var messages: [String] { lock.withLock { stored } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.withLock { stored.append("\(event.message) \(event.metadata ?? [:])") }
    }
}
