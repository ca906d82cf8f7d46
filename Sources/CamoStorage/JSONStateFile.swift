import CamoSystem
import Foundation
import Glibc

/// A versioned JSON document in a state directory: read strictly, written atomically and owner-only.
///
/// A file that exists but does not parse (or has another version) is **corrupt**: ``load()`` moves it aside
/// as `NAME.corrupt-<unix time>-<pid>` and says so in its result, so the caller reports it and starts afresh;
/// it is never overwritten in place. A file that cannot be *read* (wrong owner, say) is not corrupt: that is
/// an error, and the file is left alone.
public struct JSONStateFile<Content: Codable & Sendable>: Sendable {
    /// What ``load()`` found.
    public enum Loaded: Sendable {
        /// No file yet.
        case missing
        /// The file's content.
        case loaded(Content)
        /// The file was corrupt and now lives at `keptAs`; `reason` says what was wrong with it.
        case keptAside(keptAs: String, reason: String)
    }

    /// Why a state file could not be used.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The file exists but cannot be read.
        case unreadable(path: String)
        /// The file is corrupt and could not be moved aside.
        case cannotKeepAside(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let path):
                return "\(path) exists but cannot be read (check its owner and permissions); it was left untouched."
            case .cannotKeepAside(let path, let reason):
                return "\(path) is corrupt and could not be moved aside (\(reason)); it was left untouched. Move it away by hand."
            }
        }
    }

    private struct Envelope: Codable {
        var version: Int
        var content: Content
    }

    /// The file's path.
    public let path: String
    /// The version written and the only one accepted.
    public let version: Int

    /// A state file at `path` holding documents of `version`.
    public init(path: String, version: Int = 1) {
        self.path = path
        self.version = version
    }

    /// Reads the file. See ``Loaded``. Temporary files that killed writers left beside it are removed.
    public func load() throws(Failure) -> Loaded {
        AtomicFile.removeStaleTemporaries(of: path)
        switch try read() {
        case .none:
            return .missing
        case .some(.success(let content)):
            return .loaded(content)
        case .some(.failure(let problem)):
            return .keptAside(keptAs: try keepAside(), reason: problem.reason)
        }
    }

    /// What is wrong with a file that does not parse.
    public struct Problem: Error, Sendable {
        /// The sentence.
        public var reason: String
    }

    /// Reads the file without changing anything: nil when missing, the content, or what is wrong with it.
    public func read() throws(Failure) -> Result<Content, Problem>? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        do {
            let envelope = try Self.decoder.decode(Envelope.self, from: data)
            if envelope.version == version { return .success(envelope.content) }
            return .failure(Problem(reason: "it has version \(envelope.version); this program reads version \(version)"))
        } catch {
            return .failure(Problem(reason: data.isEmpty ? "it is empty" : "it is not valid: \(Self.describe(error))"))
        }
    }

    /// Moves the file aside as `NAME.corrupt-<unix time>-<pid>` (or, with `copy`, keeps a copy there and leaves
    /// the file); returns the new path.
    @discardableResult
    public func keepAside(copy: Bool = false) throws(Failure) -> String {
        let aside = path + ".corrupt-\(Int(Date().timeIntervalSince1970))-\(getpid())"
        if copy {
            do {
                try FileManager.default.copyItem(atPath: path, toPath: aside)
            } catch {
                throw .cannotKeepAside(path: path, reason: "\(error)")
            }
            return aside
        }
        guard rename(path, aside) == 0 else {
            throw .cannotKeepAside(path: path, reason: SystemCallError.message(errno))
        }
        return aside
    }

    /// Writes `content` atomically (write, fsync, rename, fsync the directory), owner-only.
    public func save(_ content: Content) throws {
        try AtomicFile.write(Array(try Self.encoder.encode(Envelope(version: version, content: content))), to: path)
    }

    /// ISO 8601 dates, sorted keys, pretty-printed: diff-friendly and readable by hand.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The decoder matching ``encoder``.
    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "the field \(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context): return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.valueNotFound(_, let context): return "no value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: return "\(error)"
        }
    }
}
