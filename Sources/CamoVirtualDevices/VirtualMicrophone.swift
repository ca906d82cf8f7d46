import CamoMedia
import CamoStudioKit
import Foundation
import Logging
import Synchronization

/// Where the virtual microphone's periods go: snd-aloop's playback end, or a test's recorder. Used from the
/// microphone's playback thread only.
public protocol VirtualMicrophoneSink: AnyObject, Sendable {
    /// Frames per period the device takes.
    var periodFrames: Int { get }
    /// Frames the device's buffer holds.
    var bufferFrames: Int { get }
    /// Device underruns recovered so far.
    var xruns: Int { get }
    /// Frames written but not yet played.
    func delay() -> Int
    /// Writes interleaved S16 stereo frames, blocking until the device took them (this paces the thread).
    func write(_ samples: [Int16]) throws(VirtualDeviceError)
    /// Closes the device.
    func close()
    /// Shows the device as `description` where it has one to show (a PipeWire source); the default ignores it.
    func describe(_ description: String)
}

extension VirtualMicrophoneSink {
    /// ALSA devices and others have no description to show.
    public func describe(_ description: String) {}
}

/// The agent's sound as a microphone other programs record from: packets handed to ``receive(_:)`` are queued,
/// resampled to the device's clock (``MicrophoneFeed``: the drift between the agent's clock and the device's is held
/// at zero and measured) and played into snd-aloop's playback end by the microphone's own thread, which writes
/// silence while the agent is away so the device never stops. Thread-safe.
public final class VirtualMicrophone: Sendable {
    /// What the microphone has done.
    public struct Statistics: Sendable, Equatable {
        /// The device played into.
        public var device: String
        /// Where the feed is.
        public var state: MicrophoneFeed.State
        /// The measured drift of the agent's clock against this machine's (snd-aloop's), in ppm (positive: the
        /// agent's is fast): the fit of the packets' capture times to their arrival, once it spans 20 s.
        public var driftPPM: Double?
        /// Seconds the drift's fit spans.
        public var driftSpanSeconds: Double
        /// The resampling's mean correction so far, in ppm (the drift control's view of the same drift, with the
        /// effect of bursts and stalls in it).
        public var meanCorrectionPPM: Double
        /// The current correction of the resampling ratio, in ppm.
        public var correctionPPM: Double
        /// The buffer's target now (base plus the jitter allowance), in milliseconds.
        public var targetMilliseconds: Double
        /// The feed's counters.
        public var counters: MicrophoneFeed.Counters
        /// Device underruns (the thread was late).
        public var xruns: Int
        /// The last failure's sentence, if any.
        public var lastError: String?
    }

    private let makeSink: @Sendable () throws(VirtualDeviceError) -> any VirtualMicrophoneSink
    /// The device's name.
    public let device: String
    private let logger: Logger
    private let clock: any MonotonicClock
    private let feed: Mutex<MicrophoneFeed>
    private let shared = Mutex(Shared())
    private let drift = Mutex(DriftFit())

    private struct DriftFit {
        var estimator = ClockDriftEstimator()
        var sessionActive = false
    }
    private let done = DispatchSemaphore(value: 0)

    private struct Shared {
        var stopped = false
        var started = false
        var xruns = 0
        var lastError: String?
        /// Smoothed (studio time the sample reaches the consumer) − (its capture time on the agent's clock).
        var lagNanos: Double?
        /// The description the device should show (the agent's own name once it said it), and whether the open
        /// device shows it.
        var description: String?
        var descriptionShown = true
    }

    /// Plays into the sink `makeSink` opens (again after a failure, once a second). `packetFrames` is the size of
    /// the agent's packets, which sets how much is buffered.
    public init(device: String, periodFrames: Int = 480, bufferFrames: Int = 1_920, packetFrames: Int,
                clock: any MonotonicClock = SystemMonotonicClock(), logger: Logger,
                makeSink: @escaping @Sendable () throws(VirtualDeviceError) -> any VirtualMicrophoneSink) {
        self.device = device
        self.makeSink = makeSink
        self.logger = logger
        self.clock = clock
        feed = Mutex(MicrophoneFeed(periodFrames: periodFrames, deviceBufferFrames: bufferFrames, packetFrames: packetFrames))
    }

