import ArgumentParser
import CamoAgentKit
import CamoProducerKit
import CamoStorage
import CamoCommandLine
import Foundation
import Logging

/// `camo-agent pair`: opens the running agent's pairing window with a studio's code (argument, file, standard
/// input, or scanned by the camera), shows the 30 s countdown, and ends with success or the reason.
struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pairs a studio: give the code `camo-studio pair` shows (argument, --file, standard input) or --scan it with the camera.",
        discussion: """
            Talks to the running agent through its control socket. The agent checks the code, opens its pairing \
            window for 30 seconds and publishes _camopairing._tcp; the studio finds it and proves it knows the \
            code's secret. Ctrl-C cancels. Exit status: 0 paired, 1 not paired (the reason is printed), 130 cancelled.
            """)

    @Argument(help: "The pairing code (camo-pair:1?...). `-` or nothing (without --file or --scan) reads standard input.")
    var payload: String?
    @Option(help: "Read the pairing code from this file.") var file: String?
    @Flag(help: "Look for the studio's QR code with the agent's camera (hold the studio's screen up to it).") var scan = false
    @Flag(help: "Cancel the pairing in progress instead.") var cancel = false
    @OptionGroup var state: StateOptions

    func validate() throws {
        let sources = [payload != nil && payload != "-", file != nil, scan].filter { $0 }.count
        guard sources <= 1 else { throw ValidationError("Give the code one way: an argument, --file, standard input, or --scan.") }
        if cancel, sources > 0 || payload == "-" { throw ValidationError("--cancel takes no code.") }
    }

    func run() async throws {
        let socket = state.controlSocket
        if cancel {
            let response = try await ControlClient.send(ControlRequest(command: "cancel-pairing"), to: socket)
            print(response.ok ? "cancelled" : "no pairing in progress")
            return
        }
        let request: ControlRequest
        if scan {
            request = ControlRequest(command: "pair-scan")
        } else {
            let text: String
            if let file {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ValidationError("Cannot read the pairing code file \(file).")
                }
                text = String(decoding: data, as: UTF8.self)
            } else if let payload, payload != "-" {
                text = payload
            } else {
                text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            }
            request = ControlRequest(command: "pair", value: text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let opened = try await ControlClient.send(request, to: socket)
        guard opened.ok, let first = opened.pairing else {
            FileHandle.standardError.write(
                Data("camo-agent: not paired: \(opened.error ?? "the agent gave no reason")\(Self.hint(opened.errorCode))\n".utf8))
            throw ExitCode.failure
        }
        let interrupted = InterruptFlag.install()
        let progress = CountdownLine()
        let status = try await PairingFollower.follow(socket: socket, first: first, interrupted: { interrupted.fired }) {
            progress.show($0)
        }
        progress.finish()
        if status.phase == .paired {
            print("Paired with studio \(status.studioName ?? "?") (\(status.studioId ?? "?")).")
            return
        }
        FileHandle.standardError.write(Data("camo-agent: not paired: \(status.failure ?? "no reason given")\(Self.hint(status.failureCode))\n".utf8))
        throw status.failureCode == "cancelled" ? ExitCode(130) : ExitCode.failure
    }

    /// This program's way to act on a pairing failure (the library's sentence says what to do in its own terms).
    static func hint(_ code: String?) -> String {
        switch code {
        case "alreadyOpen": " (`camo-agent pair --cancel` cancels the open window.)"
        case "noFrames": " (Run the agent with a camera, or --camera image:FILE; or give the code's text: camo-agent pair PAYLOAD.)"
        case "timedOut": " (On the studio: camo-studio pair.)"
        case "notRunning": " (Start it with camo-agent run.)"
        default: ""
        }
    }
}

/// Prints the countdown: one line redrawn in place on a terminal, one line per second otherwise.
private final class CountdownLine {
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    private var lastSecond = -1
    private var lastInvalid = 0

    func show(_ status: PairingStatus) {
        let seconds = Int((status.remainingSeconds ?? 0).rounded(.up))
        for code in status.invalidCodes.dropFirst(lastInvalid) {
            write((isTerminal ? "\r\u{1B}[K" : "") + "seen a code that is not valid: \(code)\n")
        }
        lastInvalid = status.invalidCodes.count
        let text: String
        switch status.phase {
        case .scanning:
            text = "Scanning for the studio's QR code: \(seconds) s left (hold the screen up to the camera)"
        case .waiting:
            text = "Waiting for studio \(status.studioName ?? "?") to connect: \(seconds) s left"
        case .paired, .failed:
            return
        }
        if isTerminal {
            write("\r\u{1B}[K" + text)
        } else if seconds != lastSecond {
            write(text + "\n")
        }
        lastSecond = seconds
    }

