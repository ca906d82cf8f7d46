import ArgumentParser
import CamoVirtualDevices
import Foundation

/// `camo-studio status`: what each running `camo-studio camera` feeds, or, when none runs, the loopback devices
/// that are there.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List what the running camo-studio camera processes feed, or the loopback devices when none runs.",
        discussion: """
            Each camo-studio camera writes its status to $XDG_RUNTIME_DIR/camo-studio/feeds/PID.json (else \
            /tmp/camo-studio-UID/feeds) once a second; files of processes that are gone are removed here.
            """)

    @Flag(help: "Print JSON.") var json = false
    @Option(help: "The directory of the status files (default: the one camo-studio camera writes to).")
    var feedsDir: String?

    func run() throws {
        let report = VirtualDevicesReport.gather(directory: feedsDir ?? FeedStatusFile.defaultDirectory())
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            report.lines().forEach { print($0) }
        }
    }
}
