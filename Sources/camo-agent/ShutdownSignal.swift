import Dispatch
import Foundation

/// Waits for SIGINT or SIGTERM and returns its name. A second signal during shutdown exits at once.
enum ShutdownSignal {
    static func wait() async -> String {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        return await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let queue = DispatchQueue(label: "camo-agent.signals")
            let fired = SignalLatch(continuation)
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { fired.fire(name) }
                source.resume()
                fired.keep(source)
            }
        }
    }
}

/// Resumes the continuation once; keeps the signal sources alive.
/// `@unchecked Sendable`: every stored property is only touched under `lock`.
private final class SignalLatch: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<String, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<String, Never>) {
        self.continuation = continuation
    }

    func keep(_ source: any DispatchSourceSignal) {
        lock.withLock { sources.append(source) }
    }

    private var fired = false

    func fire(_ name: String) {
        let (continuation, again) = lock.withLock {
            let continuation = self.continuation
            self.continuation = nil
            defer { fired = true }
            return (continuation, fired)
        }
        if again {
            // A second signal while shutting down: the user wants out now.
            _exit(130)
        }
        continuation?.resume(returning: name)
    }
}
