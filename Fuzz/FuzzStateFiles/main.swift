import CamoStorage
import CamoWire
import Foundation
import FuzzSupport
import Logging

@testable import CamoAgentKit
@testable import CamoProducerKit
@testable import CamoStudioKit

// The files the agent and the studio read at start: any bytes as the agent's paired list (paired.json) and identity
// (identity.json), the studio's paired agents (agents.json) and identity (studio-identity.json), and the agent's
// config file (config.json), through the loaders the programs use. A file that does not parse is kept aside and
// reported; the program goes on. After loading, the loaded list is changed once (written back) as the programs do.
//
// Input: byte 0 picks the file (modulo 5, in the order above); the rest is its content.

let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
let directory = FuzzDirectory.path
/// A valid studio identity, so loading agents.json does not make a new key every time.
let studioIdentity = Array(
    #"{"version":1,"content":{"id":"studio-fuzz","privateKey":"\#(Data(repeating: 0x11, count: 32).base64EncodedString())"}}"#.utf8)

func load(kind: Int, _ content: some Collection<UInt8>) {
    switch kind {
    case 0:
        FuzzDirectory.write(content, as: PairedDeviceStore.fileName)
        _ = try? PairedDeviceStore.peek(directory: directory)
        guard let store = try? PairedDeviceStore(directory: directory, logger: logger) else { return }
        if let first = store.all.first {
            _ = store.studio(id: first.id)
            try? store.markSeen(id: first.id, at: Date(timeIntervalSince1970: 1_795_000_000))
            _ = try? store.setSettingsReadOnly(id: first.id, true)
            _ = try? store.remove(id: first.id)
        }
    case 1:
        FuzzDirectory.write(content, as: "agents.json")
        _ = FileManager.default.createFile(atPath: directory + "/studio-identity.json", contents: Data(studioIdentity))
        guard let state = try? StudioState(directory: directory, logger: logger) else { return }
        if let first = state.pairedAgents.first {
            _ = state.agent(matching: first.id)
            _ = state.agent(matching: first.name)
            _ = try? state.remove(id: first.id)
        }
    case 2:
        FuzzDirectory.write(content, as: "studio-identity.json")
        _ = try? StudioState(directory: directory, logger: logger)
    case 3:
        FuzzDirectory.write(content, as: "identity.json")
        _ = try? AgentIdentity.loadOrCreate(in: directory, name: "desk", logger: logger)
    default:
        let path = FuzzDirectory.write(content, as: "config.json")
        var loader = AgentConfigurationLoader()
        guard (try? loader.apply(file: path, required: true)) != nil else { return }
        _ = try? loader.configuration.validate(sources: loader.sources)
        _ = loader.effectiveValues
        _ = loader.configuration.liveVideoSize
        _ = loader.configuration.loggerLevel
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStateFiles(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    load(kind: Int(start[0]) % 5, UnsafeBufferPointer(start: start + 1, count: count - 1))
    return 0
}

/// Seeds: each file as the programs write it.
func writeSeeds() throws {
    func seed(_ kind: UInt8, _ file: String, _ name: String) {
        FuzzSeeds.write([kind] + ((FileManager.default.contents(atPath: directory + "/" + file)).map(Array.init) ?? []), name: name)
    }
    let paired = Date(timeIntervalSince1970: 1_795_000_000)
    FuzzDirectory.clear()
    let store = try PairedDeviceStore(directory: directory, logger: logger)
    try store.add(PairedStudio(id: "studio-a", name: "Studio A", publicKey: [UInt8](repeating: 7, count: 32), pairedAt: paired))
    try store.add(PairedStudio(id: "studio-b", name: "Desk ü", publicKey: [UInt8](repeating: 9, count: 32), pairedAt: paired))
    _ = try store.setSettingsReadOnly(id: "studio-b", true)
    seed(0, PairedDeviceStore.fileName, "paired")

    FuzzDirectory.clear()
    let state = try StudioState(directory: directory, logger: logger)
    try state.add(PairedAgent(id: "agent-a", name: "Kitchen", publicKey: [UInt8](repeating: 3, count: 32), pairedAt: paired))
    try state.add(PairedAgent(id: "agent-b", name: "Desk #2", publicKey: [UInt8](repeating: 4, count: 32), pairedAt: paired))
    seed(1, "agents.json", "agents")
    seed(2, "studio-identity.json", "studio-identity")

    FuzzDirectory.clear()
    _ = try AgentIdentity.loadOrCreate(in: directory, name: "desk", logger: logger)
    seed(3, "identity.json", "identity")

    // The config: every key (the defaults as the loader encodes them), and a short one as the README shows.
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    FuzzSeeds.write([4] + Array(try encoder.encode(AgentConfiguration())), name: "config-all")
    FuzzSeeds.write([4] + Array(#"{"port": 47800, "camera": "/dev/video0", "allowUnpaired": false, "liveSize": "640x360", "cameraFps": 15.5, "name": "desk", "microphoneFormat": "s16"}"#.utf8), name: "config-short")
}

if FuzzSeeds.directory != nil {
    do { try writeSeeds() } catch { fatalError("seeds: \(error)") }
    exit(0)
}

runFuzzDriver { fuzzStateFiles($0, $1) }
