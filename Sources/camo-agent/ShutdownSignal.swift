import CProcessSignals
import Foundation

/// Turns SIGTERM and SIGINT into a call: the first starts a graceful shutdown, a second one exits at once (130).
/// The handlers were installed before main() ran (CProcessSignals), so a signal sent at any moment after exec is
/// taken, not the default action.
enum ShutdownSignal {
    static func watch(_ shutdown: @escaping @Sendable (String) -> Void) {
        precondition(camo_signals_installed(), "camo-agent run expects its SIGTERM and SIGINT handlers installed since exec")
        let thread = Thread {
            let first = camo_signals_wait()
            shutdown(first == SIGINT ? "SIGINT" : "SIGTERM")
            _ = camo_signals_wait()
            // A second signal while shutting down: the user wants out now.
            _exit(130)
        }
        thread.name = "camo-agent.signals"
        thread.start()
    }
}
