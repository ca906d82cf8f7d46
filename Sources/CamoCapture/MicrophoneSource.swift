import CamoMedia
import CamoSystem
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A microphone through ALSA: 48 kHz float32 stereo chunks on the monotonic clock, whatever the device delivers.
///
/// The device is opened by name (`default` goes through PipeWire or PulseAudio on a desktop; `hw:1,0` is a card
/// directly). It is read in the best format it has (FLOAT_LE, S32_LE, S24_3LE, S16_LE), with 2 channels or 1
/// (duplicated), at 48000 Hz; what the device lacks, ALSA's plug layer converts, and resampling is logged. A
/// read loop on its own thread waits for each period (about 10 ms; the ring holds 10 periods), converts, and
/// places each chunk on an ``AudioTimeline`` from the PCM's CLOCK_MONOTONIC status timestamp and delay, so
/// every chunk's time is the capture time of its first sample.
///
/// Overruns and suspends are recovered and the lost stretch is filled with as much silence as the timestamps
/// say is missing. A device that goes away is closed at once; silence keeps flowing at 48 kHz while it is
/// reopened with back-off (0.25 s, doubling to 2 s), and streaming resumes on the same timeline.
public final class MicrophoneSource: Sendable {
    /// What to open and how.
    public struct Configuration: Sendable {
        /// The ALSA device name (`default`, `hw:1,0`, `plughw:CARD=Mic`, ...).
        public var device: String
        /// Insist on one sample format from the device (nil: the best it has).
        public var format: MicrophoneSampleFormat?
        /// Insist on a channel count from the device (nil: 2, else 1).
        public var channels: Int?
        /// Period length in milliseconds (the read cadence).
        public var periodMilliseconds = 10
        /// Ring buffer length in milliseconds (at least four periods).
        public var bufferMilliseconds = 100
        /// ALSA configuration text added to the system's, for devices defined by a test or an embedded setup.
        public var alsaConfiguration: String?
        /// Run the read loop with real-time priority (SCHED_FIFO) when the system allows it.
        public var realtimePriority = true

        /// A configuration for `device` with the defaults above.
        public init(device: String = "default") {
            self.device = device
        }
    }

    /// What happened to the device, for the agent's log and status.
    public enum Event: Sendable, Equatable {
        /// The device is open and capturing (first time or again after a loss).
        case opened(MicrophoneSetup)
        /// The device went away or could not be opened; silence flows until it returns.
        case lost(MicrophoneError)
        /// Frames were lost (overrun or suspend) and `filledFrames` of silence took their place.
        case recovered(overrun: Bool, filledFrames: Int)
    }

    /// Counts since the source was created.
    public struct Statistics: Sendable, Equatable, Codable {
        /// What the device was opened with last (nil until it opened).
        public var setup: MicrophoneSetup?
        /// True while the device is gone.
        public var lost = false
        /// Frames read from the device.
        public var capturedFrames: UInt64 = 0
        /// Chunks delivered (captured and silent).
        public var chunks: UInt64 = 0
        /// Overruns (-EPIPE) recovered.
        public var overruns = 0
        /// Suspends (-ESTRPIPE) recovered.
        public var suspends = 0
        /// Silent frames inserted for measured gaps (after overruns and suspends).
        public var filledFrames: UInt64 = 0
        /// Captured frames dropped because they overlapped frames already sent.
        public var droppedFrames: UInt64 = 0
        /// Silent frames sent while the device was gone.
        public var silentFramesWhileLost: UInt64 = 0
        /// Times the device went away.
        public var losses = 0
        /// Attempts to open the device that failed.
        public var failedOpens = 0

        /// Creates empty statistics.
        public init() {}
    }

    /// What the source opens.
    public let configuration: Configuration
    private let logger: Logger
    private let shared = Mutex(Shared())

    private struct Shared {
        var stop = false
        var statistics = Statistics()
    }

    /// Creates a source; nothing is opened until ``probe()`` or ``run(deliver:events:)``.
    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Counts so far.
    public var statistics: Statistics { shared.withLock { $0.statistics } }

