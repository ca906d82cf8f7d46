import CV4L2
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 node that can capture video.
public struct VideoDeviceInfo: Sendable, Equatable {
    /// Device node, e.g. `/dev/video0`.
    public var path: String
    /// The card name the driver reports, e.g. `HD Pro Webcam C920`.
    public var card: String
    /// Where it is attached, e.g. `usb-0000:00:14.0-1`.
    public var busInfo: String
    /// The driver name, e.g. `uvcvideo`.
    public var driver: String

    /// Creates a description from its parts.
    public init(path: String, card: String, busInfo: String, driver: String) {
        self.path = path
        self.card = card
        self.busInfo = busInfo
        self.driver = driver
    }
}

/// Finds real cameras and microphones, to decide whether to fall back to the synthetic sources.
public enum DeviceProbe {
    private static let logger = Logger(label: "camo.capture.probe")

    /// Paths of the `/dev/video*` nodes that report video capture (single- or multi-planar).
    public static func videoCaptureDevices() -> [String] {
        videoCaptureDeviceInfo().map(\.path)
    }

    /// The `video*` nodes in `directory` that answer VIDIOC_QUERYCAP with video capture
    /// (`V4L2_CAP_VIDEO_CAPTURE` or `_MPLANE`, using `device_caps` when the driver sets
    /// `V4L2_CAP_DEVICE_CAPS`), ordered by node number.
    public static func videoCaptureDeviceInfo(in directory: String = "/dev") -> [VideoDeviceInfo] {
        videoNodeNames(in: directory).compactMap { name in
            queryCapture(path: directory.hasSuffix("/") ? directory + name : directory + "/" + name)
        }
    }

    // MARK: Helpers (C calls)

    /// `video<N>` entries of `directory`, sorted by N.
    private static func videoNodeNames(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [(number: Int, name: String)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("video"), let number = Int(name.dropFirst(5)), number >= 0 else { continue }
            names.append((number, name))
        }
        return names.sorted { $0.number < $1.number }.map(\.name)
    }

    /// Opens `path` through libv4l2 and asks VIDIOC_QUERYCAP; nil unless it captures video.
    private static func queryCapture(path: String) -> VideoDeviceInfo? {
        let fd = camo_v4l2_open(path, O_RDWR | O_NONBLOCK)
        guard fd >= 0 else {
            logger.debug("cannot open video node", metadata: ["path": "\(path)", "errno": "\(errno)"])
            return nil
        }
        defer { v4l2_close(fd) }
        var capability = v4l2_capability()
        guard camo_v4l2_ioctl(fd, CAMO_VIDIOC_QUERYCAP, &capability) == 0 else {
            logger.debug("VIDIOC_QUERYCAP failed", metadata: ["path": "\(path)", "errno": "\(errno)"])
            return nil
        }
        let caps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
            ? capability.device_caps : capability.capabilities
        let captureMask = UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE)
        guard caps & captureMask != 0 else { return nil }
        return VideoDeviceInfo(
            path: path, card: cString(capability.card), busInfo: cString(capability.bus_info),
            driver: cString(capability.driver))
    }

    /// A NUL-terminated fixed-size C char array as a String.
    private static func cString<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
