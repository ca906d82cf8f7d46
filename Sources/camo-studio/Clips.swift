import ArgumentParser
import CamoCommandLine
import CamoStudioKit
import CamoWire
import Foundation
import Logging

/// `camo-studio clips --agent X [--fetch ID]`: lists a paired agent's recordings, or fetches one (protocol 1.4).
struct Clips: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists a paired agent's recordings, or fetches one (protocol 1.4).",
        discussion: """
            Without --fetch: one line per recording, newest first: its id, when it began, its length, what started it, \
            its size, and whether it has sound. With --fetch ID: writes that recording to --out (default: its id with \
            .mp4 or .jpg, in this folder). Only a paired studio may list or fetch.
            """)

    @OptionGroup var target: SessionTarget
    @Option(help: "Fetch the recording with this id (from the list).") var fetch: UInt64?
    @Option(help: "Where --fetch writes the recording (default: clip-ID.mp4 or clip-ID.jpg here).") var out: String?
    @Flag(help: "Print the list as one JSON array.") var json = false
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if out != nil && fetch == nil { throw ValidationError("--out goes with --fetch ID") }
        if let fetch, fetch == 0 { throw ValidationError("--fetch takes a recording's id from the list (1 or more)") }
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        let (address, configuration) = try await target.resolve(logger: logger)
        do {
            if let fetch {
                var path = out ?? ""
                if out == nil {
                    // Named for its kind: the list says which.
                    let clips = try await ClipsSession.list(
                        host: address.host, port: address.port, configuration: configuration, logger: logger)
                    guard let clip = clips.first(where: { $0.id == fetch }) else {
                        throw ClipsSession.Failure.unavailable("there is no recording \(fetch) on the agent (it may have been removed to make room); `camo-studio clips` lists them")
                    }
                    path = "clip-\(fetch)." + (clip.kind == "video" ? "mp4" : "jpg")
                }
                let bytes = try await ClipsSession.fetch(
                    id: fetch, to: path, host: address.host, port: address.port, configuration: configuration, logger: logger)
                print("camo-studio: recording \(fetch): \(bytes) bytes written to \(path)")
            } else {
                let clips = try await ClipsSession.list(
                    host: address.host, port: address.port, configuration: configuration, logger: logger)
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    print(String(decoding: try encoder.encode(clips), as: UTF8.self))
                } else if clips.isEmpty {
                    print("No recordings are kept on the agent yet.")
                } else {
                    for clip in clips { print(Self.line(clip)) }
                }
            }
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// `12  2026-11-26 18:20:01  14.5 s  motion zone 2  2.4 MB  sound`.
    static func line(_ clip: WireClip) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let when = formatter.string(from: Date(timeIntervalSince1970: clip.startTime))
        let length = clip.kind == "video" ? String(format: "%.1f s", clip.durationSeconds) : "still"
        var cause = clip.trigger ?? clip.mode
        if let zone = clip.zoneID { cause += " zone \(zone)" }
        let size = String(format: "%.1f MB", Double(clip.bytes) / 1_000_000)
        return "\(clip.id)  \(when)  \(length)  \(cause)  \(size)  \(clip.hasAudio ? "sound" : "no sound")"
    }
}
