import ArgumentParser
import CamoAgentKit
import CamoCommandLine
import CamoWire

/// `camo-agent settings [NAME [VALUE]]`: the running agent's settings model, one setting, or a change.
struct Settings: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shows the camera's settings (privacy, microphone, image, lights, the camera's controls) or changes one.",
        discussion: """
            Without NAME: every setting, with its value, what it accepts, its default, and whether this camera has it. \
            With NAME: that setting. With NAME VALUE: sets it, saved for this camera, and every studio is told.
            Examples: camo-agent settings imageRotation 90; camo-agent settings viewport 320,180-960,540; \
            camo-agent settings brightness 140; camo-agent settings streamingEnabled false (the privacy switch).
            """)

    @OptionGroup var state: StateOptions
    @Flag(help: "Print JSON.") var json = false
    @Argument(help: "The setting's name (as listed).") var name: String?
    @Argument(help: "The new value: true/false, a number, a choice, or x1,y1-x2,y2 for the viewport.") var value: String?

    func run() async throws {
        if let name, let value {
            let response = try await state.send(ControlRequest(command: "set-setting", name: name, value: value))
            let applied = response.settings ?? []
            print(json ? try SettingsText.json(applied) : SettingsText.applied(applied))
            return
        }
        let response = try await state.send("settings")
        var settings = response.settings ?? []
        if let name {
            settings = settings.filter { $0.name == name }
            guard !settings.isEmpty else {
                throw ValidationErrorText("There is no setting named '\(name)'; `camo-agent settings` lists them.")
            }
        }
        print(json ? try SettingsText.json(settings) : SettingsText.table(settings))
    }
}
