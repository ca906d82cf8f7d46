import Dispatch
import Glibc
import Synchronization

/// SIGINT and SIGTERM as an async value, for commands that stop gracefully (their default actions are turned off
/// from its creation). `@unchecked Sendable`: the sources are only set up in `init`; the state is in a Mutex.
public final class StopSignals: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let received = Mutex<(signal: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

    /// Takes SIGINT and SIGTERM from now on.
    public init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            source.setEventHandler { [weak self] in
                let waiter = self?.received.withLock { state -> CheckedContinuation<Int32, Never>? in
                    if state.signal == nil { state.signal = number }
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume(returning: number)
            }
            source.resume()
        }
    }

    /// The first signal (at once if it already came).
    public func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let already = received.withLock { state -> Int32? in
                if let signal = state.signal { return signal }
                state.waiter = continuation
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
    }
}
