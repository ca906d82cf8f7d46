import ArgumentParser
import CamoCapture
import CamoCodec
import CamoMedia
import CamoAgentKit
import CamoProducerKit
import Foundation

/// `camo-agent devices`: every camera with its formats, sizes and rates, and every microphone.
struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the cameras (V4L2 capture devices) with their formats, sizes and frame rates, the microphones (ALSA capture devices), and the H.264 encoders this host has.")

    @Flag(help: "Print JSON.") var json = false
    /// Accepted like every command's, so scripts can pass it everywhere; listing devices needs no state.
    @OptionGroup var state: StateOptions

    struct Listing: Codable {
        var identity: CameraIdentity
        var formats: [Format]?
        var error: String?
    }

    struct Format: Codable {
        var fourcc: String
        var name: String
        var compressed: Bool
        var convertible: Bool
        var sizes: [String]
    }

    func run() async throws {
        let listings = DeviceProbe.videoCaptureDeviceInfo().map { info -> Listing in
            let identity = CameraIdentity(info)
            do {
                let formats = try CameraSource.formats(path: info.path).map { format in
                    Format(
                        fourcc: format.fourcc.description, name: format.name, compressed: format.isCompressed,
                        convertible: CameraSource.canConvert(format.fourcc), sizes: format.sizes.map(Self.describe))
                }
                return Listing(identity: identity, formats: formats, error: nil)
            } catch {
                return Listing(identity: identity, formats: nil, error: "\(error)")
            }
        }
        let microphones = MicrophoneSource.devices()
        let encoders = H264Encoders.probe().map {
            Encoder(name: $0.kind.rawValue, available: $0.available, detail: $0.detail)
        }
        let automatic = try? H264Encoders.resolve(.auto)
        if json {
            print(try DeviceText.json(DeviceList(
                cameras: listings, microphones: microphones, encoders: encoders, autoEncoder: automatic?.rawValue)))
            return
        }
        if listings.isEmpty {
            print("No camera found. (Is it plugged in? Does `ls /dev/video*` show it? Is this user in the 'video' group?)")
        }
        for listing in listings {
            print(DeviceText.describe(listing.identity))
            if let error = listing.error { print("  error: \(error)") }
            for format in listing.formats ?? [] {
                let note = format.convertible ? "" : "  (cannot convert)"
                print("  \(format.fourcc) \(format.name)\(format.compressed ? ", compressed" : "")\(note)")
                for size in format.sizes { print("    \(size)") }
            }
        }
        if microphones.isEmpty {
            print("No microphone found. (Does `arecord -l` list one? Is this user in the 'audio' group?)")
        } else {
            print("Microphones (pass the name to --microphone; default is `default`):")
        }
        for microphone in microphones {
            print("  \(microphone.name)" + (microphone.description.isEmpty ? "" : "  \(microphone.description)"))
            var details: [String] = []
            if let formats = microphone.formats { details.append(formats.joined(separator: " ")) }
            if let channels = microphone.channels { details.append(channels.count == 1 ? "\(channels.lowerBound) ch" : "\(channels.lowerBound)-\(channels.upperBound) ch") }
            if let rates = microphone.rates { details.append(rates.count == 1 ? "\(rates.lowerBound) Hz" : "\(rates.lowerBound)-\(rates.upperBound) Hz") }
            if let note = microphone.note { details.append("(\(note))") }
            if !details.isEmpty { print("    " + details.joined(separator: ", ")) }
        }
        print("H.264 encoders (--encoder; auto takes \(automatic?.rawValue ?? "none: studios on the network get JPEG")):")
        for encoder in encoders {
            print("  \(encoder.name): \(encoder.available ? "available" : "not available"), \(encoder.detail)")
        }
    }

    /// One H.264 encoder in the listing.
    struct Encoder: Codable {
        var name: String
        var available: Bool
        var detail: String
    }

    /// What `devices --json` prints.
    struct DeviceList: Codable {
        var cameras: [Listing]
        var microphones: [MicrophoneInfo]
        var encoders: [Encoder]
        /// What `--encoder auto` picks here (nil: none).
        var autoEncoder: String?
    }

    static func describe(_ size: CameraFrameSize) -> String {
        switch size {
        case .discrete(let width, let height, let intervals):
            let rates = intervals.map { interval -> String in
                switch interval {
                case .discrete(let fraction): return rate(fraction.framesPerSecond)
                case .range(let fastest, let slowest):
                    return "\(rate(slowest.framesPerSecond))-\(rate(fastest.framesPerSecond))"
                }
            }
            return "\(width)x\(height)" + (rates.isEmpty ? " (rate set by the driver)" : " @ " + rates.joined(separator: " ") + " fps")
        case .stepwise(let range):
            return "\(range.minWidth)x\(range.minHeight) to \(range.maxWidth)x\(range.maxHeight), steps \(range.stepWidth)x\(range.stepHeight)"
        }
    }

    static func rate(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// `camo-agent info`: this host, the camera in use, the software version.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Shows this host, the camera in use (with its USB vendor, product and serial) and the software version.")

    @OptionGroup var state: StateOptions
    @Flag(help: "Print JSON.") var json = false

    struct Report: Codable {
        var host: String
        var system: String
        var machine: String
        var softwareVersion: String
        var protocolVersion: String
        var agentRunning: Bool
        var cameraInUse: String?
        var camera: CameraIdentity?
    }

    func run() async throws {
        let running = try? await state.send("status")
        let cameras = DeviceProbe.videoCaptureDeviceInfo().map { CameraIdentity($0) }
        let inUse = running?.status?.camera
        // The camera the running agent names, else the one `--camera auto` would take.
        let camera = cameras.first { inUse != nil && $0.helloName == inUse } ?? (running == nil ? cameras.first : nil)
        let report = Report(
            host: ProcessInfo.processInfo.hostName, system: ProcessInfo.processInfo.operatingSystemVersionString,
            machine: AgentVersion.machine, softwareVersion: AgentVersion.software,
            protocolVersion: "\(AgentVersion.protocolMajor).\(AgentVersion.protocolMinor)",
            agentRunning: running != nil, cameraInUse: inUse, camera: camera)
        if json {
            print(try DeviceText.json(report))
            return
        }
        print("host: \(report.host) (\(report.machine), \(report.system))")
        print("camo-agent \(report.softwareVersion), protocol \(report.protocolVersion)")
        if let inUse {
            print("agent: running, camera in use: \(inUse)")
        } else {
            print("agent: not running" + (camera == nil ? "; no camera found" : "; --camera auto would use:"))
        }
        if let camera { print(DeviceText.describe(camera)) }
    }
}

