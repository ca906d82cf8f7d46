import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: what was being done, to which path, and the error number as swift-system's `Errno`.
///
/// The one place where errno becomes a typed error. The wrappers around system calls (atomic files and directory
/// locks, configfs and sysfs for the USB gadget, V4L2 device nodes, the control socket's directory) throw this or
/// carry it, so every such failure reads the same way and a caller can match on the number (`.noSuchDevice`).
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done: a call's name ("mkdir", "VIDIOC_DQBUF") or a short verb phrase ("rename into place").
    public var operation: String
    /// The path it was done to (a file, a device node, a directory), or what stands for one.
    public var path: String
    /// The error number.
    public var errno: Errno

    /// An error for `operation` on `path`.
    public init(_ operation: String, path: String, errno: Errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// An error for `operation` on `path` from a raw error number (errno, or the negated result of a call that
    /// returns -errno).
    public init(_ operation: String, path: String, code: Int32) {
        self.init(operation, path: path, errno: Errno(rawValue: code))
    }

    /// An error for `operation` on `path` from the calling thread's errno: call it right after the call that failed.
    public static func current(_ operation: String, path: String) -> SystemCallError {
        SystemCallError(operation, path: path, code: Glibc.errno)
    }

    /// The raw error number.
    public var code: Int32 { errno.rawValue }

    /// "could not OPERATION PATH: the system's message (errno N)".
    public var description: String {
        "could not \(operation) \(path): \(errno.description) (errno \(errno.rawValue))"
    }

    /// Whether the number means that the device behind a node is gone (unplugged, unbound): ENODEV, ENXIO, EIO or
    /// ENOENT.
    public var meansDeviceGone: Bool { [ENODEV, ENXIO, EIO, ENOENT].contains(errno.rawValue) }

    /// The system's message for a raw error number ("No such device"), as `strerror` gives it.
    public static func message(_ code: Int32) -> String { Errno(rawValue: code).description }
}
