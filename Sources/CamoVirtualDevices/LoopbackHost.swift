/// What the loopback setup needs from the machine: running the module tools (`modinfo`, `modprobe`, `mokutil`) and
/// reading sysfs and procfs. ``SystemLoopbackHost`` does it for real; tests answer from a model so every path,
/// errors included, runs without root or a real module.
public protocol LoopbackHost: Sendable {
    /// Runs `arguments[0]` (a program name, looked up in the sbin and bin folders) with the rest as its arguments,
    /// and waits for it.
    func run(_ arguments: [String]) -> CommandResult
    /// The contents of a file without the trailing newline; nil when it cannot be read.
    func read(_ path: String) -> String?
    /// The names in a directory, sorted; empty when it is missing.
    func list(_ directory: String) -> [String]
    /// Whether anything exists at `path`.
    func exists(_ path: String) -> Bool
    /// Whether this process runs as root (effective user id 0), which loading modules needs.
    var isRoot: Bool { get }
}

extension LoopbackHost {
    /// The running kernel's release (`uname -r`), from /proc/sys/kernel/osrelease; "unknown" when unreadable.
    var kernelRelease: String { read("/proc/sys/kernel/osrelease") ?? "unknown" }
}
