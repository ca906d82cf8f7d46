import Foundation
import Logging

/// A log handler that keeps every message (with its level and metadata), for tests that check what was logged.
public final class LogRecorder: LogHandler, @unchecked Sendable {  // `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: [(level: Logger.Level, text: String)] = []
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    /// A recorder with nothing recorded.
    public init() {}

    /// A logger that writes to this recorder.
    public func logger(_ label: String = "test") -> Logger {
        Logger(label: label) { _ in self }
    }

    /// Every message so far, as `message [metadata]`.
    public var messages: [String] { lock.withLock { stored.map(\.text) } }

    /// The messages at `level`.
    public func messages(at level: Logger.Level) -> [String] { lock.withLock { stored.filter { $0.level == level }.map(\.text) } }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let text = "\(event.message) \(event.metadata ?? [:])"
        lock.withLock { stored.append((event.level, text)) }
    }
}
