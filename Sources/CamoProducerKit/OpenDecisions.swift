import CamoWire
import Foundation

/// The admission decisions that the delegate has not answered yet, each with the call that ends it (accept with nil,
/// or refuse with the error to send). Whatever ends a decision first (the delegate's answer, its deadline, the
/// connection closing, the controller stopping) takes it out with ``close(_:)``; the others find it gone.
///
/// A plain value, kept under the controller's lock and tested without sockets.
struct OpenDecisions {
    /// Ends a decision: nil accepts the studio, an error refuses it with that reason.
    typealias End = @Sendable (WireError?) -> Void

    private var ends: [UUID: End] = [:]

    /// How many decisions are open.
    var count: Int { ends.count }

    /// Opens decision `id`, ended by `end`.
    mutating func open(_ id: UUID, end: @escaping End) {
        ends[id] = end
    }

    /// Takes decision `id` out: true the first time, false once anything else has ended it.
    mutating func close(_ id: UUID) -> Bool {
        ends.removeValue(forKey: id) != nil
    }

    /// Every open decision's end, for the caller to call outside the lock when the controller stops: each end takes
    /// its own decision out with ``close(_:)`` and then completes it.
    func all() -> [End] {
        Array(ends.values)
    }
}
