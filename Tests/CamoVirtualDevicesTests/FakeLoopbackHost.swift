import CamoVirtualDevices
import Synchronization

/// A model of the machine setup runs on: files in sysfs and procfs as a dictionary, and `modinfo`, `modprobe` and
/// `mokutil` answering from the model. A successful `modprobe v4l2loopback ...` makes the module's parameters and
/// its device node the way v4l2loopback 0.12 does (card_label and devices unreadable, lists of 8 entries); a
/// successful `modprobe snd-aloop id=X` adds card X to /proc/asound/cards. Every command run is recorded.
final class FakeLoopbackHost: LoopbackHost {
    struct State {
        var files: [String: String] = ["/proc/sys/kernel/osrelease": "6.1.0-56-amd64", "/lib/modules/6.1.0-56-amd64/build/Makefile": ""]
        var commands: [[String]] = []
        var installed: Set<String> = ["v4l2loopback", "snd-aloop"]
        var root = true
        /// What modprobe of a module answers instead of loading it.
        var modprobeFailures: [String: CommandResult] = [:]
        /// What `mokutil --sb-state` prints; nil: mokutil is not installed.
        var secureBoot: String?
        /// Tools that are not installed.
        var missingTools: Set<String> = []
        /// Whether a loaded v4l2loopback makes its device (false: the kernel put it elsewhere).
        var makesDevice = true
    }

    let state = Mutex(State())

    func update(_ body: (inout State) -> Void) { state.withLock { body(&$0) } }
    var commands: [[String]] { state.withLock { $0.commands } }

    // MARK: The model

    /// A V4L2 node of some driver: a loopback one has max_openers.
    func addVideoNode(_ number: Int, name: String, loopback: Bool = false) {
        update { state in
            state.files["/sys/class/video4linux/video\(number)/name"] = name
            state.files["/sys/class/video4linux/video\(number)/dev"] = "81:\(number)"
            if loopback { state.files["/sys/class/video4linux/video\(number)/max_openers"] = "10" }
        }
    }

    /// v4l2loopback as if loaded with these devices (the number asked for, whether exclusive, the label).
    func loadLoopback(_ devices: [(number: Int, exclusive: Bool, label: String)], requestedNumbers: [Int]? = nil) {
        let numbers = (requestedNumbers ?? devices.map(\.number)) + Array(repeating: -1, count: 8)
        let exclusive = devices.map(\.exclusive) + Array(repeating: false, count: 8)
        update { state in
            let folder = "/sys/module/v4l2loopback/parameters/"
            state.files[folder + "video_nr"] = numbers.prefix(8).map(String.init).joined(separator: ",")
            state.files[folder + "exclusive_caps"] = exclusive.prefix(8).map { $0 ? "Y" : "N" }.joined(separator: ",")
            state.files[folder + "max_buffers"] = "2"
            state.files[folder + "max_openers"] = "10"
            state.files[folder + "debug"] = "0"
        }
        for device in devices { addVideoNode(device.number, name: device.label, loopback: true) }
    }

    /// snd-aloop as if loaded with a card of this id at this index.
    func loadAloop(id: String, index: Int) {
        update { state in
            state.files["/sys/module/snd_aloop/parameters/pcm_substreams"] = "8"
            let cards = state.files["/proc/asound/cards"] ?? " 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xf7f10000 irq 32\n"
            let padded = id.padding(toLength: max(15, id.count), withPad: " ", startingAt: 0)
            state.files["/proc/asound/cards"] = cards + " \(index) [\(padded)]: Loopback - Loopback\n                      Loopback 1\n"
        }
    }

    // MARK: LoopbackHost

    func run(_ arguments: [String]) -> CommandResult {
        let tool = arguments.first ?? ""
        var result = CommandResult.success()
        var loadCamera: [String: String]?
        var loadMicrophone: [String: String]?
        update { state in
            state.commands.append(arguments)
            if state.missingTools.contains(tool) {
                result = .missing(tool)
                return
            }
            switch tool {
            case "modinfo":
                let module = arguments.last ?? ""
                result = state.installed.contains(module)
                    ? .success("filename:       /lib/modules/6.1.0-56-amd64/updates/dkms/\(module).ko\n")
                    : CommandResult(status: 1, errors: "modinfo: ERROR: Module \(module) not found.\n")
            case "modprobe":
                let module = arguments.count > 1 ? arguments[1] : ""
                if let failure = state.modprobeFailures[module] {
                    result = failure
                    return
                }
                guard state.root else {
                    result = CommandResult(status: 1, errors: "modprobe: ERROR: could not insert '\(module)': Operation not permitted\n")
                    return
                }
                var parameters: [String: String] = [:]
                for argument in arguments.dropFirst(2) {
                    let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
                    parameters[parts[0]] = parts.count > 1 ? parts[1] : ""
                }
                if module == "v4l2loopback" { loadCamera = parameters }
                if module == "snd-aloop" { loadMicrophone = parameters }
            case "mokutil":
                result = state.secureBoot.map { .success($0 + "\n") } ?? .missing("mokutil")
            default:
                result = .missing(tool)
            }
        }
        if let parameters = loadCamera {
            let number = Int(parameters["video_nr"] ?? "") ?? 0
            let exclusive = parameters["exclusive_caps"] == "1"
            let label = parameters["card_label"] ?? "Dummy video device (0x0000)"
            if state.withLock({ $0.makesDevice }) {
                loadLoopback([(number, exclusive, label)])
            } else {
                loadLoopback([(number + 1, exclusive, label)], requestedNumbers: [number])
            }
        }
        if let parameters = loadMicrophone {
            loadAloop(id: parameters["id"] ?? "Loopback", index: 1)
        }
        return result
    }

    func read(_ path: String) -> String? { state.withLock { $0.files[path] } }

    func list(_ directory: String) -> [String] {
        let prefix = directory + "/"
        let names = state.withLock { state in
            state.files.keys.filter { $0.hasPrefix(prefix) }.compactMap { $0.dropFirst(prefix.count).split(separator: "/").first.map(String.init) }
        }
        return Set(names).sorted()
    }

    func exists(_ path: String) -> Bool {
        state.withLock { state in state.files[path] != nil || state.files.keys.contains { $0.hasPrefix(path + "/") } }
    }

    var isRoot: Bool { state.withLock { $0.root } }
}
