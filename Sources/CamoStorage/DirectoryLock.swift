import CamoSystem
import Foundation
import Glibc

/// A short, blocking, exclusive lock on a state directory (`flock` on `DIR/.lock`), for programs that change
/// their state files now and then and may run several at once (two `camo-studio pair` runs, say): each
/// change reads the file again under the lock, so none is lost.
public enum DirectoryLock {
    /// Runs `body` holding the lock on `directory`.
    public static func withLock<T>(_ directory: String, _ body: () throws -> T) throws -> T {
        let path = directory + "/.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemCallError.current("open", path: path) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SystemCallError.current("lock", path: path) }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
