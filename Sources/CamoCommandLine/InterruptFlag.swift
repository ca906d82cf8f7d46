import Dispatch
import Foundation
import Synchronization

/// Ctrl-C remembered instead of ending the program, so a command can undo what it started first (`camo-agent
/// pair` cancels the pairing on the agent).
///
/// `@unchecked Sendable`: `flag` is atomic and `source` is only kept alive, never touched after init.
public final class InterruptFlag: @unchecked Sendable {
    private let flag = Atomic<Bool>(false)
    private var source: (any DispatchSourceSignal)?

    /// Whether Ctrl-C (SIGINT) came since ``install()``.
    public var fired: Bool { flag.load(ordering: .relaxed) }

    private init() {}

    /// From now on SIGINT sets the flag (and no longer ends the process).
    public static func install() -> InterruptFlag {
        let interrupt = InterruptFlag()
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [interrupt] in interrupt.flag.store(true, ordering: .relaxed) }
        source.resume()
        interrupt.source = source
        return interrupt
    }
}

/// Turns shutdown signals into calls, on a thread of its own: the first starts a graceful shutdown, a second one
/// exits at once (status 130).
public enum ShutdownSignals {
    /// Watches with `wait`, a blocking call that returns the next signal's number (camo-agent's comes from a
    /// handler installed before `main`).
    public static func watch(wait: @escaping @Sendable () -> Int32, shutdown: @escaping @Sendable (String) -> Void) {
        let thread = Thread {
            let first = wait()
            shutdown(first == SIGINT ? "SIGINT" : "SIGTERM")
            _ = wait()
            // A second signal while shutting down: the user wants out now.
            _exit(130)
        }
        thread.name = "shutdown-signals"
        thread.start()
    }
}
