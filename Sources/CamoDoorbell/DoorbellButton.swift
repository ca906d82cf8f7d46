import Foundation
import Logging
import Synchronization

/// Where a button's edges come from: a GPIO line, an input key, or a test's script.
protocol ButtonSource: AnyObject, Sendable {
    /// For messages: `gpiochip0:3 "doorbell"`, `/dev/input/event3 key 148`.
    var label: String { get }
    /// Whether the button is held now (a button held while watching begins is not a press).
    func isPressedNow() -> Bool
    /// Waits up to `timeout` ns for edges; none on timeout. Throws when the source went away.
    func waitEdges(timeout: UInt64) throws(DoorbellError) -> [ButtonEdge]
    /// Lets go of the line or device.
    func close()
}

extension GPIOLine: ButtonSource {
    func isPressedNow() -> Bool { (try? isActive()) ?? false }
}

extension EvdevKey: ButtonSource {
    var label: String { path + (keyCode.map { " key \($0)" } ?? " (any key)") + " \"\(deviceName)\"" }
    func isPressedNow() -> Bool { false }
}

/// The doorbell's button: a thread that watches the line or input key, debounces its edges
/// (``ButtonDebouncer``) and calls `onPress` once per press with the time of its first edge (CLOCK_MONOTONIC, ns,
/// the kernel's timestamp). A line or device that is missing at ``start()`` is an error; one that goes away while
/// watched is logged, and the thread opens it again once a second until it is back.
public final class DoorbellButton: Sendable {
    /// What the button is.
    public let input: DoorbellInput

    private struct State {
        var stopping = false
        var finished: DispatchSemaphore?
        var presses = 0
    }

    private let state = Mutex(State())
    private let debounce: UInt64
    private let logger: Logger
    private let onPress: @Sendable (UInt64) -> Void
    private let open: @Sendable () throws(DoorbellError) -> any ButtonSource
    /// How long the thread waits for an edge before it looks at the stop flag, ns.
    private let pollInterval: UInt64 = 100_000_000
    /// How often a line or device that went away is looked for again, ns.
    let reopenInterval: UInt64

    /// A button on `input`; nothing is opened before ``start()``.
    /// - Parameters:
    ///   - debounce: how long the contact must stay open before a release counts (see ``ButtonDebouncer``).
    ///   - onPress: called on the button's thread once per press, with the press's time (CLOCK_MONOTONIC, ns).
    public convenience init(
        input: DoorbellInput, debounce: Duration = .milliseconds(30), logger: Logger,
        onPress: @escaping @Sendable (UInt64) -> Void
    ) {
        let consumer = "camo-agent doorbell"
        self.init(input: input, debounce: debounce, reopenInterval: 1_000_000_000, logger: logger, onPress: onPress) { () throws(DoorbellError) -> any ButtonSource in
            switch input {
            case .gpio(let address, let activeLow): try GPIOLine.input(address, activeLow: activeLow, consumer: consumer)
            case .evdev(let path, let keyCode): try EvdevKey(path: path, keyCode: keyCode)
            }
        }
    }

    /// A button whose edges come from `open`'s source (tests).
    init(
        input: DoorbellInput, debounce: Duration, reopenInterval: UInt64, logger: Logger,
        onPress: @escaping @Sendable (UInt64) -> Void, open: @escaping @Sendable () throws(DoorbellError) -> any ButtonSource
    ) {
        self.input = input
        self.debounce = UInt64(debounce.components.seconds) * 1_000_000_000 + UInt64(debounce.components.attoseconds / 1_000_000_000)
        self.reopenInterval = reopenInterval
        self.logger = logger
        self.onPress = onPress
        self.open = open
    }

    /// The presses reported so far.
    public var presses: Int { state.withLock { $0.presses } }

    /// Opens the line or input device and starts watching it.
    /// - Throws: ``DoorbellError`` when it is missing, busy or not a button; ``DoorbellError/alreadyStarted``.
    public func start() throws(DoorbellError) {
        let finished = DispatchSemaphore(value: 0)
        try state.withLock { (state) throws(DoorbellError) in
            guard state.finished == nil else { throw .alreadyStarted }
            state.finished = finished
            state.stopping = false
        }
        let source: any ButtonSource
        do {
            source = try open()
        } catch {
            state.withLock { $0.finished = nil }
            throw error
        }
        logger.info("Watching the doorbell button", metadata: ["button": "\(source.label)"])
        let thread = Thread { [self] in
            watch(source)
            finished.signal()
        }
        thread.name = "camo-doorbell"
        thread.start()
    }

    /// Stops watching and waits for the thread to end (the line or device is closed then); idempotent.
    public func stop() {
        let finished = state.withLock { state -> DispatchSemaphore? in
            state.stopping = true
            defer { state.finished = nil }
            return state.finished
        }
        finished?.wait()
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// The watching thread.
    private func watch(_ first: any ButtonSource) {
        var source: (any ButtonSource)? = first
        var debouncer = ButtonDebouncer(debounce: debounce, pressedAtStart: first.isPressedNow(), now: MonotonicTime.now())
        var label = first.label
        var nextOpen: UInt64 = 0
        while !stopping {
            guard let current = source else {
                let now = MonotonicTime.now()
                if now < nextOpen {
                    Thread.sleep(forTimeInterval: Double(min(pollInterval, nextOpen - now)) / 1e9)
                    continue
                }
                nextOpen = now + reopenInterval
                if let reopened = try? open() {
                    source = reopened
                    label = reopened.label
                    debouncer = ButtonDebouncer(debounce: debounce, pressedAtStart: reopened.isPressedNow(), now: MonotonicTime.now())
                    logger.notice("The doorbell button is back", metadata: ["button": "\(label)"])
                }
                continue
            }
            let now = MonotonicTime.now()
            var timeout = pollInterval
            if let deadline = debouncer.deadline { timeout = min(timeout, deadline > now ? deadline - now : 0) }
            let edges: [ButtonEdge]
            do {
                edges = try current.waitEdges(timeout: timeout)
            } catch {
                logger.error(
                    "The doorbell button went away; presses are not seen until it is back (looked for once a second)",
                    metadata: ["button": "\(label)", "error": "\(error)"])
                current.close()
                source = nil
                nextOpen = MonotonicTime.now() + reopenInterval
                continue
            }
            var events: [ButtonEvent] = []
            for edge in edges { events += debouncer.handle(edge) }
            if edges.isEmpty, let event = debouncer.settle(now: MonotonicTime.now()) { events.append(event) }
            for event in events { report(event, label: label) }
        }
        source?.close()
    }

    private func report(_ event: ButtonEvent, label: String) {
        switch event {
        case .pressed(let at):
            state.withLock { $0.presses += 1 }
            logger.info("Doorbell pressed", metadata: ["button": "\(label)"])
            onPress(at)
        case .released:
            logger.debug("Doorbell released", metadata: ["button": "\(label)", "heldMs": "\(event.held / 1_000_000)"])
        }
    }
}
