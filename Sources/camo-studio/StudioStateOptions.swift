import ArgumentParser
import CamoStudioKit
import Foundation
import Logging

/// `--state-dir`: where the studio keeps its identity and its paired agents.
struct StudioStateOptions: ParsableArguments {
    @Option(name: .long, help: "The studio's state directory (its key and paired agents).")
    var stateDir: String = StudioStateOptions.defaultDirectory()

    /// `/var/lib/camo-studio` for root, else `$XDG_STATE_HOME/camo-studio` or `~/.local/state/camo-studio`.
    static func defaultDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if getuid() == 0 { return "/var/lib/camo-studio" }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/camo-studio" }
        return NSHomeDirectory() + "/.local/state/camo-studio"
    }

    func open(logger: Logger) throws -> StudioState {
        do {
            return try StudioState(directory: stateDir, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("camo-studio: cannot use the state directory \(stateDir): \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}
