import CamoSystem
import Foundation
import Glibc

/// One running `camo-studio camera`'s status file: `DIRECTORY/PID.json`, where DIRECTORY is
/// `$XDG_RUNTIME_DIR/camo-studio/feeds` (else `/tmp/camo-studio-UID/feeds`), owner-only.
///
/// The camera loop writes its ``FeedStatus`` about once a second and removes the file when it exits cleanly;
/// `camo-studio status` lists the files whose process still runs (``list(directory:)``), deleting those a killed
/// process left behind.
///
/// ```swift
/// let file = FeedStatusFile()                       // this process, the default directory
/// try file.write(status)                            // each second
/// file.remove()                                     // at exit
/// ```
public struct FeedStatusFile: Sendable {
    /// The directory of the status files.
    public let directory: String
    /// The process the file is for.
    public let pid: Int32

    /// The status file of process `pid` (this process by default) in `directory` (the default directory unless
    /// given).
    public init(directory: String = FeedStatusFile.defaultDirectory(), pid: Int32 = getpid()) {
        self.directory = directory
        self.pid = pid
    }

    /// The file's path: `DIRECTORY/PID.json`.
    public var path: String { directory + "/\(pid).json" }

    /// `$XDG_RUNTIME_DIR/camo-studio/feeds` when XDG_RUNTIME_DIR is set (a user session, a user unit), else
    /// `/tmp/camo-studio-UID/feeds`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/camo-studio/feeds"
        }
        return "/tmp/camo-studio-\(getuid())/feeds"
    }

    /// Writes `status` atomically: to a temporary file beside it, renamed over the old one, so a reader never sees
    /// half a file. Makes the directory (owner-only) when it is missing. Cheap enough to call every second: no
    /// fsync, the directory is in memory (a runtime directory) and the file means nothing after a reboot.
    public func write(_ status: FeedStatus) throws(SystemCallError) {
        try makeDirectory()
        let data: Data
        do {
            data = try Self.encoder.encode(status)
        } catch {
            // Unreachable: FeedStatus holds only strings, numbers and a date, which always encode.
            throw SystemCallError("encode the status for", path: path, code: EINVAL)
        }
        let temporary = directory + "/.\(pid).json.tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .current("create", path: temporary) }
        var written = 0
        let bytes = [UInt8](data)
        while written < bytes.count {
            // Safe: the loop runs only while bytes remain, so the buffer is not empty.
            let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw SystemCallError("write", path: temporary, code: code)
            }
            written += result
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw SystemCallError("rename into place", path: path, code: code)
        }
    }

    /// Removes the file (at a clean exit). Nothing happens when it is already gone.
    public func remove() {
        unlink(path)
        unlink(directory + "/.\(pid).json.tmp")
    }

    /// The status in the file; nil when it is missing or unreadable.
    public func read() -> FeedStatus? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? Self.decoder.decode(FeedStatus.self, from: data)
    }

    /// The feeds whose process still runs, by pid. Files of processes that are gone (killed, crashed) are deleted;
    /// unreadable files of running ones are skipped.
    public static func list(directory: String = FeedStatusFile.defaultDirectory()) -> [FeedStatus] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var feeds: [FeedStatus] = []
        for name in names {
            // PID.json, or .PID.json.tmp (a write a killed process did not finish).
            let temporary = name.hasPrefix(".") && name.hasSuffix(".json.tmp")
            guard temporary || name.hasSuffix(".json") else { continue }
            let stem = temporary ? name.dropFirst().dropLast(9) : name.dropLast(5)
            guard let pid = Int32(stem), pid > 0 else { continue }
            let file = FeedStatusFile(directory: directory, pid: pid)
            guard isRunning(pid) else {
                file.remove()
                continue
            }
            if !temporary, let status = file.read() { feeds.append(status) }
        }
        return feeds.sorted { $0.pid < $1.pid }
    }

    /// Whether process `pid` exists (one of another user's counts too).
    public static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// Makes the directory and its parent owner-only when missing; refuses one that is a link or someone else's
    /// (the /tmp fallback is shared with every user).
    func makeDirectory() throws(SystemCallError) {
        let parent = (directory as NSString).deletingLastPathComponent
        for folder in [parent, directory] {
            var info = stat()
            if lstat(folder, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else { throw SystemCallError("use as a directory", path: folder, code: ENOTDIR) }
                guard info.st_uid == geteuid() else { throw SystemCallError("use a directory owned by another user", path: folder, code: EPERM) }
                continue
            }
            guard errno == ENOENT else { throw .current("stat", path: folder) }
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .current("mkdir", path: folder) }
        }
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