    /// Plays into the ALSA device `device` (snd-aloop's playback end, `hw:CamoMic,0,0`), opened now so a wrong
    /// device is refused at once.
    public convenience init(alsaDevice device: String, packetFrames: Int, logger: Logger) throws(VirtualDeviceError) {
        let first = try ALSAPlayback(name: device)
        let opened = Mutex<ALSAPlayback?>(first)
        self.init(device: device, periodFrames: first.periodFrames, bufferFrames: first.bufferFrames, packetFrames: packetFrames,
                  logger: logger) { () throws(VirtualDeviceError) -> any VirtualMicrophoneSink in
            if let ready = opened.withLock({ value -> ALSAPlayback? in defer { value = nil }; return value }) { return ready }
            return try ALSAPlayback(name: device)
        }
    }

    /// Plays into a PipeWire source node `nodeName` shown as `description`, made now so a missing daemon is
    /// refused at once (and made again after a failure, once a second). `remote` names another daemon's socket
    /// (its name in `$XDG_RUNTIME_DIR` or an absolute path); by default the user's.
    public convenience init(pipeWireNode nodeName: String, description: String, remote: String? = nil, packetFrames: Int,
                            logger: Logger) throws(VirtualDeviceError) {
        let first = try PipeWireSource(nodeName: nodeName, description: description, remote: remote)
        let opened = Mutex<PipeWireSource?>(first)
        self.init(device: "pipewire:\(nodeName)", periodFrames: first.periodFrames, bufferFrames: first.bufferFrames,
                  packetFrames: packetFrames, logger: logger) { () throws(VirtualDeviceError) -> any VirtualMicrophoneSink in
            if let ready = opened.withLock({ value -> PipeWireSource? in defer { value = nil }; return value }) { return ready }
            return try PipeWireSource(nodeName: nodeName, description: description, remote: remote)
        }
    }

    /// Whether a PipeWire daemon may run for this user (its socket is there; making the source says for sure).
    public static var pipeWireMayRun: Bool { PipeWireSource.daemonSocketExists() }

    /// The PipeWire node name for an agent's microphone: `camo-` and the agent's name in lower case, with anything
    /// but letters, digits, `-` and `_` made `-` ("Kitchen Cam" → `camo-kitchen-cam`).
    public static func pipeWireNodeName(agent: String) -> String {
        let cleaned = agent.lowercased().unicodeScalars.map { scalar -> Character in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || scalar == "-" || scalar == "_" ? Character(scalar) : "-"
        }
        let name = String(cleaned).split(separator: "-", omittingEmptySubsequences: true).joined(separator: "-")
        return "camo-" + (name.isEmpty ? "agent" : name)
    }

    /// The snd-aloop card `camo-studio setup` loads (id `CamoMic`), if it is there.
    public static func loopbackCard(id: String = LoopbackSetupOptions.microphoneCardID, host: any LoopbackHost = SystemLoopbackHost()) -> LoopbackSoundCard? {
        LoopbackSoundCard.all(from: host).first { $0.id == id }
    }

    /// Starts the playback thread: silence at once, the agent's sound when it comes.
    public func start() {
        let begin = shared.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started && !s.stopped
        }
        guard begin else { return }
        let thread = Thread { [self] in
            run()
            done.signal()
        }
        thread.name = "camo-virtual-mic"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// One packet from the agent.
    public func receive(_ packet: ReceivedAudioPacket) {
        let samples = packet.samples
        let now = clock.now.nanoseconds
        let newSession = drift.withLock { fit -> Bool in
            defer { fit.estimator.add(local: now, remote: packet.firstSampleTime) }
            guard !fit.sessionActive else { return false }
            fit.estimator.reset()
            fit.sessionActive = true
            return true
        }
        // A new session's clock may be another run's (or another machine's): its lag is measured afresh.
        if newSession { shared.withLock { $0.lagNanos = nil } }
        feed.withLock { $0.receive(samples, firstSampleTime: packet.firstSampleTime) }
    }

