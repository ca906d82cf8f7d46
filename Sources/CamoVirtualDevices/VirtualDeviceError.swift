import CamoSystem

/// Why a virtual device cannot be fed. Each description is a sentence that says what to do.
public enum VirtualDeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A format that cannot be offered.
    case badFormat(String)
    /// The device node does not exist.
    case noDevice(path: String)
    /// The node exists but is not a v4l2loopback device (another driver, e.g. a real camera or vivid).
    case notLoopback(path: String, driver: String, card: String)
    /// Another program already writes to this loopback device.
    case busy(path: String)
    /// The device refused the format.
    case formatRefused(path: String, format: String, reason: String)
    /// The virtual microphone's ALSA device cannot be used.
    case microphone(device: String, reason: String)
    /// The virtual microphone's PipeWire source cannot be made or fed.
    case pipeWire(node: String, reason: String)
    /// A system call failed.
    case system(SystemCallError)

    public var description: String {
        switch self {
        case .badFormat(let reason):
            "\(reason)."
        case .noDevice(let path):
            "\(path) does not exist: load v4l2loopback with `sudo camo-studio setup` (or give --device the loopback's node; `camo-studio status` lists them)."
        case .notLoopback(let path, let driver, let card):
            "\(path) is \"\(card)\" (driver \(driver)), not a v4l2loopback device: give --device the loopback's node, or load v4l2loopback at another number with `sudo camo-studio setup --video-nr N`."
        case .busy(let path):
            "\(path) is already fed by another program (v4l2loopback takes one writer): stop it (`fuser -v \(path)` names it), or feed another loopback device with --device."
        case .formatRefused(let path, let format, let reason):
            "\(path) refused \(format) (\(reason)): another program may have fixed its format (keep_format); reload v4l2loopback or choose another device with --device."
        case .microphone(let device, let reason):
            "the virtual microphone \(device): \(reason). Load snd-aloop with `sudo camo-studio setup`, check that no other program plays into \(device) (`fuser -v /dev/snd/*`), or pass --microphone none."
        case .pipeWire(let node, let reason):
            "the virtual microphone's PipeWire source \(node): \(reason). Check that PipeWire runs for this user (`systemctl --user status pipewire`; XDG_RUNTIME_DIR must be set, as it is in a desktop session), or pass --microphone with an ALSA device (snd-aloop: `sudo camo-studio setup`) or none."
        case .system(let error):
            "\(error)."
        }
    }
}
