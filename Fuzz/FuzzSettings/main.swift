import CamoMedia
import CamoStorage
import CamoWire
import Foundation
import FuzzSupport
import Logging

@testable import CamoProducerKit

// The settings the agent accepts from outside: a web page's or script's PUT /api/settings body (a JSON object of
// names and values; text read as the command line reads it), `camo-agent settings set NAME=VALUE` lines, and the
// saved settings.json. Each value is checked against the settings model (the controller's own settings and a vivid
// camera's controls) as the controller checks a write; what passes goes into the image transform, which is applied
// to a small frame as the camera thread would.
//
// Input: byte 0 picks the form (modulo 3: body, command lines, settings.json); the rest is the text.

let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
let captureSize = VideoSize(width: 64, height: 36)
let frame = VideoFrame(
    width: 64, height: 36, bytesPerRow: 256, data: (0..<(256 * 36)).map { UInt8(truncatingIfNeeded: $0) }, captureTime: 0)

/// The controls vivid offers (its integer, 64-bit integer, menu, boolean and button test controls) and a UVC webcam's.
let controls: [CameraControl] = [
    CameraControl(id: 1, name: "brightness", label: "Brightness", kind: .integer, minimum: -64, maximum: 64, step: 1,
                  defaultValue: 0, value: 0, isReadOnly: false, isInactive: false, menu: []),
    CameraControl(id: 2, name: "white_balance_temperature", label: "White Balance Temperature", kind: .integer,
                  minimum: 2800, maximum: 6500, step: 10, defaultValue: 4600, value: 4600, isReadOnly: false, isInactive: true, menu: []),
    CameraControl(id: 3, name: "integer_32_bits", label: "Integer 32 Bits", kind: .integer, minimum: Int(Int32.min),
                  maximum: Int(Int32.max), step: 1, defaultValue: 0, value: 0, isReadOnly: false, isInactive: false, menu: []),
    CameraControl(id: 4, name: "integer_64_bits", label: "Integer 64 Bits", kind: .integer, minimum: Int.min, maximum: Int.max,
                  step: 1, defaultValue: 0, value: 0, isReadOnly: false, isInactive: false, menu: []),
    CameraControl(id: 5, name: "power_line_frequency", label: "Power Line Frequency", kind: .menu, minimum: 0, maximum: 2, step: 1,
                  defaultValue: 1, value: 1, isReadOnly: false, isInactive: false,
                  menu: [.init(value: 0, name: "Disabled"), .init(value: 1, name: "50 Hz"), .init(value: 2, name: "60 Hz")]),
    CameraControl(id: 6, name: "integer_menu", label: "Integer Menu", kind: .integerMenu, minimum: 1, maximum: 8, step: 1,
                  defaultValue: 4, value: 4, isReadOnly: false, isInactive: false,
                  menu: [.init(value: 1, name: "16"), .init(value: 4, name: "-1237483"), .init(value: 8, name: "9223372036854775807")]),
    CameraControl(id: 7, name: "boolean", label: "Boolean", kind: .boolean, minimum: 0, maximum: 1, step: 1, defaultValue: 1,
                  value: 1, isReadOnly: false, isInactive: false, menu: []),
    CameraControl(id: 8, name: "button", label: "Button", kind: .button, minimum: 0, maximum: 0, step: 0, defaultValue: 0,
                  value: nil, isReadOnly: false, isInactive: false, menu: []),
    CameraControl(id: 9, name: "read_only_integer_32_bits", label: "Read-Only Integer 32 Bits", kind: .integer, minimum: 0,
                  maximum: 255, step: 1, defaultValue: 0, value: 0, isReadOnly: true, isInactive: false, menu: []),
]

