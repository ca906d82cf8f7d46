import ArgumentParser
import CamoAgentKit
import CamoProducerKit
import Foundation
import Logging

@main
struct CamoAgent: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camo-agent",
        abstract: "Turns this machine's webcam and microphone into a Camo-style camera for a studio.",
        version: AgentVersion.software,
        subcommands: [
            Run.self, Config.self, Status.self, Pause.self, Resume.self, Mute.self, Pair.self, Paired.self, Unpair.self, Devices.self, Info.self,
            Controls.self, Settings.self, Events.self, Clips.self, Transports.self, Web.self, Rescan.self, USB.self, DebugStoreChurn.self,
        ],
        defaultSubcommand: Run.self
    )
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shows the running agent's state and every studio session with its counters.")

    @OptionGroup var state: StateOptions
    @Flag(help: "Print the status as JSON.") var json = false

    func run() async throws {
        let response = try await state.send("status")
        guard let status = response.status else { throw ValidationError("The agent sent no status.") }
        if json {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
        } else {
            print(status.humanDescription)
        }
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turns the privacy switch on: studios stay connected but receive nothing.")
    @OptionGroup var state: StateOptions
    func run() async throws {
        _ = try await state.send("pause")
        print("paused")
    }
}

struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turns the privacy switch off: streaming resumes.")
    @OptionGroup var state: StateOptions
    func run() async throws {
        _ = try await state.send("resume")
        print("resumed")
    }
}

struct Mute: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mutes or unmutes the running agent's microphone (muted: studios get silence at the same cadence).")
    @OptionGroup var state: StateOptions
    @Argument(help: "on or off") var setting: String

    func validate() throws {
        guard setting == "on" || setting == "off" else { throw ValidationError("Say `mute on` or `mute off`.") }
    }

    func run() async throws {
        _ = try await state.send(ControlRequest(command: "mute", value: setting))
        print(setting == "on" ? "microphone muted" : "microphone unmuted")
    }
}
