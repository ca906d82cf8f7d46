/// Why `camo-studio setup` could not make the virtual camera or microphone. Each ``description`` is one sentence
/// saying what went wrong and what to do about it.
public enum LoopbackSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device number is outside what V4L2 allows.
    case invalidVideoNumber(Int)
    /// The label cannot be passed to the kernel as it is.
    case invalidLabel(String, reason: String)
    /// Loading modules needs root and this process is not root.
    case notRoot
    /// A module tool (`modprobe`, `modinfo`) is not installed.
    case toolMissing(String)
    /// `modinfo v4l2loopback` fails: the module is not installed for the running kernel. `headersInstalled` says
    /// whether /lib/modules/KERNEL/build exists, which DKMS needs to build it.
    case cameraModuleMissing(kernel: String, headersInstalled: Bool)
    /// `modinfo snd-aloop` fails: the kernel's extra modules are not installed.
    case microphoneModuleMissing(kernel: String)
    /// The kernel refused an unsigned module because Secure Boot is on (modprobe says "Key was rejected by
    /// service" or "Required key not available"). `secureBoot` is what `mokutil --sb-state` said (nil: unknown).
    case secureBootRejected(module: String, secureBoot: Bool?, message: String)
    /// `/dev/video<number>` belongs to another driver (vivid, a real camera).
    case deviceNumberTaken(number: Int, name: String?)
    /// v4l2loopback is loaded, but `/dev/video<number>` is not one of its devices.
    case loadedWithoutDevice(number: Int, devices: [VideoNode])
    /// The module loaded, but `/dev/video<number>` did not appear as a loopback device.
    case deviceDidNotAppear(number: Int, devices: [VideoNode])
    /// snd-aloop loaded, but no card named CamoMic appeared in /proc/asound/cards.
    case microphoneDidNotAppear(cards: [LoopbackSoundCard])
    /// modprobe failed for another reason; `message` is its own.
    case loadFailed(command: [String], status: Int32, message: String)

    public var description: String {
        switch self {
        case .invalidVideoNumber(let number):
            return "The device number \(number) is out of range: choose one from 0 to 255 with --video-nr."
        case .invalidLabel(let label, let reason):
            return "The label \"\(label)\" cannot be used because \(reason): choose another with --label."
        case .notRoot:
            return "Loading kernel modules needs root: run it with sudo (sudo camo-studio setup ...), or see what it would run with --dry-run."
        case .toolMissing(let tool):
            return "\(tool) is not installed: install it with sudo apt install kmod and run setup again."
        case .cameraModuleMissing(let kernel, let headersInstalled):
            let headers = headersInstalled ? "" :
                " (this kernel has no headers, which DKMS needs to build it: sudo apt install linux-headers-\(kernel) first)"
            return "v4l2loopback is not installed for the running kernel \(kernel): install it with sudo apt install v4l2loopback-dkms\(headers) and run setup again."
        case .microphoneModuleMissing(let kernel):
            return "snd-aloop is not installed for the running kernel \(kernel): install the kernel's extra modules (on Ubuntu sudo apt install linux-modules-extra-\(kernel)), or run setup with --no-microphone."
        case .secureBootRejected(let module, let secureBoot, let message):
            let state = switch secureBoot {
            case true?: "Secure Boot is enabled and "
            case false?: ""
            case nil: "Secure Boot is probably enabled and "
            }
            return "The kernel refused to load \(module) (\(message)): \(state)the module is not signed with a key it trusts; enrol DKMS's signing key with sudo mokutil --import /var/lib/dkms/mok.pub (choose a one-time password), reboot, choose \"Enroll MOK\" in the blue MOK manager screen and enter that password, then run setup again."
        case .deviceNumberTaken(let number, let name):
            let owner = name.map { " (\"\($0)\")" } ?? ""
            return "/dev/video\(number) already belongs to another driver\(owner), not v4l2loopback: choose a free number with --video-nr (ls /dev/video* shows the taken ones)."
        case .loadedWithoutDevice(let number, let devices):
            let list = devices.isEmpty ? "none" : devices.map(\.described).joined(separator: ", ")
            let other = devices.first.map { " use --video-nr \($0.number) for its device," } ?? ""
            return "v4l2loopback is already loaded, but /dev/video\(number) is not one of its devices (its devices: \(list)):\(other) or, once no program uses it, unload it with sudo modprobe -r v4l2loopback and run setup again."
        case .deviceDidNotAppear(let number, let devices):
            let list = devices.isEmpty ? "none" : devices.map(\.described).joined(separator: ", ")
            return "v4l2loopback loaded, but /dev/video\(number) did not appear as its device (its devices: \(list)): unload it with sudo modprobe -r v4l2loopback and run setup again with another --video-nr."
        case .microphoneDidNotAppear(let cards):
            let list = cards.isEmpty ? "none" : cards.map(\.id).joined(separator: ", ")
            return "snd-aloop loaded, but no sound card named \(LoopbackSetupOptions.microphoneCardID) appeared (its cards: \(list)): unload it with sudo modprobe -r snd-aloop and run setup again, or run it with --no-microphone."
        case .loadFailed(let command, let status, let message):
            let said = message.isEmpty ? "exited with status \(status)" : "failed: \(message)"
            return "\(shellLine(command)) \(said); dmesg shows the kernel's side of it."
        }
    }
}