    /// Opens and configures the device once and closes it again: what it would capture with, or why it cannot.
    public func probe() throws(MicrophoneError) -> MicrophoneSetup {
        let (pcm, setup) = try open()
        pcm.close()
        return setup
    }

    /// The capture PCMs ALSA lists: name, description, card, and with `capabilities` (which opens each hardware
    /// device) its formats, channels and rates.
    public static func devices(capabilities: Bool = true) -> [MicrophoneInfo] { ALSAPCM.captureDevices(capabilities: capabilities) }

    /// True when ALSA lists a capture device.
    public static func hasDevice() -> Bool { ALSAPCM.hasCaptureDevice() }

    /// Captures until the task is cancelled, handing each chunk (48 kHz float32 stereo, timestamped) to
    /// `deliver` on the capture thread. Never fails: a device that cannot be opened is retried while silence
    /// flows, and `events` says so.
    public func run(deliver: @escaping @Sendable (AudioChunk) -> Void, events: @escaping @Sendable (Event) -> Void = { _ in }) async {
        shared.withLock { $0.stop = false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    // Named for top(1) and /proc (Foundation does not pass a name set before start to the OS thread).
                    Thread.current.name = "camo-microphone"
                    var loop = ReadLoop(source: self, deliver: deliver, events: events)
                    loop.run()
                    continuation.resume()
                }
                thread.start()
            }
        } onCancel: {
            shared.withLock { $0.stop = true }
        }
    }

    // MARK: Loop support

    fileprivate var shouldStop: Bool { shared.withLock { $0.stop } }
    fileprivate func update(_ body: (inout Statistics) -> Void) { shared.withLock { body(&$0.statistics) } }
    fileprivate var log: Logger { logger }

    /// Opens the device directly when it has what the agent needs, else through ALSA's plug layer.
    fileprivate func open() throws(MicrophoneError) -> (ALSAPCM, MicrophoneSetup) {
        let device = configuration.device
        let request = ALSARequest(
            format: configuration.format, channels: configuration.channels, rate: MediaContract.sampleRate,
            periodFrames: MediaContract.sampleRate * configuration.periodMilliseconds / 1000,
            bufferFrames: MediaContract.sampleRate * max(configuration.bufferMilliseconds, 4 * configuration.periodMilliseconds) / 1000)
        let pcm = try ALSAPCM(name: device, configuration: configuration.alsaConfiguration)
        let missing = try pcm.missing(request)
        if missing.isEmpty {
            return (pcm, try pcm.configure(request, device: device, throughPlugLayer: false, resampled: false))
        }
        // A mono microphone stays mono through the plug layer: the agent duplicates it to both channels itself
        // (the plug layer's own channel routing is not a plain copy).
        var plugRequest = request
        if request.channels == nil && !pcm.offers(channels: 2) && pcm.offers(channels: 1) { plugRequest.channels = 1 }
        pcm.close()
        guard let plugName = Self.plugName(for: device) else {
            throw .unsupported(device: device, detail: "it lacks \(missing.joined(separator: ", "))")
        }
        let resampled = missing.contains { $0.hasSuffix(" Hz") }
        logger.notice(
            "The microphone lacks what the studio needs; ALSA's plug layer converts\(resampled ? " and resamples to 48 kHz" : "")",
            metadata: ["device": "\(device)", "lacks": "\(missing.joined(separator: ", "))", "opening": "\(plugName)"])
        let plug = try ALSAPCM(name: plugName, configuration: configuration.alsaConfiguration)
        return (plug, try plug.configure(plugRequest, device: device, throughPlugLayer: true, resampled: resampled))
    }

    /// The plug-layer name for a device: `plughw:...` for `hw:...`, `plug:{SLAVE="..."}` for other names,
    /// nil for names that already are the plug layer.
    static func plugName(for device: String) -> String? {
        if device.hasPrefix("plughw:") || device.hasPrefix("plug:") || device == "plug" { return nil }
        if device.hasPrefix("hw:") { return "plug" + device }
        guard !device.contains("\"") else { return nil }
        return "plug:{SLAVE=\"\(device)\"}"
    }
}

