import Foundation

/// The controller's state as its observers see it: the last state published and the streams that follow it.
///
/// A plain value, kept under the controller's lock (so observers see changes in the order they were decided) and
/// tested without a controller.
struct StateFeed {
    /// The last state published; nil while the controller is stopped.
    private(set) var current: CamoControllerState?
    private var observers: [UUID: AsyncStream<CamoControllerState?>.Continuation] = [:]

    /// How many streams follow the state.
    var observerCount: Int { observers.count }

    /// Records `new` and yields it to every observer; false (and nothing yielded) when it equals the last.
    mutating func publish(_ new: CamoControllerState?) -> Bool {
        guard new != current else { return false }
        current = new
        for observer in observers.values { observer.yield(new) }
        return true
    }

    /// Yields the current state to `continuation`; when `follows`, it also gets every later change until removed.
    mutating func add(_ id: UUID, _ continuation: AsyncStream<CamoControllerState?>.Continuation, follows: Bool) {
        continuation.yield(current)
        if follows { observers[id] = continuation }
    }

    /// Stops yielding to the stream `id` (it ended).
    mutating func remove(_ id: UUID) {
        observers.removeValue(forKey: id)
    }

    /// Removes every observer and returns them, to be finished outside the lock (the controller stopped).
    mutating func removeAll() -> [AsyncStream<CamoControllerState?>.Continuation] {
        defer { observers.removeAll() }
        return Array(observers.values)
    }
}
