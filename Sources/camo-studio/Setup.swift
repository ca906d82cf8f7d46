import ArgumentParser
import CamoVirtualDevices
import Foundation
import Logging

/// `camo-studio setup`: loads v4l2loopback (the virtual camera) and snd-aloop (the virtual microphone), or reports
/// what is already loaded. Needs root for the loading; --dry-run prints the commands instead.
struct Setup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the virtual camera (v4l2loopback) and microphone (snd-aloop) appear; needs sudo.",
        discussion: """
            Loads v4l2loopback with exclusive_caps=1 (which Chrome needs to list the camera), video_nr and \
            card_label, and snd-aloop as card CamoMic (index=-2: any slot but 0, so it never becomes the default \
            card; pcm_substreams=2): the virtual microphone is played into hw:CamoMic,0,0 and other programs record from \
            hw:CamoMic,1,0. A module that is already loaded is reported, never unloaded: when it is not as asked, \
            setup says how to reload it. Each step is printed.
            """)

    @Option(name: .customLong("video-nr"), help: "The camera's device number: /dev/videoN.")
    var videoNumber = 10
    @Option(help: "The camera's name as programs show it (\"Camo: desk\"); no commas.")
    var label = "Camo"
    @Flag(inversion: .prefixedNo, help: "Load snd-aloop for the virtual microphone too.")
    var microphone = true
    @Flag(help: "Print the commands setup would run, and run nothing.")
    var dryRun = false
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        do {
            try options.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    var options: LoopbackSetupOptions { LoopbackSetupOptions(videoNumber: videoNumber, label: label, microphone: microphone) }

    func run() throws {
        logging.bootstrap()
        let setup = LoopbackSetup(options: options, logger: Logger(label: "camo.studio.setup"))
        do {
            try setup.run(dryRun: dryRun) { step in print(step) }
        } catch {
            FileHandle.standardError.write(Data("camo-studio setup: \(error.description)\n".utf8))
            throw ExitCode.failure
        }
    }
}