/// The capture thread's state: the open device, the timeline, the buffers.
private struct ReadLoop {
    let source: MicrophoneSource
    let deliver: @Sendable (AudioChunk) -> Void
    let events: @Sendable (MicrophoneSource.Event) -> Void
    let clock = SystemMonotonicClock()
    var timeline = AudioTimeline()
    var pcm: ALSAPCM?
    /// Whether `pcm` has been started. The start waits until just before the first wait, so that the log line and
    /// the `opened` event (slow on a loaded host) do not eat into the ring before the first read.
    var started = false
    var setup: MicrophoneSetup?
    var converter = MicrophoneSampleConverter(format: .float32, channels: 2)
    var raw: UnsafeMutableRawBufferPointer = .init(start: nil, count: 0)
    var capacityFrames = 0
    var discontinuity = true
    var discontinuityCause = DiscontinuityCause.start
    var nextAttempt: UInt64 = 0
    var backoff: UInt64 = ReadLoop.firstBackoff
    var reportedLoss = false
    var lastData: UInt64 = 0
    var lastOverrunLog: UInt64 = 0

    /// Why the next chunk is measured exactly.
    enum DiscontinuityCause: String {
        case start = "the device started"
        case overrun = "an overrun"
        case suspend = "a suspend"
        case stall = "a stall"
    }

    /// The first wait before reopening a lost device; it doubles to 2 s while the device keeps failing, and
    /// starts again once the device delivers.
    static let firstBackoff: UInt64 = 250_000_000

    /// Longest silent chunk while the device is gone (100 ms).
    static let silenceChunk = 4_800
    /// Silence while lost trails the clock by one period, as a device would.
    static let lostLatency: UInt64 = 10_000_000

    init(source: MicrophoneSource, deliver: @escaping @Sendable (AudioChunk) -> Void,
         events: @escaping @Sendable (MicrophoneSource.Event) -> Void) {
        self.source = source
        self.deliver = deliver
        self.events = events
    }

    mutating func run() {
        if source.configuration.realtimePriority { raisePriority() }
        defer {
            pcm?.close()
            raw.deallocate()
        }
        while !source.shouldStop {
            if pcm == nil {
                tryOpen()
                if pcm == nil {
                    sendSilence(until: clock.now.nanoseconds &- Self.lostLatency)
                    Thread.sleep(forTimeInterval: 0.01)
                    continue
                }
            }
            step()
        }
    }

