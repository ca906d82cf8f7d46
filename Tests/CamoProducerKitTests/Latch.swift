import Synchronization

/// A flag one task sets and another checks or waits for (real time, bounded), for tests that run something in
/// the background and need to know whether it got somewhere.
final class Latch: Sendable {
    private let value = Mutex(false)

    /// Whether ``set()`` was called.
    var isSet: Bool { value.withLock { $0 } }

    /// Sets the flag (again is harmless).
    func set() { value.withLock { $0 = true } }

    /// Waits until the flag is set or `seconds` pass; returns whether it is set.
    func wait(seconds: Double = 10) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while !isSet, ContinuousClock.now < deadline {
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return isSet
    }
}
