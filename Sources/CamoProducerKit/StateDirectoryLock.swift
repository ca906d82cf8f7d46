import CamoMedia
import CamoStorage
import CamoSystem
import Foundation
import Glibc

/// One agent per state directory: an exclusive `flock` on `agent.lock`, held for the life of the process.
public final class StateDirectoryLock: Sendable {
    private let fd: Int32

    /// Takes the lock, or throws when another agent runs on the same state directory.
    public init(directory: String) throws {
        let path = directory + "/agent.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemCallError.current("open", path: path) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw StateDirectoryBusy(directory: directory)
        }
        self.fd = fd
    }

    deinit { close(fd) }
}

/// Another agent already runs on this state directory.
public struct StateDirectoryBusy: Error, CustomStringConvertible {
    /// The state directory in use.
    public var directory: String
    public var description: String {
        "Another camo-agent already runs with the state directory \(directory). Stop it, or use another state directory."
    }
}
