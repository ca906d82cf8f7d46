import ArgumentParser
import CamoCommandLine
import CamoStudioKit
import CamoWire
import Foundation
import Logging

/// `camo-studio events --agent X`: follows a paired agent's camera events (protocol 1.3).
struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follows a paired agent's camera events: motion in its zones, sound, smoke and CO alarms, the doorbell (protocol 1.3).",
        discussion: """
            Each line is one change: its number, started/updated/ended, the trigger, the zone for motion, the event's id, \
            and why it ended. Runs until interrupted, or until --count changes arrived.
            """)

    @OptionGroup var target: SessionTarget
    @Flag(help: "First print the events the agent kept (its last 200 changes).") var replay = false
    @Option(help: "Stop after this many changes.") var count: Int?
    @Flag(help: "Print each change as one JSON object per line.") var json = false
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1, got \(count)") }
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        let (address, configuration) = try await target.resolve(logger: logger)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var printed = 0
        do {
            try await EventsSession.follow(
                host: address.host, port: address.port, configuration: configuration, replay: replay, logger: logger
            ) { event in
                let text = json ? ((try? encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? event.summary) : Self.line(event)
                FileHandle.standardOutput.write(Data((text + "\n").utf8))
                printed += 1
                return count.map { printed < $0 } ?? true
            }
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// `2026-11-26 18:20:01 12 started motion zone 2 (event 7)`.
    static func line(_ event: WireEvent) -> String {
        guard let time = event.time else { return event.summary }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: time)) + " " + event.summary
    }
}