    /// The agent went away: what is queued plays out, then silence until it is back.
    public func sessionLost() {
        drift.withLock { $0.sessionActive = false }
        shared.withLock { $0.lagNanos = nil }
        feed.withLock { $0.sessionLost() }
    }

    /// How long after its capture the agent's sound reaches a program recording the microphone, as (studio clock −
    /// agent clock): compare with the same difference for the picture to align the two (the clocks' offset cancels).
    public var presentationLagNanos: Int64? {
        shared.withLock { $0.lagNanos.map { Int64($0) } }
    }

    /// Whether the agent's sound is playing now (not silence, not buffering): one lock, for the per-frame hold.
    public var isPlaying: Bool { feed.withLock { $0.state == .playing } }

    /// What has been done so far.
    public var statistics: Statistics {
        let (state, controller, counters, target) = feed.withLock { ($0.state, $0.controller, $0.counters, $0.targetFrames) }
        let fit = drift.withLock { $0.estimator }
        return shared.withLock {
            Statistics(device: device, state: state, driftPPM: fit.driftPPM, driftSpanSeconds: fit.spanSeconds,
                       meanCorrectionPPM: controller.driftPPM, correctionPPM: controller.correction * 1e6,
                       targetMilliseconds: Double(target) / 48, counters: counters, xruns: $0.xruns, lastError: $0.lastError)
        }
    }

    /// Stops the thread (after the period being written) and closes the device.
    public func stop() {
        let wait = shared.withLock { s -> Bool in
            defer { s.stopped = true }
            return s.started && !s.stopped
        }
        if wait { done.wait() }
    }

    /// Shows the device as `description` from now on (a PipeWire source's description, also after it is made again);
    /// `StudioCamera` calls it with the agent's own name once the agent says it.
    public func describe(as description: String) {
        shared.withLock {
            guard $0.description != description else { return }
            $0.description = description
            $0.descriptionShown = false
        }
    }

    // MARK: On the playback thread

    private func run() {
        var sink: (any VirtualMicrophoneSink)?
        var samples = [Int16]()
        while !shared.withLock({ $0.stopped }) {
            guard let device = sink ?? open() else {
                Thread.sleep(forTimeInterval: 1)
                continue
            }
            if sink == nil { shared.withLock { $0.descriptionShown = false } }
            sink = device
            if let description = shared.withLock({ s -> String? in
                defer { s.descriptionShown = true }
                return s.descriptionShown ? nil : s.description
            }) {
                device.describe(description)
            }
            let delay = device.delay()
            let period = feed.withLock { $0.nextPeriod(deviceDelay: delay) }
            if let captureTime = period.captureTime {
                let reaches = Double(clock.now.nanoseconds) + Double(delay) * 1e9 / 48_000
                let lag = reaches - Double(captureTime)
                shared.withLock { s in s.lagNanos = s.lagNanos.map { $0 + 0.05 * (lag - $0) } ?? lag }
            }
            Self.convert(period.samples, into: &samples)
            do {
                try device.write(samples)
                let xruns = device.xruns
                shared.withLock { $0.xruns = xruns }
            } catch {
                record(error.description)
                device.close()
                sink = nil
            }
        }
        sink?.close()
    }

    private func open() -> (any VirtualMicrophoneSink)? {
        do {
            let sink = try makeSink()
            shared.withLock { $0.lastError = nil }
            logger.info("The virtual microphone plays into \(device)")
            return sink
        } catch {
            record(error.description)
            return nil
        }
    }

    private func record(_ error: String) {
        let first = shared.withLock { s -> Bool in
            defer { s.lastError = error }
            return s.lastError != error
        }
        if first { logger.error("The virtual microphone cannot play", metadata: ["error": "\(error)"]) }
    }

    /// Float samples to S16 with clipping (the agent's are float32 in −1…1).
    static func convert(_ samples: [Float], into output: inout [Int16]) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(samples.count)
        for sample in samples {
            let scaled = (sample * 32_767).rounded()
            output.append(Int16(max(-32_768, min(32_767, scaled))))
        }
    }
}

/// `@unchecked Sendable`: one thread at a time owns it (opened by the caller, then used by the playback thread only).
extension ALSAPlayback: VirtualMicrophoneSink, @unchecked Sendable {}
