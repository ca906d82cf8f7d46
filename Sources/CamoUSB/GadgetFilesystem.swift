import CamoSystem
import Foundation

/// An error from one filesystem operation on configfs or sysfs: a ``SystemCallError`` whose operation is "mkdir",
/// "rmdir", "write", "symlink", "unlink", "read" or an interface step ("bring up").
public typealias GadgetFilesystemError = SystemCallError

extension SystemCallError {
    /// An error for `operation` on `path` with errno `code`, in the order the gadget code names them.
    public init(_ operation: String, _ path: String, _ code: Int32) {
        self.init(operation, path: path, code: code)
    }
}

/// The few filesystem operations a configfs USB gadget needs. ``SystemGadgetFilesystem`` performs them;
/// tests use an in-memory model of configfs to check ordering and that a failure never leaves a half-made gadget.
public protocol GadgetFilesystem: Sendable {
    /// Whether anything exists at `path`.
    func exists(_ path: String) -> Bool
    /// The names in the directory at `path` (empty when it is missing).
    func list(_ path: String) -> [String]
    /// The contents of a file, without the trailing newline; nil when it cannot be read.
    func read(_ path: String) -> String?
    /// Writes `value` to the attribute at `path` (the way `echo value > path` does).
    func write(_ value: String, to path: String) throws(GadgetFilesystemError)
    /// Creates the directory at `path`.
    func makeDirectory(_ path: String) throws(GadgetFilesystemError)
    /// Removes the directory at `path`.
    func removeDirectory(_ path: String) throws(GadgetFilesystemError)
    /// Creates a symbolic link at `path` that points to `target`.
    func makeLink(at path: String, to target: String) throws(GadgetFilesystemError)
    /// Removes the symbolic link at `path`.
    func removeLink(_ path: String) throws(GadgetFilesystemError)
    /// Whether `path` is a symbolic link.
    func isLink(_ path: String) -> Bool
    /// The final path `path` resolves to, following links; nil when it does not exist.
    func resolve(_ path: String) -> String?
}

/// The real filesystem, through POSIX calls.
public struct SystemGadgetFilesystem: GadgetFilesystem {
    /// The real filesystem.
    public init() {}

    public func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    public func list(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    public func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    public func write(_ value: String, to path: String) throws(GadgetFilesystemError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw GadgetFilesystemError("write", path, errno) }
        defer { close(fd) }
        let bytes = Array((value + "\n").utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw GadgetFilesystemError("write", path, written < 0 ? errno : EIO) }
    }

    public func makeDirectory(_ path: String) throws(GadgetFilesystemError) {
        guard mkdir(path, 0o755) == 0 else { throw GadgetFilesystemError("mkdir", path, errno) }
    }

    public func removeDirectory(_ path: String) throws(GadgetFilesystemError) {
        guard rmdir(path) == 0 else { throw GadgetFilesystemError("rmdir", path, errno) }
    }

    public func makeLink(at path: String, to target: String) throws(GadgetFilesystemError) {
        guard symlink(target, path) == 0 else { throw GadgetFilesystemError("symlink", path, errno) }
    }

    public func removeLink(_ path: String) throws(GadgetFilesystemError) {
        guard unlink(path) == 0 else { throw GadgetFilesystemError("unlink", path, errno) }
    }

    public func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    public func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
