import CV4L2
import CamoSystem
import Glibc

/// A v4l2loopback device opened as its writer: the format is set once (VIDIOC_S_FMT on the output side, 30 fps
/// with VIDIOC_S_PARM) and frames are written with write(2). Plain open(2) and ioctl(2): libv4l2's emulation is
/// for capture devices. Not thread-safe: one owner writes.
final class LoopbackCamera {
    /// The device node.
    let path: String
    /// The driver's card label (what applications list), e.g. `Camo`.
    let card: String
    private var fd: Int32

    /// Opens `path`, checks it is a v4l2loopback device that takes a writer, and sets `format`.
    init(path: String, format: VirtualCameraFormat) throws(VirtualDeviceError) {
        self.path = path
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { throw .noDevice(path: path) }
            throw .system(.current("stat", path: path))
        }
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == EBUSY { throw .busy(path: path) }
            throw .system(.current("open", path: path))
        }
        self.fd = fd
        var capability = v4l2_capability()
        guard camo_ioctl(fd, CAMO_VIDIOC_QUERYCAP, &capability) == 0 else {
            let error = SystemCallError.current("VIDIOC_QUERYCAP", path: path)
            Glibc.close(fd)
            throw .system(error)
        }
        let driver = Self.string(capability.driver)
        card = Self.string(capability.card)
        guard driver == "v4l2 loopback" else {
            Glibc.close(fd)
            throw .notLoopback(path: path, driver: driver, card: card)
        }
        // With exclusive_caps=1 (what `camo-studio setup` loads) a device that has a writer announces capture
        // only; v4l2loopback itself would take a second writer and interleave both pictures.
        let caps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
        if caps & UInt32(V4L2_CAP_VIDEO_OUTPUT) == 0 && caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 {
            Glibc.close(fd)
            throw .busy(path: path)
        }
        do throws(VirtualDeviceError) {
            try setFormat(format)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    private func setFormat(_ format: VirtualCameraFormat) throws(VirtualDeviceError) {
        var request = v4l2_format()
        request.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        request.fmt.pix.width = UInt32(format.size.width)
        request.fmt.pix.height = UInt32(format.size.height)
        request.fmt.pix.pixelformat = format.pixelFormat.fourcc
        request.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        request.fmt.pix.bytesperline = UInt32(format.bytesPerLine)
        request.fmt.pix.sizeimage = UInt32(format.frameBytes)
        // libyuv's ARGBToYUY2/ARGBToI420 write BT.601 limited range: SMPTE 170M says so to the consumer.
        request.fmt.pix.colorspace = V4L2_COLORSPACE_SMPTE170M.rawValue
        guard camo_ioctl(fd, CAMO_VIDIOC_S_FMT, &request) == 0 else {
            let code = errno
            if code == EBUSY { throw .busy(path: path) }
            throw .formatRefused(path: path, format: format.description, reason: String(cString: strerror(code)))
        }
        guard request.fmt.pix.width == UInt32(format.size.width), request.fmt.pix.height == UInt32(format.size.height),
            request.fmt.pix.pixelformat == format.pixelFormat.fourcc
        else {
            throw .formatRefused(
                path: path, format: format.description,
                reason: "it offered \(request.fmt.pix.width)x\(request.fmt.pix.height) \(Self.fourcc(request.fmt.pix.pixelformat)) instead")
        }
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        parameters.parm.output.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(format.framesPerSecond))
        // Older v4l2loopback versions have no S_PARM on the output side; the rate then shows as their default.
        _ = camo_ioctl(fd, CAMO_VIDIOC_S_PARM, &parameters)
        // STREAMON on the output side marks this descriptor as the device's writer. v4l2loopback (0.12) only
        // does that for streaming writers: a write(2)-only writer that closes leaves an exclusive_caps device
        // announcing capture alone, and the next writer's VIDIOC_S_FMT fails with EINVAL until the module is
        // reloaded (seen in the VM). Frames are still written with write(2).
        var type = Int32(V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue)
        guard camo_ioctl(fd, CAMO_VIDIOC_STREAMON, &type) == 0 else {
            throw .system(.current("VIDIOC_STREAMON", path: path))
        }
    }

    /// Writes one whole frame.
    func write(_ bytes: [UInt8]) throws(VirtualDeviceError) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                if errno == EINTR { continue }
                throw .system(.current("write", path: path))
            }
            written += result
        }
    }

    /// Closes the device (consumers then see it end).
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private static func fourcc(_ code: UInt32) -> String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }, as: UTF8.self)
    }
}
