import CamoSystem
import Foundation
import Glibc

/// Writes files so that a crash never leaves a half-written one: write a temporary file beside the target
/// (owner-only), fsync it, rename it over the target, then fsync the directory. Failures are ``SystemCallError``s.
public enum AtomicFile {
    /// Writes `bytes` to `path` atomically with the given permissions (default owner read/write only).
    public static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o600) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        // O_EXCL | O_NOFOLLOW: never write through a link someone planted at the temporary name.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions)
        guard fd >= 0 else { throw SystemCallError.current("create", path: temporary) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                // Safe: the loop runs only while bytes remain, so the buffer is not empty.
                Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw SystemCallError("write", path: temporary, code: code)
            }
            written += result
        }
        if fchmod(fd, permissions) != 0 {
            let code = errno
            close(fd)
            unlink(temporary)
            throw SystemCallError("set permissions of", path: temporary, code: code)
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            unlink(temporary)
            throw SystemCallError("fsync", path: temporary, code: code)
        }
        close(fd)
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw SystemCallError("rename into place", path: path, code: code)
        }
        // The rename is only durable once the directory is synced; a failure here is reported, not ignored.
        let directoryPath = directory.isEmpty ? "." : directory
        let directoryFD = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw SystemCallError.current("open the directory", path: directoryPath) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw SystemCallError.current("fsync the directory", path: directoryPath) }
    }

    /// Removes temporary files (`NAME.tmp-PID`) that writers left behind when they were killed mid-write: those
    /// whose process no longer runs. Returns how many were removed.
    @discardableResult
    public static func removeStaleTemporaries(of path: String) -> Int {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            if unlink((directory.isEmpty ? "" : directory + "/") + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// Creates `path` and its parents when missing, and makes `path` itself owner-only.
    public static func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard chmod(path, 0o700) == 0 else { throw SystemCallError.current("make owner-only", path: path) }
    }
}
