import CamoCapture
import CamoDiscovery
import CamoEvents
import CamoMedia
import CamoProducerKit
import CamoQR
import CamoRecording
import CamoStorage
import CamoUSB
import CamoWire
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Everything `camo-agent run` runs, built from one ``AgentConfiguration``: the camera and microphone (or the
/// synthetic pattern and tone), the ``CamoController`` with its advertiser, paired-device list and pairing, the
/// control socket, `agent.json`, the USB link watch, and systemd's readiness and watchdog notifications.
///
/// It is a swift-service-lifecycle `Service`: run it in a `ServiceGroup` (or call ``run()`` and cancel the
/// task). A graceful shutdown or cancellation at any moment, during startup too, ends every studio's session
/// with a goodbye, withdraws the advertisements, and removes `agent.json` and the control socket.
///
/// ```swift
/// let service = AgentService(configuration: configuration, logger: logger)
/// let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public final class AgentService: Service, Sendable {
    /// What the service reports while it starts.
    public enum Event: Sendable, Equatable {
        /// The controller listens on this TCP port.
        case listening(port: Int)
        /// Started: advertised through avahi-daemon, or not (the text says why and how to connect instead).
        case ready(discovery: DiscoveryOutcome)
        /// Live view started: the page and RTSP addresses, or why each is off.
        case live(LiveStatus)
    }

    /// Whether studios can find the agent by mDNS.
    public enum DiscoveryOutcome: Sendable, Equatable {
        /// `_camo._tcp` is announced under this name.
        case advertised(name: String)
        /// Not announced: why, and the command that connects by address instead.
        case off(reason: String, connect: String)
    }

    /// The configuration the service was built from.
    public let configuration: AgentConfiguration
    private let logger: Logger
    private let clock: any MonotonicClock
    private let events: @Sendable (Event) -> Void
    private let notifier: SystemdNotifier
    /// How long to wait for avahi-daemon to announce the service before reporting readiness without it.
    private let advertiseWait: Duration
    private let running = Mutex<CamoController?>(nil)

    /// A service for `configuration`.
    /// - Parameters:
    ///   - events: told when the controller listens and when the agent is ready (the executable prints them).
    ///   - notifier: systemd's notification socket (from the environment by default; does nothing outside systemd).
    public init(
        configuration: AgentConfiguration, logger: Logger, clock: any MonotonicClock = SystemMonotonicClock(),
        notifier: SystemdNotifier = SystemdNotifier(), advertiseWait: Duration = .seconds(3),
        events: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.notifier = notifier
        self.advertiseWait = advertiseWait
        self.events = events
    }

    /// The controller while the service runs (nil before it listens and after it stopped).
    public var controller: CamoController? { running.withLock { $0 } }

    /// Starts everything, runs until a graceful shutdown or cancellation, then stops everything in reverse.
    /// - Throws: ``AgentStartupError`` or ``AgentConfigurationError`` when something cannot start; what had
    ///   started is stopped and its files removed first.
    public func run() async throws {
        let shutdown = ShutdownLatch()
        try await withGracefulShutdownHandler {
            try await withTaskCancellationHandler {
                try await runUntil(shutdown)
            } onCancel: {
                shutdown.fire()
            }
        } onGracefulShutdown: {
            shutdown.fire()
        }
    }

    private func runUntil(_ shutdown: ShutdownLatch) async throws {
        try configuration.validate()
        var teardown = Teardown()
        do {
            try await start(shutdown, &teardown)
        } catch {
            notifier.notify("STOPPING=1\nSTATUS=Could not start: \(error)")
            await teardown.run()
            throw error
        }
        await shutdown.wait()
        logger.info("Shutting down")
        notifier.notify("STOPPING=1\nSTATUS=Shutting down")
        await teardown.run()
        logger.info("Stopped")
    }

    private func start(_ shutdown: ShutdownLatch, _ teardown: inout Teardown) async throws {
        let configuration = self.configuration
        let stateDir = configuration.stateDir
        do {
            try AtomicFile.makeDirectory(stateDir)
        } catch {
            throw AgentStartupError(
                step: "creating the state directory", path: stateDir, reason: "\(error)",
                remedy: "Create it for this user, or pass another directory with --state-dir (config key stateDir).")
        }
        let lock: StateDirectoryLock
        do {
            lock = try StateDirectoryLock(directory: stateDir)
        } catch let busy as StateDirectoryBusy {
            throw AgentStartupError(
                step: "locking the state directory", path: stateDir, reason: "another agent holds it",
                remedy: busy.description + " `camo-agent status` shows the one running; --state-dir (config key stateDir) picks another.")
        } catch {
            throw AgentStartupError(
                step: "locking the state directory", path: stateDir, reason: "\(error)",
                remedy: "The state directory must be writable by this user on a local file system.")
        }
        teardown.add { withExtendedLifetime(lock) {} }
        let agentName = configuration.name ?? ProcessInfo.processInfo.hostName
        let identity: AgentIdentity
        do {
            identity = try AgentIdentity.loadOrCreate(in: stateDir, name: agentName, logger: logger)
        } catch {
            throw AgentStartupError(
                step: "loading the agent's key", path: stateDir + "/identity.json", reason: "\(error)",
                remedy: "Check the file's owner and permissions (0600, this user).")
        }
        if shutdown.isFired { return }

        let sources: SourceSelection.Choice
        do {
            sources = try SourceSelection.choose(
                camera: configuration.camera, format: configuration.cameraFormat.flatMap(FourCC.init),
                framesPerSecond: configuration.cameraFps, dumpRaw: configuration.dumpRaw, microphone: configuration.microphone,
                microphoneOptions: SourceSelection.MicrophoneOptions(
                    format: configuration.microphoneFormat.flatMap(MicrophoneSampleFormat.init(name:)),
                    channels: configuration.microphoneChannels, bufferMilliseconds: configuration.microphoneBufferMs),
                logger: logger)
        } catch {
            throw AgentStartupError(
                step: "opening the camera and microphone (camera \(configuration.camera), microphone \(configuration.microphone))",
                reason: "\(error)",
                remedy: "`camo-agent devices` lists what this machine has; --camera and --microphone (config keys camera, "
                    + "microphone) name a device, `auto` picks one, `test` streams the synthetic pattern or tone; --camera-format "
                    + "and --microphone-format (cameraFormat, microphoneFormat) pick a format, or leave it to the agent.")
        }
        if shutdown.isFired { return }

        let cameraName = SharedText(sources.cameraName)
        var controllerConfiguration = ControllerConfiguration(
            identity: identity,
            description: AgentDescription(
                model: "Linux \(SourceSelection.machine())", softwareVersion: AgentVersion.software,
                camera: sources.cameraName, microphone: sources.microphoneName),
            admission: AdmissionPolicy(allowUnpaired: configuration.allowUnpaired, usbTrust: configuration.usbTrust))
        controllerConfiguration.port = configuration.port
        controllerConfiguration.pairingPort = configuration.pairingPort
        controllerConfiguration.defaultJPEGQuality = configuration.jpegQuality
        controllerConfiguration.stateDirectory = stateDir
        controllerConfiguration.h264 = try H264Options.codec(for: configuration, logger: logger)
        let pairedDevices: PairedDeviceStore
        do {
            // This service holds the state directory's lock already, so it opens the list itself.
            pairedDevices = try PairedDeviceStore(directory: stateDir, logger: logger)
        } catch {
            throw AgentStartupError(
                step: "reading the paired-device list", path: stateDir + "/paired.json", reason: "\(error)",
                remedy: "Check the file's owner and permissions (0600, this user).")
        }
        let controller = CamoController(
            configuration: controllerConfiguration, logger: logger, clock: clock, pairedDevices: pairedDevices,
            advertiser: configuration.mdns ? .avahi : .off, settingsDirectory: stateDir)
        if configuration.mute { controller.muteMicrophone(saving: false) }  // for this run: the saved setting stays
        controller.addSettingsProvider(PowerSourceSettings())
        var statusLight: LightSettings?
        if configuration.nightVisionLed != nil || configuration.statusLed != nil {
            let lights: LightSettings
            do {
                lights = try LightSettings(
                    nightVisionLed: configuration.nightVisionLed, statusLed: configuration.statusLed,
                    saved: { controller.savedSetting($0) }, camera: { [weak controller] in controller?.camera }, logger: logger,
                    changed: { [weak controller] names in controller?.settingsChanged(names, by: "night vision auto") })
            } catch {
                throw AgentStartupError(
                    step: "opening the LEDs for night vision and the status light", reason: "\(error)",
                    remedy: "Name an LED under /sys/class/leds, or camera:CONTROL for a control of the camera, with --night-vision-led and --status-led (config keys nightVisionLed, statusLed), or leave them out.")
            }
            controller.addSettingsProvider(lights)
            let clock = SystemMonotonicClock()
            controller.observeFrames { frame in lights.observe(frame, now: clock.now.nanoseconds) }
            statusLight = lights
        }
        // The event detectors (motion, sound, alarms, the doorbell): their settings in the model from the start.
        let eventMonitor = configuration.events
            ? EventMonitor(engine: EventEngine(doorbellButtonConfigured: configuration.doorbellButton != nil), clock: clock, logger: logger)
            : nil
        if let eventMonitor {
            controller.addSettingsProvider(EventSettingsProvider(monitor: eventMonitor, saved: { controller.savedSetting($0) }))
            // Studios that ask (protocol 1.3) get every notice, and the kept ones first when they ask for them.
            controller.setEventHistory { eventMonitor.history.map(WireEvent.init) }
            eventMonitor.addSink { [weak controller] notice in controller?.publishEvent(WireEvent(notice)) }
        }
        // The doorbell: presses become events, the chime plays on the speaker at its settings' volume.
        var doorbell: Doorbell?
        if let button = configuration.doorbellButton {
            do {
                let bell = try Doorbell(
                    button: button, externalChime: configuration.externalChime, speaker: SpeakerChoice.output(configuration.speaker),
                    logger: logger
                ) { time in eventMonitor?.doorbellPressed(at: time) }
                bell.followSpeaker {
                    typealias N = SettingsCatalog.Name
                    var level = (volume: 50, muted: false)
                    if case .int(let volume)? = controller.savedSetting(N.speakerVolumeLevel) { level.volume = volume }
                    if case .bool(let muted)? = controller.savedSetting(N.speakerMuted) { level.muted = muted }
                    return level
                }
                controller.addSettingsProvider(DoorbellSettings(externalChime: configuration.externalChime, saved: { controller.savedSetting($0) }) { chime in
                    bell.configure(
                        chime: chime.selected, volume: 50, muted: false, externalEnabled: chime.externalEnabled,
                        externalDurationMs: chime.externalDurationMs)
                })
                try bell.start()
                doorbell = bell
            } catch {
                throw AgentStartupError(
                    step: "opening the doorbell button \(button)", reason: "\(error)",
                    remedy: "Check --doorbell-button and --external-chime (config keys doorbellButton, externalChime): `gpioinfo` lists GPIO lines, /dev/input/by-path the input devices; or leave them out.")
            }
        }
        if let doorbell { teardown.add { doorbell.stop() } }
        do {
            try await controller.start()
        } catch let error as CamoControllerError {
            guard case .cannotListen(let host, let port, let underlying) = error else { throw error }
            throw AgentStartupError(
                step: "listening for studios on \(host) port \(port)", reason: underlying,
                remedy: "Choose another port with --port (config key port), or 0 for any free port.")
        }
        if let statusLight {
            // The status light follows the sessions (a stream of states only runs once the controller does).
            let states = controller.stateUpdates()
            let follower = Task { [weak controller] in
                for await _ in states {
                    guard let controller else { return }
                    statusLight.setStreaming(!controller.connections.isEmpty && !controller.isPaused)
                }
            }
            teardown.add { follower.cancel() }
        }
        teardown.add { await controller.stop() }
        if let eventMonitor {
            eventMonitor.start(controller: controller)
            teardown.add { eventMonitor.stop() }
            if let url = configuration.webhookURL {
                let webhook = try EventWebhookSink.start(
                    url: url, configured: configuration.webhookSecret, stateDirectory: stateDir, monitor: eventMonitor, clock: clock,
                    logger: logger)
                teardown.add { await webhook.stop() }
            }
        }
        // Recordings: clips of the shared rendition as the recording mode says (liveView, keeping nothing, at first).
        var recorder: ClipRecorder?
        var transports: PushTransports?
        if configuration.recordings {
            let directory = configuration.recordingsDir ?? stateDir + "/recordings"
            let store: ClipStore
            do {
                store = try ClipStore(directory: directory, capBytes: Int64(configuration.recordingsMaxMb) << 20, logger: logger)
            } catch {
                throw AgentStartupError(
                    step: "opening the recordings", path: directory, reason: "\(error)",
                    remedy: "Choose another place with --recordings-dir (config key recordingsDir), or turn them off with --no-recordings.")
            }
            let clipRecorder = ClipRecorder(
                controller: controller, store: store,
                request: LiveFeedRequest(size: configuration.liveVideoSize, bitrate: configuration.liveBitrateKbps * 1_000),
                options: RecordingOptions(), clock: clock, logger: logger)
            let hasH264 = controllerConfiguration.h264 != nil
            controller.addSettingsProvider(RecordingSettings(recorder: clipRecorder, saved: { controller.savedSetting($0) }) {
                RecordingMode.availability(
                    hasH264: hasH264, eventsRunning: eventMonitor != nil,
                    anyTriggerEnabled: !(eventMonitor?.settings.enabledTriggers.isEmpty ?? true))
            })
            let pushes: PushTransports
            do {
                pushes = try PushTransports(stateDirectory: stateDir, clock: clock, logger: logger)
            } catch {
                throw AgentStartupError(
                    step: "reading the push transports", path: stateDir + "/transports.json", reason: "\(error)",
                    remedy: "Check the file's owner and permissions, or move it aside to start with none.")
            }
            clipRecorder.onKept { record, path in pushes.push(record, path: path) }
            // Paired studios list and fetch them (protocol 1.4: camo-studio clips).
            controller.setClipLibrary(StoreClipLibrary(store: store))
            clipRecorder.start(events: eventMonitor)
            teardown.add {
                await clipRecorder.stop()
                await pushes.stop()
            }
            recorder = clipRecorder
            transports = pushes
        }
        running.withLock { $0 = controller }
        teardown.add { [self] in running.withLock { $0 = nil } }
        // Safe: a started controller has a port.
        let port = controller.port!
        events(.listening(port: port))
        if shutdown.isFired { return }

        // Live view (the page, WHEP, RTSP) starts after the control socket; the status shows it from then on.
        let liveView = Mutex<LiveView?>(nil)
        let socketPath = AgentPaths.controlSocket(stateDirectory: stateDir, runtimeDirectory: configuration.runtimeDir)
        let control = try await ControlServer.start(
            path: socketPath, logger: logger,
            handler: AgentControl.handler(
                controller: controller, camera: { cameraName.value }, microphone: sources.microphoneName,
                microphoneDetail: { sources.microphoneStatus },
                rescan: {
                    if case .camera(let source, _) = sources.video { source.rescanNow() }
                },
                scanDecoder: { QRScanner().scan($0) },
                live: { liveView.withLock { $0 }?.status }, events: { eventMonitor },
                recordings: { [recorder] in recorder.map { ($0.store.list(), $0.status) } }, transports: transports))
        teardown.add { await control.stop() }

        let agentFile = AgentPaths.agentFile(stateDirectory: stateDir)
        do {
            try AgentFile(port: port, pid: getpid(), name: agentName, agentId: identity.id, controlSocket: socketPath).write(to: agentFile)
        } catch {
            throw AgentStartupError(
                step: "writing agent.json", path: agentFile, reason: "\(error)", remedy: "The state directory must be writable by this user.")
        }
        teardown.add { try? FileManager.default.removeItem(atPath: agentFile) }

        // The agent's end of a USB cable: nudges the kernel's f_ncm when it strands outgoing frames (see
        // GadgetStallDetector); does nothing without a gadget interface.
        let usbLinks = GadgetLinkWatch(logger: logger)
        usbLinks.start()
        teardown.add { usbLinks.stop() }

        if configuration.web || configuration.rtsp {
            let microphoneName = sources.microphoneName
            let live = await LiveView.start(
                configuration: configuration, controller: controller, clock: clock,
                status: { controller.status(camera: cameraName.value, microphone: microphoneName, microphoneDetail: sources.microphoneStatus) },
                events: eventMonitor, recordings: recorder, logger: logger)
            liveView.withLock { $0 = live }
            events(.live(live.status))
            teardown.add {
                liveView.withLock { $0 = nil }
                await live.stop()
            }
            if shutdown.isFired { return }
        }

        let heartbeat = CaptureHeartbeat(clock: clock)
        let capture = Task { [clock, logger] in
            await SourceSelection.run(sources, controller: controller, clock: clock, cameraName: cameraName, heartbeat: heartbeat, logger: logger)
        }
        teardown.add {
            capture.cancel()
            await capture.value
        }
        if shutdown.isFired { return }

        let discovery = await discoveryOutcome(controller: controller, port: port, shutdown: shutdown)
        if shutdown.isFired { return }
        events(.ready(discovery: discovery))
        switch discovery {
        case .advertised(let name):
            logger.info("Ready", metadata: ["port": "\(port)", "advertisedAs": "\(name)"])
            notifier.notify("READY=1\nSTATUS=Listening on port \(port), advertised as \(name)")
        case .off(let reason, let connect):
            logger.notice("Ready without discovery", metadata: ["port": "\(port)", "reason": "\(reason)", "connect": "\(connect)"])
            notifier.notify("READY=1\nSTATUS=Listening on port \(port); discovery off: \(reason)")
        }

        if let interval = notifier.watchdogInterval {
            let watchdog = Task { [notifier, clock, logger] in
                await Self.feedWatchdog(notifier: notifier, interval: interval, heartbeat: heartbeat, controller: controller, clock: clock, logger: logger)
            }
            teardown.add {
                watchdog.cancel()
                await watchdog.value
            }
        }
    }

    /// Waits (up to `advertiseWait`) for avahi-daemon to announce `_camo._tcp`, and says how it went.
    private func discoveryOutcome(controller: CamoController, port: Int, shutdown: ShutdownLatch) async -> DiscoveryOutcome {
        let connect = "camo-studio record --connect \(ProcessInfo.processInfo.hostName):\(port)"
        guard configuration.mdns else {
            return .off(reason: "mDNS publishing is turned off (mdns false / --no-mdns)", connect: connect)
        }
        guard let avahi = controller.advertiser as? AvahiAdvertiser else {
            return .advertised(name: controller.configuration.identity.name)
        }
        let publisher = avahi.publisher
        let established = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in publisher.statusUpdates() where status == .established { return true }
                return false
            }
            group.addTask { [advertiseWait, clock] in
                // Until the wait is over on the service's clock or a shutdown began, whichever is first (in steps:
                // the latch's wait does not end on cancellation, so it cannot be a child here).
                let step: UInt64 = 50_000_000
                let (seconds, attoseconds) = advertiseWait.components
                let end = clock.now.nanoseconds + UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
                while clock.now.nanoseconds < end, !shutdown.isFired, !Task.isCancelled {
                    try? await clock.sleep(until: min(end, clock.now.nanoseconds + step))
                }
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if established { return .advertised(name: publisher.currentName) }
        let reason: String
        switch publisher.status {
        case .connecting, .daemonGone: reason = "avahi-daemon is not running (it will be used as soon as it starts)"
        case .noSystemBus: reason = "the D-Bus system bus is not running, so avahi-daemon cannot be reached"
        case .failed(let why): reason = "avahi-daemon refused the service: \(why)"
        case .stopped: reason = "the Avahi client could not start"
        case .registering, .renamed, .established: reason = "avahi-daemon has not announced the service yet"
        }
        return .off(reason: reason, connect: connect)
    }

    /// Feeds systemd's watchdog every half interval while capture is alive (``CaptureWatchdog``).
    private static func feedWatchdog(
        notifier: SystemdNotifier, interval: Duration, heartbeat: CaptureHeartbeat, controller: CamoController, clock: any MonotonicClock,
        logger: Logger
    ) async {
        let intervalNanos = UInt64(interval.components.seconds) * 1_000_000_000 + UInt64(interval.components.attoseconds / 1_000_000_000)
        var watchdog = CaptureWatchdog(intervalNanos: intervalNanos)
        while !Task.isCancelled {
            switch watchdog.decide(now: clock.now.nanoseconds, lastFrame: heartbeat.lastFrame, cameraLost: controller.isCameraLost) {
            case .feed:
                notifier.notify("WATCHDOG=1")
            case .feedAgain:
                notifier.notify("WATCHDOG=1")
                logger.notice("Capture delivers frames again; feeding the watchdog")
            case .stall:
                logger.error(
                    "Capture has delivered no frame for a watchdog interval; no longer feeding systemd's watchdog",
                    metadata: ["interval": "\(interval)"])
            case .stillStalled:
                break
            }
            do {
                try await clock.sleep(until: clock.now.nanoseconds + intervalNanos / 2)
            } catch {
                return
            }
        }
    }
}

/// Fired once, by a graceful shutdown or cancellation; startup checks it between steps.
final class ShutdownLatch: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var isFired: Bool { state.withLock { $0.fired } }

    func fire() {
        let waiters = state.withLock { state in
            defer { state.fired = true; state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { state in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}

/// What to undo, in reverse order of starting.
struct Teardown {
    private var steps: [@Sendable () async -> Void] = []

    mutating func add(_ step: @escaping @Sendable () async -> Void) {
        steps.append(step)
    }

    func run() async {
        for step in steps.reversed() { await step() }
    }
}

/// A string several tasks read and one updates (the camera's name changes when another camera is plugged in).
final class SharedText: Sendable {
    private let text: Mutex<String>
    init(_ text: String) { self.text = Mutex(text) }
    var value: String { text.withLock { $0 } }
    func set(_ value: String) { text.withLock { $0 = value } }
}

/// This build's version.
public enum AgentVersion {
    /// The agent's software version.
    public static let software = "0.4.0"
    /// The CPU architecture this binary was built for (what `uname -m` says on that machine).
    public static var machine: String { SourceSelection.machine() }
}
