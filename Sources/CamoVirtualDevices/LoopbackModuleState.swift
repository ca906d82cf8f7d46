import Foundation

/// v4l2loopback as loaded: the parameters sysfs shows (/sys/module/v4l2loopback/parameters) and its devices.
///
/// Not every parameter can be read back: v4l2loopback 0.12 hides `card_label` and `devices`, so a device's label
/// comes from its node's name. `video_nr` and `exclusive_caps` are lists, one entry per device it may make (8).
public struct LoopbackModuleState: Sendable, Equatable, Codable {
    /// Every readable parameter by name, as sysfs prints it ("10,-1,-1,-1,-1,-1,-1,-1", "Y,N,N,N,N,N,N,N").
    public var parameters: [String: String]
    /// The `video_nr` list: the number asked for each device, -1 where the kernel chose.
    public var requestedNumbers: [Int]
    /// The `exclusive_caps` list, one entry per device.
    public var exclusiveCaps: [Bool]
    /// Its devices, by number.
    public var devices: [VideoNode]

    /// A state with these values.
    public init(parameters: [String: String], requestedNumbers: [Int], exclusiveCaps: [Bool], devices: [VideoNode]) {
        self.parameters = parameters
        self.requestedNumbers = requestedNumbers
        self.exclusiveCaps = exclusiveCaps
        self.devices = devices
    }

    static let moduleDirectory = "/sys/module/v4l2loopback"

    /// The module's state; nil when it is not loaded.
    public static func read(from host: any LoopbackHost) -> LoopbackModuleState? {
        guard host.exists(moduleDirectory) else { return nil }
        let folder = moduleDirectory + "/parameters"
        var parameters: [String: String] = [:]
        for name in host.list(folder) {
            if let value = host.read(folder + "/" + name) { parameters[name] = value }
        }
        let numbers = (parameters["video_nr"] ?? "").split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let exclusive = (parameters["exclusive_caps"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) == "Y" || $0 == "1" }
        return LoopbackModuleState(
            parameters: parameters, requestedNumbers: numbers, exclusiveCaps: exclusive,
            devices: VideoNode.all(from: host).filter(\.isLoopback))
    }

    /// The loopback device `/dev/video<number>`, if it is one of this module's.
    public func device(number: Int) -> VideoNode? { devices.first { $0.number == number } }

    /// Whether `/dev/video<number>` was made with exclusive_caps=1; nil when that cannot be told (the device's
    /// number was chosen by the kernel and the devices were not all made alike).
    public func exclusiveCaps(number: Int) -> Bool? {
        if let index = requestedNumbers.firstIndex(of: number), index < exclusiveCaps.count {
            return exclusiveCaps[index]
        }
        let used = exclusiveCaps.prefix(devices.count)
        guard let first = used.first, used.allSatisfy({ $0 == first }) else { return nil }
        return first
    }

    /// The parameters that say how it was loaded, as `name=value` words in name order.
    public var parameterSummary: String {
        parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// One line per device: `/dev/video10 "Camo" (exclusive_caps on)`.
    public var deviceLines: [String] {
        devices.map { device in
            switch exclusiveCaps(number: device.number) {
            case true?: "\(device.described) (exclusive_caps on)"
            case false?: "\(device.described) (exclusive_caps off: Chrome does not list it)"
            case nil: device.described
            }
        }
    }
}
