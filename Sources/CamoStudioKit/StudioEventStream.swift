import Synchronization

/// The events of one ``StudioClient``, with backpressure: when the consumer falls behind by more than
/// ``StudioClientConfiguration/backlogHighWaterBytes`` of media, the client stops reading from the
/// socket (so TCP pushes back and the agent drops video for this session, as it is built to), and
/// reads again once the backlog is under ``StudioClientConfiguration/backlogLowWaterBytes``.
///
/// Iterate it once. Ending the iteration early (dropping the stream) closes the connection.
public struct StudioEventStream: AsyncSequence, Sendable {
    /// The events.
    public typealias Element = StudioEvent

    let stream: AsyncStream<StudioEvent>
    let backlog: EventBacklog

    /// The iterator; consumption releases backlog.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<StudioEvent>.AsyncIterator
        let backlog: EventBacklog

        /// The next event, nil after ``StudioEvent/closed(_:)``.
        public mutating func next() async -> StudioEvent? {
            guard let event = await base.next() else { return nil }
            backlog.remove(EventBacklog.weight(of: event))
            return event
        }
    }

    /// The iterator (make one).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), backlog: backlog)
    }
}

/// Bytes of events yielded but not yet consumed, shared by the channel handler and the consumer.
final class EventBacklog: Sendable {
    private struct State {
        var bytes = 0
        var paused = false
        var resume: (@Sendable () -> Void)?
    }

    let highWater: Int
    let lowWater: Int
    private let state = Mutex(State())

    init(highWater: Int, lowWater: Int) {
        self.highWater = highWater
        self.lowWater = min(lowWater, highWater)
    }

    /// What resumes reading (set once the channel exists; nil when it is gone, which breaks the
    /// handler ↔ backlog reference cycle).
    func setResume(_ resume: (@Sendable () -> Void)?) {
        state.withLock { $0.resume = resume }
    }

    /// Adds a yielded event's weight; true when this crossed the high-water mark (pause reading now).
    func add(_ weight: Int) -> Bool {
        state.withLock { state in
            state.bytes += weight
            guard state.bytes > highWater, !state.paused else { return false }
            state.paused = true
            return true
        }
    }

    /// Removes a consumed event's weight; resumes reading when under the low-water mark again.
    func remove(_ weight: Int) {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.bytes -= weight
            guard state.paused, state.bytes <= lowWater else { return nil }
            state.paused = false
            return state.resume
        }
        resume?()
    }

    /// Bytes outstanding.
    var bytes: Int { state.withLock { $0.bytes } }

    /// What an event costs in the backlog: its media bytes, or a small constant.
    static func weight(of event: StudioEvent) -> Int {
        switch event {
        case .video(let frame): frame.frame.data.count
        case .audio(let packet): packet.data.count
        case .clipData(let piece): piece.data.count
        default: 64
        }
    }
}
