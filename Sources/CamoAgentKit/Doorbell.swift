import CamoDoorbell
import CamoLive
import Logging
import Synchronization

/// The doorbell (the Google Home doorbell device type): its button, the chime on the speaker, and the wired chime.
/// Each press calls `onPress` with the press's time (CLOCK_MONOTONIC, ns, the kernel's timestamp of its first
/// edge), plays the selected chime on the speaker, and rings the external chime when it is enabled.
///
/// ```swift
/// let doorbell = try Doorbell(button: "gpio:doorbell", externalChime: "gpio:chime", speaker: .alsa(device: "default"),
///                             logger: logger) { time in events.doorbellPressed(at: time) }
/// doorbell.configure(chime: "westminster", volume: 80, muted: false, externalEnabled: true, externalDurationMs: 1000)
/// try doorbell.start()
/// ```
public final class Doorbell: Sendable {
    /// How a press sounds: the settings' `selectedChime`, `speakerVolumeLevel`, `speakerMuted`,
    /// `externalChimeEnabled` and `externalChimeDuration`.
    public struct Chime: Sendable, Hashable {
        /// The built-in sound played on the speaker.
        public var sound = ChimeSound.standard
        /// The speaker's volume, 0–100.
        public var volume = 50
        /// Whether the speaker is muted (the chime does not play; the wired chime still rings).
        public var muted = false
        /// Whether a press rings the wired chime.
        public var externalEnabled = true
        /// How long the wired chime's line is held, ms (100–10000).
        public var externalDurationMs = 1_000
    }

    /// The button, as configured.
    public let input: DoorbellInput
    /// The wired chime's line, when one is configured.
    public let externalChimeLine: GPIOLineAddress?

    private struct Running {
        var button: DoorbellButton?
        var external: ExternalChime?
    }

    private let running = Mutex(Running())
    private let chime = Mutex(Chime())
    private let speakerLevel = Mutex<(@Sendable () -> (volume: Int, muted: Bool))?>(nil)
    private let sounds = Mutex<[ChimeSound: [Float]]>([:])
    private let player: ChimePlayer
    private let logger: Logger
    private let onPress: @Sendable (UInt64) -> Void

    /// A doorbell from the configuration's `doorbellButton` and `externalChime`; nothing is opened before
    /// ``start()``.
    /// - Parameters:
    ///   - speaker: where the chime plays (talkback's speaker).
    ///   - onPress: called once per press, on the button's thread, before the chime starts.
    /// - Throws: ``DoorbellError`` when either text cannot be read.
    public init(
        button: String, externalChime: String?, speaker: SpeakerOutput, logger: Logger,
        onPress: @escaping @Sendable (UInt64) -> Void
    ) throws {
        input = try DoorbellInput(parsing: button)
        externalChimeLine = try externalChime.map { text throws(DoorbellError) in try GPIOLineAddress(parsingExternalChime: text) }
        player = ChimePlayer(output: speaker, logger: logger)
        self.logger = logger
        self.onPress = onPress
    }

    /// The names of the built-in chime sounds (the settings' `installedChimeSounds`).
    public static var installedSounds: [String] { ChimeSound.allCases.map(\.rawValue) }

    /// Opens the wired chime's line (inactive) and the button, and starts watching the button.
    /// - Throws: ``DoorbellError`` when a line or the input device is missing or held by another program.
    public func start() throws {
        _ = samples(configuration.sound)
        let button = DoorbellButton(input: input, logger: logger) { [weak self] time in self?.pressed(at: time) }
        var external: ExternalChime?
        if let line = externalChimeLine {
            external = try ExternalChime(line: line, logger: logger)
        }
        do {
            try button.start()
        } catch {
            external?.stop()
            throw error
        }
        let previous = running.withLock { running -> Running in
            defer { running = Running(button: button, external: external) }
            return running
        }
        previous.button?.stop()
        previous.external?.stop()
    }

    /// Stops watching the button and releases the wired chime's line (inactive); a chime playing on the speaker
    /// plays to its end. Idempotent.
    public func stop() {
        let stopped = running.withLock { running -> Running in
            defer { running = Running() }
            return running
        }
        stopped.button?.stop()
        stopped.external?.stop()
    }

    /// Applies the settings: the chime's sound by name (an unknown name keeps the current one and is logged), the
    /// speaker's volume (0–100) and mute, and the wired chime's switch and hold time (ms, 100–10000).
    public func configure(chime name: String, volume: Int, muted: Bool, externalEnabled: Bool, externalDurationMs: Int) {
        let sound = ChimeSound(named: name)
        if sound == nil {
            logger.warning("Unknown chime sound; the current one stays", metadata: [
                "chime": "\(name)", "installed": "\(Self.installedSounds.joined(separator: ", "))",
            ])
        }
        // Made now, not at the first press (synthesizing takes a while on a small board).
        if let sound { _ = samples(sound) }
        chime.withLock { chime in
            if let sound { chime.sound = sound }
            chime.volume = min(max(volume, 0), 100)
            chime.muted = muted
            chime.externalEnabled = externalEnabled
            chime.externalDurationMs = min(max(externalDurationMs, 100), 10_000)
        }
    }

    /// The settings in force.
    public var configuration: Chime { chime.withLock { $0 } }

    /// Reads the speaker's volume and mute at each press (the settings' `speakerVolumeLevel` and `speakerMuted` as
    /// they are then), instead of the values ``configure(chime:volume:muted:externalEnabled:externalDurationMs:)``
    /// gave.
    public func followSpeaker(_ level: @escaping @Sendable () -> (volume: Int, muted: Bool)) {
        speakerLevel.withLock { $0 = level }
    }

    /// Presses seen since the last ``start()``.
    public var presses: Int { running.withLock { $0.button?.presses ?? 0 } }

    /// What the speaker's chime player did so far.
    public var chimeStatistics: ChimePlayer.Statistics { player.statistics }

    /// How many times the wired chime was rung since the last ``start()`` (0 without one).
    public var externalRings: Int { running.withLock { $0.external?.rings ?? 0 } }

    /// Waits until the chimes asked for so far have played (for tests and an orderly shutdown).
    public func waitForChimes() {
        player.waitUntilIdle()
    }

    /// On the button's thread: nothing here may take long (the ring and the chime go to queues of their own, and
    /// the sound was made when it was chosen), or the next press would wait.
    private func pressed(at time: UInt64) {
        onPress(time)
        var now = chime.withLock { $0 }
        if let level = speakerLevel.withLock({ $0 })?() {
            now.volume = min(max(level.volume, 0), 100)
            now.muted = level.muted
        }
        if now.externalEnabled, let external = running.withLock({ $0.external }) {
            external.ring(duration: .milliseconds(now.externalDurationMs))
        }
        player.play(samples(now.sound), volumePercent: now.volume, muted: now.muted)
    }

    /// The sound's samples, made once.
    private func samples(_ sound: ChimeSound) -> [Float] {
        if let made = sounds.withLock({ $0[sound] }) { return made }
        let made = sound.samples()
        sounds.withLock { $0[sound] = made }
        return made
    }
}
