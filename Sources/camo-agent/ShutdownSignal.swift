import CProcessSignals

/// `camo-agent run`'s shutdown signals: the handlers were installed before main() ran (CProcessSignals), so a
/// signal sent at any moment after exec is taken, not the default action.
enum ShutdownSignal {
    static var wait: @Sendable () -> Int32 {
        precondition(camo_signals_installed(), "camo-agent run expects its SIGTERM and SIGINT handlers installed since exec")
        return { camo_signals_wait() }
    }
}
