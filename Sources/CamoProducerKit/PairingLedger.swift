/// The controller's pairing bookkeeping: the attempt in progress (scanning for a code, or a window open), how
/// attempts are numbered, and how the last ones ended.
///
/// A plain value with no I/O: the controller keeps it under its lock and does the side effects (listener, timer,
/// advertisement, completions) with what these calls return; tests drive it alone.
struct PairingLedger: Sendable {
    /// How many finished attempts ``status(attempt:at:)`` still knows.
    static let historyLimit = 8

    /// The attempt in progress.
    var current: PairingAttempt?
    /// How the last attempts ended, the most recent last.
    private(set) var finished: [PairingStatus] = []
    /// The number of the last attempt begun (the first is 1).
    private(set) var lastAttempt = 0

    /// Begins attempt `lastAttempt + 1`, set up by `configure`; refused while another is in progress.
    mutating func begin(_ configure: (inout PairingAttempt) -> Void) -> Result<PairingAttempt, PairingFailure> {
        if let current {
            return .failure(.alreadyOpen(studioName: current.window?.payload.studioName ?? "a scanned code"))
        }
        lastAttempt += 1
        var attempt = PairingAttempt(id: lastAttempt)
        configure(&attempt)
        current = attempt
        return .success(attempt)
    }

    /// The attempt in progress when it is attempt `id`.
    func attempt(_ id: Int) -> PairingAttempt? {
        current?.id == id ? current : nil
    }

    /// Ends attempt `id` with `result` and remembers how it ended. The first ending wins: nil when `id` is not in
    /// progress, or when its window already decided (a timeout racing a studio), unless `alreadyDecided` says the
    /// window's own outcome is this ending.
    /// - Returns: the attempt that ended, for its side effects (listener, timer, advertisement, completions).
    mutating func finish(attempt id: Int, _ result: Result<PairedStudio, PairingFailure>, at now: UInt64, alreadyDecided: Bool = false) -> PairingAttempt? {
        guard var attempt = current, attempt.id == id else { return nil }
        if var window = attempt.window, !alreadyDecided {
            guard window.finish(result) else { return nil }
            attempt.window = window
        }
        var status = attempt.status(at: now)
        status.remainingSeconds = nil
        status.port = nil
        switch result {
        case .success(let studio):
            status.phase = .paired
            status.studioId = studio.id
            status.studioName = studio.name
        case .failure(let failure):
            status.phase = .failed
            status.failureCode = failure.code
            status.failure = failure.description
        }
        current = nil
        finished.append(status)
        if finished.count > Self.historyLimit { finished.removeFirst(finished.count - Self.historyLimit) }
        return attempt
    }

    /// The attempt in progress, else how the last one ended; nil before the first.
    func status(at now: UInt64) -> PairingStatus? {
        current?.status(at: now) ?? finished.last
    }

    /// Attempt `id`: in progress, or how it ended (the last ``historyLimit``); nil when unknown.
    func status(attempt id: Int, at now: UInt64) -> PairingStatus? {
        if let current, current.id == id { return current.status(at: now) }
        return finished.last { $0.attempt == id }
    }
}