/// `camo-agent controls`: list or set camera controls, through the running agent when there is one.
struct Controls: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists the camera's controls (brightness, exposure, white balance, ...) or sets them.",
        discussion: """
            With an agent running (and no --camera), the agent's camera is used through its control socket; \
            otherwise the camera given with --camera, or the first one.
            Example: camo-agent controls --set brightness=140 --set power_line_frequency=50hz
            """)

    @OptionGroup var state: StateOptions
    @Option(help: "The camera to use directly (default: the running agent's camera, else the first camera).")
    var camera: String?
    @Option(name: .customLong("set"), help: "NAME=VALUE to set (repeatable). VALUE: a number, on/off, or a menu entry's name.")
    var assignments: [String] = []
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        for assignment in assignments where !assignment.contains("=") {
            throw ValidationError("--set takes NAME=VALUE, e.g. brightness=128, not '\(assignment)'.")
        }
    }

    func run() async throws {
        let pairs = assignments.map { assignment -> (String, String) in
            let parts = assignment.split(separator: "=", maxSplits: 1)
            return (String(parts[0]).trimmingCharacters(in: .whitespaces), parts.count > 1 ? String(parts[1]) : "")
        }
        var controls: [CameraControl]
        if camera == nil, (try? await state.send("status")) != nil {
            var changed: [CameraControl] = []
            for (name, value) in pairs {
                let response = try await state.send(
                    ControlRequest(command: "set-control", name: name, value: value))
                changed += response.controls ?? []
            }
            controls = pairs.isEmpty
                ? try await state.send("controls").controls ?? [] : changed
        } else {
            guard let path = camera ?? DeviceProbe.videoCaptureDevices().first else {
                throw ValidationErrorText("No camera found. Plug one in, or name it with --camera /dev/videoN.")
            }
            do {
                if pairs.isEmpty {
                    controls = try CameraSource.controls(path: path)
                } else {
                    controls = try pairs.map { try CameraSource.setControl(path: path, name: $0.0, value: $0.1) }
                }
            } catch {
                throw ValidationErrorText("\(error)")
            }
        }
        if json {
            print(try DeviceText.json(controls))
            return
        }
        for control in controls { print(DeviceText.describe(control)) }
    }
}

/// `camo-agent rescan`: the running agent looks for a lost camera now (udev runs this when a camera is added).
struct Rescan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tells the running agent to look for its camera now (udev runs this when a camera is plugged in).")
    @OptionGroup var state: StateOptions

    func run() async throws {
        do {
            _ = try await state.send("rescan")
            print("rescan requested")
        } catch let error as ControlError {
            if case .noAgent = error {
                // Nothing to tell: a camera plugged in while no agent runs is not an error.
                FileHandle.standardError.write(Data("camo-agent: no agent is running; nothing to rescan\n".utf8))
                return
            }
            throw error
        }
    }
}

/// Text and JSON forms shared by the device commands.
enum DeviceText {
    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func describe(_ identity: CameraIdentity) -> String {
        var lines = ["\(identity.path): \(identity.card) (driver \(identity.driver), bus \(identity.busInfo))"]
        if let vendor = identity.usbVendorId, let product = identity.usbProductId {
            var usb = "  USB \(vendor):\(product)"
            if let manufacturer = identity.usbManufacturer { usb += " \(manufacturer)" }
            if let name = identity.usbProduct { usb += " \(name)" }
            if let serial = identity.usbSerial { usb += ", serial \(serial)" }
            lines.append(usb)
        }
        if let link = identity.byIdLink { lines.append("  \(link)") }
        return lines.joined(separator: "\n")
    }

    static func describe(_ control: CameraControl) -> String {
        var text = "\(control.name) = \(control.value.map(String.init) ?? "-")"
        if let entry = control.menu.first(where: { $0.value == control.value }) { text += " (\(entry.name))" }
        text += "  [\(control.kind.rawValue); \(control.acceptedValues); default \(control.defaultValue)"
        if control.isReadOnly { text += "; read-only" }
        if control.isInactive { text += "; inactive" }
        return text + "]"
    }
}
