import ArgumentParser
import CamoAgentKit
import CamoEvents
import Foundation

/// `camo-agent events [--follow] [--json]`: the running agent's recent events, or every change as it happens.
struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shows the running agent's recent events (motion, sound, smoke and CO alarms, the doorbell), or follows them.",
        discussion: """
            Each line is one change: its number, started/updated/ended, the trigger, the zone for motion, the event's id, \
            and why it ended. Which triggers run is the setting enabledEventTriggers (camo-agent settings).
            """)

    @OptionGroup var state: StateOptions
    @Flag(name: .shortAndLong, help: "Keep printing new events until interrupted.") var follow = false
    @Option(help: "With --follow: stop after this many events (for scripts).") var count: Int?
    @Flag(help: "Print each change as one JSON object per line.") var json = false
    @Argument(help: "`secret`: print the webhook's HMAC key (for the receiver's configuration) instead.") var action: String?

    func validate() throws {
        if let action, action != "secret" { throw ValidationError("The only action is `secret`; without one the events are shown.") }
    }

    func run() async throws {
        if action == "secret" {
            guard let secret = WebhookSecret.saved(stateDirectory: state.stateDir) else {
                throw ValidationError("No saved webhook secret: the agent makes one the first time it starts with --webhook-url (\(state.stateDir)/webhook-secret); a webhookSecret set in the config file is used as it is there.")
            }
            print(secret)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var last: UInt64 = 0
        var printed = 0
        // Without --follow: what the agent kept. With it: only what happens from now on.
        let first = try await state.send(ControlRequest(command: "events"))
        let kept = first.events ?? []
        last = kept.last?.sequence ?? 0
        if !follow {
            if kept.isEmpty && !json { print("no events yet") }
            for notice in kept { print(json ? String(decoding: try encoder.encode(notice), as: UTF8.self) : Self.line(notice)) }
            return
        }
        while true {
            try await Task.sleep(for: .milliseconds(250))
            let response = try await state.send(ControlRequest(command: "events", value: String(last)))
            for notice in response.events ?? [] {
                if notice.sequence < last {
                    // The agent restarted: its numbers start again.
                    last = 0
                }
                // Unbuffered, so a pipe sees each line as it happens.
                let text = json ? String(decoding: try encoder.encode(notice), as: UTF8.self) : Self.line(notice)
                FileHandle.standardOutput.write(Data((text + "\n").utf8))
                last = notice.sequence
                printed += 1
                if let count, printed >= count { return }
            }
        }
    }

    /// `2026-11-26 18:20:01 12 started motion zone 2 (event 7)`.
    static func line(_ notice: EventNotice) -> String {
        guard let time = notice.time else { return notice.summary }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: time)) + " " + notice.summary
    }
}