    func finish() {
        if isTerminal, lastSecond >= 0 { write("\r\u{1B}[K") }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// `camo-agent paired`: the paired studios.
struct Paired: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the studios paired with this agent; --read-only and --allow-settings choose who may change settings.")
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var state: StateOptions
    @Option(name: .customLong("read-only"), help: "A studio id that may read the camera's settings but not change them (from its next session).")
    var readOnly: String?
    @Option(name: .customLong("allow-settings"), help: "A studio id that may change the camera's settings again (the default).")
    var allowSettings: String?

    func run() async throws {
        if let id = readOnly ?? allowSettings {
            let readOnly = self.readOnly != nil
            do {
                _ = try await state.send(ControlRequest(command: "settings-access", name: id, value: readOnly ? "read-only" : "read-write"))
            } catch ControlError.noAgent {
                let lock = try StateDirectoryLock(directory: state.stateDir)
                let store = try PairedDeviceStore(directory: state.stateDir, logger: Logger(label: "camo-agent"))
                guard try store.setSettingsReadOnly(id: id, readOnly) else {
                    throw ValidationError("No paired studio has the id \(id); `camo-agent paired` lists them.")
                }
                withExtendedLifetime(lock) {}
            }
            print(readOnly ? "\(id) may read settings but not change them" : "\(id) may change settings")
            return
        }
        let studios = try await PairedStudiosText.read(state)
        if json {
            let encoder = JSONStateFile<[PairedStudio]>.encoder
            print(String(decoding: try encoder.encode(studios), as: UTF8.self))
            return
        }
        print(PairedStudiosText.table(studios))
    }
}

/// `camo-agent unpair ID`: removes a studio; its live sessions end at once.
struct Unpair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Removes a paired studio (its live sessions end at once); it must pair again to connect.")
    @Argument(help: "The studio id (the first column of `camo-agent paired`).") var id: String
    @OptionGroup var state: StateOptions

    func run() async throws {
        let socket = state.controlSocket
        do {
            let response = try await ControlClient.send(ControlRequest(command: "unpair", value: id), to: socket)
            guard response.ok else { throw ControlError.refused(response.error ?? "no reason given") }
        } catch ControlError.noAgent {
            // No agent runs: edit the file, holding the state directory's lock so none starts meanwhile.
            let lock = try StateDirectoryLock(directory: state.stateDir)
            let store = try PairedDeviceStore(directory: state.stateDir, logger: Logger(label: "camo-agent"))
            guard try store.remove(id: id) else {
                throw ValidationError("No paired studio has the id \(id); `camo-agent paired` lists them.")
            }
            withExtendedLifetime(lock) {}
        }
        print("unpaired \(id)")
    }
}

enum PairedStudiosText {
    /// From the running agent, else from the state directory's file.
    static func read(_ state: StateOptions) async throws -> [PairedStudio] {
        let socket = state.controlSocket
        do {
            let response = try await ControlClient.send(ControlRequest(command: "paired"), to: socket)
            guard response.ok else { throw ControlError.refused(response.error ?? "no reason given") }
            return response.paired ?? []
        } catch ControlError.noAgent {
            return try PairedDeviceStore.peek(directory: state.stateDir)
        }
    }

    static func table(_ studios: [PairedStudio]) -> String {
        let formatter = ISO8601DateFormatter()
        let rows = [["ID", "NAME", "PAIRED AT", "LAST SEEN"]] + studios.map {
            [$0.id, $0.name, formatter.string(from: $0.pairedAt), $0.lastSeen.map(formatter.string(from:)) ?? "never"]
        }
        return TextTable.render(rows)
    }
}

/// `camo-agent debug-store-churn` (hidden): adds and removes studios in the paired-device list forever,
/// printing `k` on standard output after the k-th change is on disk. The SIGKILL test kills it at random
/// moments and checks that the file always holds the list after change k or k+1.
struct DebugStoreChurn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug-store-churn", abstract: "Test aid: churns the paired-device list.", shouldDisplay: false)
    @OptionGroup var state: StateOptions

    /// Change k (from 1): odd k adds studio k, even k removes studio k-3 (when there is one).
    static func apply(_ k: Int, to list: inout [String]) {
        if k % 2 == 1 { list.append("studio-\(k)") } else { list.removeAll { $0 == "studio-\(k - 3)" } }
    }

    func run() async throws {
        try AtomicFile.makeDirectory(state.stateDir)
        var logger = Logger(label: "camo-agent")
        logger.logLevel = .critical
        let store = try PairedDeviceStore(directory: state.stateDir, logger: logger)
        let key = [UInt8](repeating: 9, count: 32)
        var k = 0
        while true {
            k += 1
            if k % 2 == 1 {
                try store.add(PairedStudio(id: "studio-\(k)", name: "Studio \(k)", publicKey: key, pairedAt: Date(timeIntervalSince1970: Double(k))))
            } else {
                try store.remove(id: "studio-\(k - 3)")
            }
            FileHandle.standardOutput.write(Data("\(k)\n".utf8))
        }
    }
}
