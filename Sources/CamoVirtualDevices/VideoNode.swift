/// A V4L2 device node as sysfs shows it: `/dev/video<number>`, its name, and whether v4l2loopback made it.
public struct VideoNode: Sendable, Equatable, Codable {
    /// The N in /dev/videoN.
    public var number: Int
    /// Its name (/sys/class/video4linux/videoN/name): a loopback device's card label, another driver's card name.
    public var name: String?
    /// Whether it is a v4l2loopback device: only those have the `max_openers` attribute v4l2loopback adds.
    public var isLoopback: Bool

    /// A node with these values.
    public init(number: Int, name: String?, isLoopback: Bool) {
        self.number = number
        self.name = name
        self.isLoopback = isLoopback
    }

    /// The device node's path.
    public var path: String { "/dev/video\(number)" }

    /// The sysfs class directory V4L2 nodes are listed in.
    static let classDirectory = "/sys/class/video4linux"

    /// `/dev/video<number>` as sysfs shows it; nil when there is no such node.
    public static func read(number: Int, from host: any LoopbackHost) -> VideoNode? {
        let folder = "\(classDirectory)/video\(number)"
        guard host.exists(folder) else { return nil }
        return VideoNode(number: number, name: host.read(folder + "/name"), isLoopback: host.exists(folder + "/max_openers"))
    }

    /// Every `/dev/videoN`, by number.
    public static func all(from host: any LoopbackHost) -> [VideoNode] {
        host.list(classDirectory)
            .compactMap { $0.hasPrefix("video") ? Int($0.dropFirst(5)) : nil }
            .sorted()
            .compactMap { read(number: $0, from: host) }
    }

    /// `/dev/video10 "Camo"`.
    public var described: String { name.map { "\(path) \"\($0)\"" } ?? path }
}
