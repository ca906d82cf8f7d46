import ArgumentParser
import CamoAgentKit
import CamoCommandLine
import CamoRecording
import Foundation

/// `camo-agent clips [--json]`: the running agent's recordings and what recording is doing.
struct Clips: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the running agent's recordings (clips and stills), newest first, and what recording is doing.",
        discussion: """
            What is kept is the setting selectedRecordingMode (camo-agent settings set selectedRecordingMode eventBased); \
            the files are CMAF (fragmented MP4) and JPEG in the recordings directory, which the first line names.
            """)

    @OptionGroup var state: StateOptions
    @Flag(help: "Print {\"recording\": status, \"clips\": [...]} as JSON.") var json = false

    func run() async throws {
        let response = try await state.send(ControlRequest(command: "clips"))
        guard let status = response.recording else { throw ValidationError("The agent sent no recording status.") }
        let clips = response.clips ?? []
        if json {
            struct Output: Encodable {
                var recording: RecordingStatus
                var clips: [ClipRecord]
            }
            print(try SettingsText.json(Output(recording: status, clips: clips)))
            return
        }
        print(Self.summary(status))
        guard !clips.isEmpty else {
            print("no recordings yet")
            return
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var rows = [["ID", "STARTED", "KIND", "TRIGGER", "SECONDS", "MB", "AUDIO", "FILE"]]
        for clip in clips {
            let trigger = (clip.trigger?.rawValue ?? "-") + (clip.zoneID.map { " zone \($0)" } ?? "")
            rows.append([
                String(clip.id), formatter.string(from: Date(timeIntervalSince1970: clip.startTime)), clip.kind.rawValue, trigger,
                String(format: "%.1f", clip.durationSeconds), String(format: "%.1f", Double(clip.bytes) / 1_048_576),
                clip.hasAudio ? "yes" : "no", clip.file,
            ])
        }
        print(TextTable.render(rows))
    }

    /// `mode eventBased, recording now; 12 kept, 40.2 of 2048 MB in /var/lib/camo/recordings; 3 removed for room`.
    static func summary(_ status: RecordingStatus) -> String {
        var line = "mode \(status.mode.rawValue)\(status.recording ? ", recording now" : "")"
        line += "; \(status.kept) kept, \(String(format: "%.1f", Double(status.bytes) / 1_048_576)) of \(status.capBytes >> 20) MB in \(status.directory)"
        if status.evicted > 0 { line += "; \(status.evicted) removed for room" }
        if status.suppressed > 0 { line += "; \(status.suppressed) events in the blind time" }
        if status.failed > 0 { line += "; \(status.failed) lost: \(status.lastError ?? "?")" }
        if status.abandoned > 0 { line += "; \(status.abandoned) given up (the disk fell behind)" }
        return line
    }
}