    /// One wait and read on the open device.
    private mutating func step() {
        guard let pcm else { return }
        if !started {
            do {
                try pcm.start()
            } catch {
                return lose(error)
            }
            started = true
            lastData = clock.now.nanoseconds
        }
        let ready = pcm.wait(milliseconds: 100)
        if ready < 0 { return handle(ready) }
        guard ready > 0 else { return keepTimeWhileStalled() }
        let available = pcm.available()
        if available < 0 { return handle(Int32(truncatingIfNeeded: available)) }
        // Whole periods only: plugins (rate conversion, the file plugin) behave best in period steps.
        let period = max(1, setup?.periodFrames ?? 1)
        var count = min(available - available % period, capacityFrames - capacityFrames % period)
        // Never ahead of the clock: a device that does not pace itself (ALSA's null, a file) is read no faster
        // than real time, a period at a time once it has caught up. A real device never has frames from the future.
        if let next = timeline.nextTime {
            let now = clock.now.nanoseconds
            let due = now > next ? Int((now - next) * UInt64(MediaContract.sampleRate) / 1_000_000_000) : 0
            count = min(count, due - due % period)
        }
        guard count > 0 else {
            keepTimeWhileStalled()
            Thread.sleep(forTimeInterval: Double(period) / Double(MediaContract.sampleRate) / 2)
            return
        }
        let read = pcm.read(into: raw.baseAddress!, frames: count)
        if read < 0 { return handle(Int32(truncatingIfNeeded: read)) }
        guard read > 0 else { return keepTimeWhileStalled() }
        // The status first, then the clock: the status timestamp is taken inside the call.
        let status = pcm.timestampAndDelay()
        let now = clock.now.nanoseconds
        lastData = now
        if backoff != Self.firstBackoff { backoff = Self.firstBackoff }  // the device delivers: forget earlier failures
        var stamp = now
        var delay = 0
        if let status {
            delay = min(max(0, status.delay), 4 * capacityFrames)
            // Use the PCM's own timestamp when it is CLOCK_MONOTONIC and plausible; else the clock, read just now.
            if setup?.monotonicTimestamps == true, status.timestamp > 0, status.timestamp <= now, now - status.timestamp < 1_000_000_000 {
                stamp = status.timestamp
            }
        }
        let first = stamp &- UInt64(delay + read) * 1_000_000_000 / UInt64(MediaContract.sampleRate)
        var samples: [Float] = []
        samples.reserveCapacity(read * 2)
        converter.convert(UnsafeRawBufferPointer(raw), frames: read, appendingTo: &samples)
        let wasDiscontinuity = discontinuity
        let cause = discontinuityCause
        discontinuity = false
        let placement = timeline.place(frames: read, measuredTime: first, discontinuity: wasDiscontinuity)
        if placement.silenceFrames > 0 {
            emitSilence(frames: placement.silenceFrames, time: placement.silenceTime)
            source.update { $0.filledFrames += UInt64(placement.silenceFrames) }
            events(.recovered(overrun: wasDiscontinuity && cause == .overrun, filledFrames: placement.silenceFrames))
            source.log.notice("Filled a gap in the microphone's audio with silence", metadata: [
                "frames": "\(placement.silenceFrames)", "ms": "\(placement.silenceFrames * 1000 / MediaContract.sampleRate)",
                "after": "\(wasDiscontinuity ? cause.rawValue : "a jump in the device's timestamps")"])
        }
        if placement.droppedFrames > 0 {
            samples.removeFirst(placement.droppedFrames * 2)
            source.update { $0.droppedFrames += UInt64(placement.droppedFrames) }
        }
        if !samples.isEmpty {
            deliver(AudioChunk(samples: samples, firstSampleTime: placement.time))
        }
        source.update {
            $0.capturedFrames += UInt64(read)
            $0.chunks += 1
        }
    }

    /// A device that stops delivering (a paused sound server): after 500 ms without data, keep time with silence;
    /// when data comes again it is placed exactly (what the silence covered is dropped).
    private mutating func keepTimeWhileStalled() {
        let now = clock.now.nanoseconds
        guard now &- lastData > 500_000_000 else { return }
        sendSilence(until: now &- 200_000_000)
        markDiscontinuity(.stall)
    }

    private mutating func markDiscontinuity(_ cause: DiscontinuityCause) {
        discontinuity = true
        discontinuityCause = cause
    }

    /// An error from wait/avail/read: overrun and suspend are recovered; anything else closes the device.
    private mutating func handle(_ code: Int32) {
        guard let pcm else { return }
        let overrun = code == -EPIPE
        let suspend = code == -ESTRPIPE
        if overrun || suspend {
            let now = clock.now.nanoseconds
            source.update { overrun ? ($0.overruns += 1) : ($0.suspends += 1) }
            if now &- lastOverrunLog > 1_000_000_000 {
                lastOverrunLog = now
                source.log.warning(overrun ? "Microphone overrun (the agent did not read in time); recovering" : "Microphone suspended; recovering",
                                   metadata: ["device": "\(pcm.name)"])
            }
            if let failure = pcm.recover(from: code) {
                return lose(ALSAPCM.isDisconnect(failure) ? .disconnected(device: source.configuration.device)
                                : .call(device: source.configuration.device, call: "snd_pcm_recover", code: failure))
            }
            markDiscontinuity(overrun ? .overrun : .suspend)
            return
        }
        if ALSAPCM.isDisconnect(code) {
            return lose(.disconnected(device: source.configuration.device))
        }
        // Another error: try the generic recovery once; if that fails, treat the device as gone.
        source.log.warning("Microphone read failed; recovering", metadata: ["error": "\(ALSAPCM.describe(code))"])
        if pcm.recover(from: code) != nil {
            return lose(.call(device: source.configuration.device, call: "snd_pcm_readi", code: code))
        }
        markDiscontinuity(.overrun)
    }

    private mutating func lose(_ error: MicrophoneError) {
        pcm?.close()
        pcm = nil
        markDiscontinuity(.start)
        // A device that opens but fails at once must not be reopened four times a second forever: the back-off
        // only starts again once the device delivered.
        nextAttempt = clock.now.nanoseconds &+ backoff
        backoff = min(backoff * 2, 2_000_000_000)
        source.update {
            $0.losses += 1
            $0.lost = true
        }
        reportedLoss = true
        source.log.error("The microphone went away; sending silence until it returns", metadata: ["error": "\(error)"])
        events(.lost(error))
    }

    private mutating func tryOpen() {
        let now = clock.now.nanoseconds
        guard now >= nextAttempt else { return }
        do {
            let (opened, setup) = try source.open()
            configureBuffers(for: setup)
            self.pcm = opened
            started = false
            self.setup = setup
            markDiscontinuity(.start)
            lastData = clock.now.nanoseconds
            source.update {
                $0.setup = setup
                $0.lost = false
            }
            source.log.info(reportedLoss ? "Microphone is back" : "Microphone open", metadata: ["setup": "\(setup)"])
            reportedLoss = false
            events(.opened(setup))
        } catch {
            source.update { $0.failedOpens += 1 }
            if !reportedLoss {
                reportedLoss = true
                source.update { $0.lost = true }
                source.log.error("The microphone cannot be opened; sending silence and trying again", metadata: ["error": "\(error)"])
                events(.lost(error))
            } else {
                source.log.debug("The microphone is still missing", metadata: ["error": "\(error)"])
            }
            nextAttempt = now &+ backoff
            backoff = min(backoff * 2, 2_000_000_000)
        }
    }

    private mutating func configureBuffers(for setup: MicrophoneSetup) {
        converter = MicrophoneSampleConverter(format: setup.format, channels: setup.channels)
        let frames = max(setup.bufferFrames, setup.periodFrames)
        if frames != capacityFrames || raw.count != frames * converter.bytesPerFrame {
            raw.deallocate()
            raw = .allocate(byteCount: frames * converter.bytesPerFrame, alignment: 16)
            capacityFrames = frames
        }
    }

    /// Silence up to `time` on the timeline (while the device is gone or stalled).
    private mutating func sendSilence(until time: UInt64) {
        guard let (frames, start) = timeline.silence(until: time) else { return }
        emitSilence(frames: frames, time: start)
        source.update { $0.silentFramesWhileLost += UInt64(frames) }
    }

    private func emitSilence(frames: Int, time: UInt64) {
        var done = 0
        while done < frames {
            let count = min(Self.silenceChunk, frames - done)
            let at = time + UInt64(done) * 1_000_000_000 / UInt64(MediaContract.sampleRate)
            deliver(AudioChunk(samples: [Float](repeating: 0, count: count * 2), firstSampleTime: at))
            source.update { $0.chunks += 1 }
            done += count
        }
    }

    /// SCHED_FIFO for this thread when allowed (root, or RLIMIT_RTPRIO): a late read loses audio.
    private func raisePriority() {
        var parameters = sched_param()
        parameters.sched_priority = 10
        let result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
        if result == 0 {
            source.log.debug("Microphone thread runs with real-time priority (SCHED_FIFO 10)")
        } else {
            source.log.debug("Microphone thread keeps normal priority", metadata: ["reason": "\(SystemCallError.message(result))"])
        }
    }
}
