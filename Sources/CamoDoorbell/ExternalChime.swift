import Dispatch
import Logging
import Synchronization

/// A line that drives a wired chime (a relay or a chime's trigger input).
protocol ChimeOutput: AnyObject, Sendable {
    /// For messages.
    var label: String { get }
    /// Drives the line active (ringing) or inactive.
    func set(active: Bool) throws(DoorbellError)
    /// Lets go of the line.
    func close()
}

extension GPIOLine: ChimeOutput {}

/// The wired (external) chime: a GPIO output line held active for a duration on each ring. A ring while it is
/// held restarts the hold (the line stays active until `duration` after the last ring). ``stop()`` drives it
/// inactive and releases it. A line that fails is logged and counted, never thrown at the ringer.
public final class ExternalChime: Sendable {
    /// For messages: `gpiochip0:1 "chime"`.
    public let label: String

    /// Only touched on `queue`.
    private final class Hold: @unchecked Sendable {  // Confined to the chime's serial queue (see above).
        var timer: DispatchSourceTimer?
        var active = false
        var closed = false
        /// Counts the rings, so a timer of an earlier ring that fires anyway does nothing.
        var generation = 0
    }

    private let output: any ChimeOutput
    private let logger: Logger
    private let queue = DispatchQueue(label: "camo.doorbell.chime")
    private let hold = Hold()
    private let counts = Mutex((rings: 0, failures: 0))

    /// Requests `line` as an output, inactive.
    /// - Throws: ``DoorbellError`` when the line is missing or held by another program.
    public convenience init(line: GPIOLineAddress, logger: Logger) throws(DoorbellError) {
        let gpio = try GPIOLine.output(line, consumer: "camo-agent chime", active: false)
        self.init(output: gpio, logger: logger)
    }

    /// A chime on `output` (tests).
    init(output: any ChimeOutput, logger: Logger) {
        self.output = output
        self.label = output.label
        self.logger = logger
    }

    /// Rings: the line goes active now (or stays active) and inactive `duration` after this ring.
    public func ring(duration: Duration) {
        counts.withLock { $0.rings += 1 }
        let nanoseconds = Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
        queue.async { [self] in
            guard !hold.closed else { return }
            hold.timer?.cancel()
            hold.timer = nil
            if !hold.active {
                guard drive(true) else { return }
                hold.active = true
            }
            hold.generation += 1
            let generation = hold.generation
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .nanoseconds(max(0, nanoseconds)), leeway: .milliseconds(1))
            timer.setEventHandler { [self] in
                guard hold.generation == generation else { return }
                hold.timer?.cancel()
                hold.timer = nil
                if hold.active, !hold.closed {
                    hold.active = false
                    _ = drive(false)
                }
            }
            hold.timer = timer
            timer.resume()
        }
    }

    /// The rings asked for so far.
    public var rings: Int { counts.withLock { $0.rings } }
    /// How many times driving the line failed.
    public var failures: Int { counts.withLock { $0.failures } }

    /// Drives the line inactive and releases it; later rings do nothing. Idempotent.
    public func stop() {
        queue.sync {
            guard !hold.closed else { return }
            hold.timer?.cancel()
            hold.timer = nil
            if hold.active { _ = drive(false) }
            hold.active = false
            hold.closed = true
            output.close()
        }
    }

    /// Waits until every ring asked for so far has been applied (for tests).
    func sync() { queue.sync {} }

    private func drive(_ active: Bool) -> Bool {
        do {
            try output.set(active: active)
            return true
        } catch {
            counts.withLock { $0.failures += 1 }
            logger.error("The external chime's line could not be \(active ? "driven active" : "released")", metadata: ["line": "\(label)", "error": "\(error)"])
            return false
        }
    }
}
