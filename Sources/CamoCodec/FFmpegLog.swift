import CFFmpeg
import Logging
import Synchronization

/// Where the messages libav* logs for one codec or format context go: its owner's `Logger`, and a count
/// and the last text of its error-level messages (the decoder reports those as damage).
final class FFmpegLogSink: Sendable {
    let logger: Logger
    private let state = Mutex<(errors: Int, lastError: String?)>((0, nil))

    init(logger: Logger) {
        self.logger = logger
    }

    /// Error-level messages since the last ``reset()``, and the last of them.
    var errors: (count: Int, last: String?) { state.withLock { ($0.errors, $0.lastError) } }

    func reset() {
        state.withLock { $0 = (0, nil) }
    }

    fileprivate func record(level: Int32, message: String) {
        let level = FFmpegLog.expected.contains(message) ? AV_LOG_VERBOSE : level
        if level <= AV_LOG_ERROR {
            state.withLock {
                $0.errors += 1
                $0.lastError = message
            }
        }
        logger.log(level: FFmpegLog.logLevel(level), "\(message)", metadata: ["library": "libav"])
    }
}

/// Routes av_log to the `Logger` of whoever owns the logging context.
///
/// av_log's callback is process-wide, so it is installed once (the first time a CamoCodec object opens a
/// codec or file) and looks the context up among the registered ones; messages of other contexts (another
/// module's use of libav*) at warning level or worse go to a logger labelled `camo.codec.libav`.
enum FFmpegLog {
    private static let sinks = Mutex<[UInt: FFmpegLogSink]>([:])
    private static let fallback = Logger(label: "camo.codec.libav")

    /// Warnings that are expected with CamoCodec's settings, logged at debug level instead.
    /// - x264's, each time the bit rate is lowered: libavcodec hands x264 the new VBV maximum before the new
    ///   target, and x264 briefly sees a maximum below the old target (the target follows in the same frame).
    static let expected: Set<String> = ["max bitrate less than average bitrate, assuming CBR"]

    /// Installs the callback; runs once per process (a lazy global is initialized exactly once).
    private static let installed: Bool = {
        // Messages above this level are dropped by av_log before they are formatted.
        av_log_set_level(AV_LOG_INFO)
        av_log_set_callback { context, level, format, arguments in
            FFmpegLog.receive(context: context, level: level, format: format, arguments: arguments)
        }
        return true
    }()

    /// Sends `context`'s messages (the AVCodecContext or AVFormatContext pointer) to `sink` until
    /// ``unregister(_:)``.
    static func register(_ context: UnsafeMutableRawPointer, _ sink: FFmpegLogSink) {
        _ = installed
        sinks.withLock { $0[UInt(bitPattern: context)] = sink }
    }

    /// Stops routing `context`'s messages (call before freeing it).
    static func unregister(_ context: UnsafeMutableRawPointer) {
        sinks.withLock { $0[UInt(bitPattern: context)] = nil }
    }

    private static func receive(
        context: UnsafeMutableRawPointer?, level: Int32, format: UnsafePointer<CChar>?, arguments: CVaListPointer?
    ) {
        guard let format, let arguments else { return }
        let sink = context.flatMap { pointer in sinks.withLock { $0[UInt(bitPattern: pointer)] } }
        if sink == nil && level > AV_LOG_WARNING { return }
        let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 1024) { buffer -> String in
            guard let base = buffer.baseAddress else { return "" }
            _ = camo_av_vformat(base, buffer.count, format, arguments)
            return String(cString: base)
        }
        let message = text.trimmingTrailingWhitespace
        guard !message.isEmpty else { return }
        if let sink {
            sink.record(level: level, message: message)
        } else {
            fallback.log(level: logLevel(level), "\(message)", metadata: ["library": "libav"])
        }
    }

    /// av_log's level as swift-log's: errors stay errors, libav's chatty INFO (x264's statistics) is debug.
    static func logLevel(_ level: Int32) -> Logger.Level {
        switch level {
        case ...AV_LOG_FATAL: return .critical
        case ...AV_LOG_ERROR: return .error
        case ...AV_LOG_WARNING: return .warning
        case ...AV_LOG_INFO: return .debug
        default: return .trace
        }
    }

    /// libav*'s message for an error code, e.g. "Invalid data found when processing input".
    static func message(_ code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer -> String in
            guard let base = buffer.baseAddress else { return "error \(code)" }
            camo_av_strerror(code, base, buffer.count)
            return String(cString: base)
        }
    }
}

extension String {
    /// The string without trailing spaces and newlines (av_log messages end in "\n").
    var trimmingTrailingWhitespace: String {
        var result = Substring(self)
        while let last = result.last, last.isWhitespace { result = result.dropLast() }
        return String(result)
    }
}
