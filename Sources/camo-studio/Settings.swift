import ArgumentParser
import CamoCommandLine
import CamoStudioKit
import CamoWire
import Foundation
import Logging

/// `camo-studio settings --agent X [NAME [VALUE]]`: a paired agent's camera settings, read or changed remotely.
struct Settings: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shows a paired agent's camera settings, or changes one (protocol 1.2).",
        discussion: """
            Without NAME: every setting with its value, what it accepts, its default, and whether the camera has it. \
            With NAME VALUE: sets it (the agent saves it for that camera and tells every studio).
            Examples: camo-studio settings --agent desk imageRotation 90; camo-studio settings --agent desk brightness 200; \
            camo-studio settings --agent desk viewport 320,180-960,540
            """)

    @OptionGroup var target: SessionTarget
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var logging: LoggingOptions
    @Argument(help: "The setting's name (as listed).") var setting: String?
    @Argument(help: "The new value: true/false, a number, a choice, or x1,y1-x2,y2 for the viewport.") var value: String?

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        let (address, configuration) = try await target.resolve(logger: logger)
        do {
            if let setting, let value {
                let model = try await SettingsSession.read(host: address.host, port: address.port, configuration: configuration, logger: logger)
                guard let descriptor = model.settings.first(where: { $0.name == setting }) else {
                    throw ValidationErrorText("there is no setting named '\(setting)'; `camo-studio settings` lists the \(model.settings.count) there are")
                }
                let parsed = descriptor.parse(value)
                let result = try await SettingsSession.write(
                    [setting: parsed], host: address.host, port: address.port, configuration: configuration, logger: logger)
                if let refusal = result.refused.first { throw ValidationErrorText("the agent refused it: \(refusal.reason)") }
                print(json ? try SettingsText.json(result.applied) : SettingsText.applied(result.applied))
                return
            }
            let model = try await SettingsSession.read(host: address.host, port: address.port, configuration: configuration, logger: logger)
            var settings = model.settings
            if let setting {
                settings = settings.filter { $0.name == setting }
                guard !settings.isEmpty else { throw ValidationErrorText("there is no setting named '\(setting)'") }
            }
            print(json ? try SettingsText.json(settings) : SettingsText.table(settings)
                  + (model.studioMayWrite ? "" : "\n(this studio may read the settings but not change them)"))
        } catch let error as ValidationErrorText {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        } catch let error as SettingsSession.Failure {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// An error whose text is printed as is.
struct ValidationErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