let model: [String: SettingDescriptor] = {
    let descriptors = SettingsCatalog.core(
        agent: [:], camera: [:], captureSize: captureSize, paused: false, muted: false, lastContact: nil,
        information: ["model": "fuzz"]) + controls.map(SettingsCatalog.descriptor)
    return Dictionary(descriptors.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
}()

/// A write as the controller takes it: each value checked against its descriptor; what passes is kept.
func write(_ values: [String: SettingValue], fromText: Bool) {
    var camera: [String: SettingValue] = [:]
    for (name, value) in values {
        guard let descriptor = model[name] else { continue }
        var typed = value
        if fromText, case .text(let text) = value, descriptor.kind != .choice { typed = descriptor.parse(text) }
        guard case .success(let applied) = SettingsCatalog.check(typed, against: descriptor, captureSize: captureSize) else { continue }
        _ = applied.description
        if SettingsCatalog.perCamera.contains(name) { camera[name] = applied }
        if let control = controls.first(where: { $0.name == name }), case .text(let text) = value {
            _ = try? control.parse(text)
        }
    }
    show(camera)
}

/// The transform the values describe, on a frame.
func show(_ camera: [String: SettingValue]) {
    let transform = SettingsCatalog.transform(camera)
    if !transform.isIdentity { _ = transform.apply(frame) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSettings(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let rest = UnsafeBufferPointer(start: start + 1, count: count - 1)
    switch start[0] % 3 {
    case 0:
        // PUT /api/settings: a JSON object; a form sends text, read as the command line reads it.
        guard let values = try? JSONDecoder().decode([String: SettingValue].self, from: Data(rest)), values.count <= 256 else { return 0 }
        write(values, fromText: true)
    case 1:
        // camo-agent settings set NAME=VALUE ..., one a line.
        var values: [String: SettingValue] = [:]
        for line in String(decoding: rest, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            values[String(parts[0])] = .text(String(parts[1]))
            _ = SettingRectangle(parsing: String(parts[1]))
        }
        write(values, fromText: true)
    default:
        // settings.json in the state directory, loaded at start; the current camera's values become the transform.
        FuzzDirectory.write(rest, as: SettingsFile.fileName)
        let values = SettingsFile(directory: FuzzDirectory.path, logger: logger).load()
        for (_, camera) in values.cameras.prefix(4) { show(camera) }
        _ = values.agent.values.map(\.description)
    }
    return 0
}

/// Seeds: bodies and lines the agent's tests and the README use, and a settings.json as the agent saves it.
func writeSeeds() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let bodies: [[String: SettingValue]] = [
        ["imageRotation": .int(90), "microphoneMuted": .bool(true)],
        ["viewport": .rectangle(SettingRectangle(x1: 8, y1: 4, x2: 40, y2: 30, width: 64, height: 36)), "imageFlipHorizontal": .bool(true)],
        ["viewport": .text("10,5-50,30"), "imageRotation": .text("270"), "imageFlipVertical": .text("on")],
        ["brightness": .int(12), "power_line_frequency": .text("60 Hz"), "white_balance_temperature": .int(5000), "button": .int(1)],
        ["nightVision": .text("auto"), "integer_64_bits": .int(Int.max), "integer_menu": .text("16"), "boolean": .bool(false)],
    ]
    for (index, body) in bodies.enumerated() {
        FuzzSeeds.write([0] + Array(try! encoder.encode(body)), name: "body-\(index)")
    }
    FuzzSeeds.write([1] + Array("imageRotation=180\nviewport=0,0,32,18@64x36\nbrightness=-3\npower_line_frequency=50 Hz\n".utf8), name: "lines")
    var saved = SettingsValues()
    saved.agent = ["microphoneMuted": .bool(true), "speakerVolumeLevel": .int(40)]
    saved.cameras[SettingsValues.testPatternKey] = [
        "imageRotation": .int(90), "viewport": .rectangle(SettingRectangle(x1: 0, y1: 0, x2: 32, y2: 18, width: 64, height: 36)),
    ]
    saved.cameras["usb:046d:085c:ABC123"] = ["imageFlipVertical": .bool(true), "brightness": .int(140)]
    FuzzDirectory.clear()
    let file = SettingsFile(directory: FuzzDirectory.path, logger: logger)
    file.save(saved)
    file.flush()
    FuzzSeeds.write([2] + (FileManager.default.contents(atPath: FuzzDirectory.path + "/" + SettingsFile.fileName).map(Array.init) ?? []), name: "settings-json")
}

if FuzzSeeds.directory != nil {
    writeSeeds()
    exit(0)
}

runFuzzDriver { fuzzSettings($0, $1) }
