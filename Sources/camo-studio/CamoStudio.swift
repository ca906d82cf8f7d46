import ArgumentParser
import CamoDiscovery
import Foundation
import Logging

/// `camo-studio`: the Linux studio. Exit codes: 0 ok, 1 connection or agent error, 2 usage.
@main
struct CamoStudio: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camo-studio",
        abstract: "The receiving side of camo-agent: connect, receive, record.",
        subcommands: [Record.self, Camera.self, Setup.self, Status.self, Pair.self, Agents.self, Settings.self, Events.self, Clips.self])

    /// Runs the command, mapping argument errors to exit code 2 (ArgumentParser's default is 64).
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)   // --help, --version
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(ExitCode.usage.rawValue)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            if exitCode(for: error) == .success {
                exit(withError: error)   // a command group run without a subcommand prints its help
            }
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            Foundation.exit(ExitCode.failure.rawValue)
        }
    }
}

/// This program's way around a discovery failure (the library's sentence says what to do in its own terms).
func connectHint(_ error: any Error, command: String = "record") -> String {
    guard let discovery = error as? DiscoveryError else { return "" }
    switch discovery {
    case .daemonNotRunning, .systemBusNotRunning, .daemonGone: return " (camo-studio \(command) --connect HOST:PORT connects by address.)"
    default: return ""
    }
}

extension ExitCode {
    /// Bad arguments.
    static let usage = ExitCode(2)
}

/// Options every subcommand shares.
struct LoggingOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    func bootstrap() {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
