import Foundation
import Glibc

/// A private directory for targets that read files (state files, the config file): made once per process under
/// /tmp, emptied before each input, removed at exit.
public enum FuzzDirectory {
    /// The directory's path.
    public static let path: String = {
        var template = Array("/tmp/camo-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        let path = String(cString: made)
        atexit { FuzzDirectory.clear(removing: true) }
        return path
    }()

    /// Removes everything in the directory (kept-aside copies, lock files, temporaries), and with `removing` the
    /// directory too.
    public static func clear(removing: Bool = false) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: path)) ?? [] {
            try? manager.removeItem(atPath: path + "/" + name)
        }
        if removing { rmdir(path) }
    }

    /// Empties the directory and writes `bytes` as `name` in it; returns the file's path.
    @discardableResult
    public static func write(_ bytes: some Collection<UInt8>, as name: String) -> String {
        clear()
        let file = path + "/" + name
        guard manager.createFile(atPath: file, contents: Data(bytes)) else { fatalError("cannot write \(file)") }
        return file
    }

    private static var manager: FileManager { .default }
}

/// Seeds: the FUZZ_WRITE_SEEDS directory, when a target is run to write its seeds (from the real encoders) instead
/// of fuzzing.
public enum FuzzSeeds {
    /// The directory to write seeds to, or nil for a fuzzing run.
    public static let directory: String? = getenv("FUZZ_WRITE_SEEDS").map { String(cString: $0) }

    /// Writes one seed file.
    public static func write(_ bytes: some Collection<UInt8>, name: String) {
        guard let directory else { return }
        guard FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(bytes)) else {
            fatalError("cannot write the seed \(directory)/\(name)")
        }
    }
}
