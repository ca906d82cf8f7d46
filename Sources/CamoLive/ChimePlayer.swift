import Dispatch
import Logging
import Synchronization

/// Plays short finished sounds (the doorbell's chime) on the speaker: `appsrc ! audioconvert ! audioresample !
/// volume ! <ALSA sink or WAV file>`, the same output as talkback. Each sound opens the output, plays to its end
/// (drained) and closes it again, so the device is held only while a chime sounds. ``play(_:volumePercent:muted:)``
/// never blocks: sounds play one after another on the player's own queue; while one plays, one more may wait, and
/// further ones are skipped (a held-down bell does not queue a minute of chimes). A busy or missing device is
/// logged and counted, never thrown at the caller.
public final class ChimePlayer: Sendable {
    /// What has happened so far.
    public struct Statistics: Sendable, Hashable {
        /// Sounds played to their end.
        public var played = 0
        /// Sounds that could not be played (the device was busy or missing, the pipeline failed).
        public var failed = 0
        /// Sounds skipped: one was playing and another already waiting, or the speaker was muted.
        public var skipped = 0
        /// The last failure's reason.
        public var lastError: String?
    }

    /// Where the sounds play.
    public let output: SpeakerOutput
    private let logger: Logger
    private let queue = DispatchQueue(label: "camo.chime-player")
    private let state = Mutex((statistics: Statistics(), waiting: 0))

    /// A player on `output` (nothing is opened before a sound plays).
    public init(output: SpeakerOutput, logger: Logger) {
        self.output = output
        self.logger = logger
    }

    /// What has happened so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Plays `samples` (48 kHz interleaved stereo Float) at `volumePercent` (0–100); returns at once. Muted, or on
    /// ``SpeakerOutput/none``, nothing plays (a mute counts as skipped).
    public func play(_ samples: [Float], volumePercent: Int, muted: Bool) {
        guard output != .none, !samples.isEmpty else { return }
        let accepted = state.withLock { state -> Bool in
            guard !muted, state.waiting < 2 else {
                state.statistics.skipped += 1
                return false
            }
            state.waiting += 1
            return true
        }
        guard accepted else {
            logger.debug("Chime skipped", metadata: ["reason": "\(muted ? "the speaker is muted" : "a chime is playing and another waits")"])
            return
        }
        queue.async { [self] in
            let result = render(samples, volumePercent: volumePercent)
            state.withLock { state in
                state.waiting -= 1
                switch result {
                case .none: state.statistics.played += 1
                case .some(let reason):
                    state.statistics.failed += 1
                    state.statistics.lastError = reason
                }
            }
            if let reason = result {
                logger.error("The chime could not be played on the speaker", metadata: ["speaker": "\(output)", "reason": "\(reason)"])
            }
        }
    }

    /// Waits until every sound asked for so far has played or failed.
    public func waitUntilIdle() {
        queue.sync {}
    }

    /// Plays one sound to its end; nil, or why it failed.
    private func render(_ samples: [Float], volumePercent: Int) -> String? {
        GStreamerRuntime.shared.start()
        logger.debug("Playing a chime", metadata: ["speaker": "\(output)", "seconds": "\(Double(samples.count / 2) / 48_000)"])
        guard let sink = SpeakerSink.description(output) else { return "there is no speaker" }
        let description = "appsrc name=chime format=time caps=\"\(SpeakerSink.sourceCaps)\" ! \(sink)"
        let pipeline: GstElementRef
        switch GstCalls.launch(description) {
        case .success(let launched): pipeline = launched
        case .failure(let error): return "\(error)"
        }
        defer { GstCalls.stop(pipeline) }
        guard let source = GstCalls.child(pipeline, "chime") else { return "the chime pipeline has no source" }
        defer { source.release() }
        if let volume = GstCalls.child(pipeline, "volume") {
            SpeakerSink.setVolume(volume, percent: volumePercent, muted: false)
            volume.release()
        }
        guard GstCalls.pushWhole(source, samples: samples, rate: 48_000, channels: 2) else { return "the chime could not be queued" }
        if let failure = GstCalls.start(pipeline) { return failure }
        // Real time plus a margin: ALSA plays at the sound's pace; a file is written at once.
        let seconds = Double(samples.count / 2) / 48_000
        switch GstCalls.waitForEnd(pipeline, timeout: UInt64((seconds + 5) * 1e9)) {
        case .ended: return nil
        case .failed(let reason): return reason
        case .timedOut: return "the output did not finish playing within \(Int(seconds + 5)) s"
        }
    }
}
