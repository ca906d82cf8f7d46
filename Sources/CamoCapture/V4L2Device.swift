import CV4L2
import CamoMedia
import CamoSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why a camera operation failed, in words a user can act on.
public enum CameraError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device path does not exist.
    case notFound(path: String)
    /// The device exists but this user may not open it.
    case permissionDenied(path: String)
    /// Another program holds the camera.
    case busy(path: String)
    /// The node is not a video capture device (an output, metadata or radio node, or not V4L2 at all).
    case notACaptureDevice(path: String, detail: String)
    /// The camera went away (unplugged, driver unbound).
    case disconnected(path: String)
    /// No frame arrived in time.
    case timedOut(path: String, seconds: Double)
    /// The camera offers no format this program can convert to BGRA.
    case noConvertibleFormat(path: String, offered: [String])
    /// The format that was asked for is not offered by the camera.
    case formatNotOffered(path: String, format: String, offered: [String])
    /// An ioctl or system call failed.
    case systemCall(SystemCallError)

    public var description: String {
        switch self {
        case .notFound(let path):
            return "No camera at \(path). Run `camo-agent devices` to list the cameras, or plug the camera in."
        case .permissionDenied(let path):
            return "Permission denied opening \(path). Add this user to the 'video' group (or install the udev rules in udev/), then log in again."
        case .busy(let path):
            return "\(path) is in use by another program. Close it (for example a browser tab or another agent) and try again."
        case .notACaptureDevice(let path, let detail):
            return "\(path) is not a video capture device (\(detail)). Run `camo-agent devices` to list the cameras."
        case .disconnected(let path):
            return "The camera at \(path) went away (unplugged?). Plug it back in; the agent picks it up again."
        case .timedOut(let path, let seconds):
            return "The camera at \(path) sent no frame for \(seconds) s. Check the cable, or try another USB port."
        case .noConvertibleFormat(let path, let offered):
            return "The camera at \(path) offers no format this agent can convert (offered: \(offered.joined(separator: ", "))). Please report the camera model."
        case .formatNotOffered(let path, let format, let offered):
            return "The camera at \(path) does not offer \(format) (offered: \(offered.joined(separator: ", "))). Pick one of those, or none to let the agent choose."
        case .systemCall(let failure):
            return "Could not \(failure.operation) \(failure.path): \(failure.errno.description) (errno \(failure.code))."
        }
    }

    /// True when the error means the device is gone (so the agent should wait for it to return).
    public var isDisconnect: Bool {
        switch self {
        case .disconnected, .timedOut, .notFound: return true
        case .systemCall(let failure): return failure.meansDeviceGone
        default: return false
        }
    }
}

/// One memory-mapped plane of a capture buffer.
struct MappedPlane {
    let address: UnsafeMutableRawPointer
    let length: Int
}

/// A dequeued buffer: which ring slot, its payload per plane, the driver's sequence and timestamp.
struct DequeuedBuffer {
    var index: Int
    /// Bytes used and data offset per plane (inline storage: dequeuing allocates nothing).
    var bytesUsed = PlaneFigures()
    var dataOffset = PlaneFigures()
    var sequence: UInt32
    /// CLOCK_MONOTONIC nanoseconds (the driver's timestamp when it is monotonic, else the dequeue time).
    var timestamp: UInt64
    var isError: Bool
}

/// An open V4L2 node, through libv4l2 without its format emulation. The only file in this module that
/// speaks ioctl; everything else sees Swift values.
final class V4L2Device {
    let path: String
    private(set) var fd: Int32
    /// Whether capture uses the multi-planar API.
    private(set) var multiplanar = false
    private var mapped: [[MappedPlane]] = []
    private var planeViews: [UnsafeRawBufferPointer] = {
        var views: [UnsafeRawBufferPointer] = []
        views.reserveCapacity(PlaneFigures.capacity)
        return views
    }()
    private var streaming = false

    /// Opens `path` non-blocking and checks it captures video.
    init(path: String) throws(CameraError) {
        self.path = path
        let raw = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard raw >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENODEV, ENXIO: throw .notFound(path: path)
            case EACCES, EPERM: throw .permissionDenied(path: path)
            case EBUSY: throw .busy(path: path)
            default: throw .systemCall(SystemCallError("open", path: path, code: code))
            }
        }
        // libv4l2 takes ownership of the fd; V4L2_DISABLE_CONVERSION keeps only the camera's own formats.
        guard camo_v4l2_fd_open_without_conversion(raw) >= 0 else {
            let code = errno
            close(raw)
            throw .notACaptureDevice(path: path, detail: "libv4l2 refused it: \(SystemCallError.message(code))")
        }
        fd = raw
        let capability: v4l2_capability
        do {
            capability = try queryCapability()
        } catch {
            v4l2_close(fd)
            fd = -1
            if case .systemCall(let failure) = error, failure.code == ENOTTY || failure.code == EINVAL {
                throw .notACaptureDevice(path: path, detail: "it does not answer VIDIOC_QUERYCAP")
            }
            throw error
        }
        let caps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
            ? capability.device_caps : capability.capabilities
        if caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 {
            multiplanar = false
        } else if caps & UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0 {
            multiplanar = true
        } else {
            v4l2_close(fd)
            fd = -1
            throw .notACaptureDevice(path: path, detail: "capabilities 0x\(String(caps, radix: 16)) have no video capture")
        }
        guard caps & UInt32(V4L2_CAP_STREAMING) != 0 else {
            v4l2_close(fd)
            fd = -1
            throw .notACaptureDevice(path: path, detail: "it cannot stream (no V4L2_CAP_STREAMING)")
        }
        identity = (Self.string(capability.card), Self.string(capability.bus_info), Self.string(capability.driver))
    }

    /// card, bus_info, driver as QUERYCAP reported them.
    private(set) var identity: (card: String, busInfo: String, driver: String) = ("", "", "")

    deinit {
        closeDevice()
    }

    /// Stops streaming, unmaps and closes; safe to call twice. Close at once on errors: with a stale fd open,
    /// a replugged camera gets a new node name.
    func closeDevice() {
        guard fd >= 0 else { return }
        if streaming {
            var type = bufferType
            _ = camo_v4l2_ioctl(fd, CAMO_VIDIOC_STREAMOFF, &type)
            streaming = false
        }
        unmapAll()
        v4l2_close(fd)
        fd = -1
    }

    var bufferType: UInt32 {
        multiplanar ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue : V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    }

    // MARK: ioctl

    /// `v4l2_ioctl`, retrying EINTR; throws with the call's name.
    private func ioctl<T>(_ request: UInt, _ name: String, _ argument: inout T) throws(CameraError) {
        while true {
            let result = withUnsafeMutablePointer(to: &argument) { camo_v4l2_ioctl(fd, request, $0) }
            if result >= 0 { return }
            let code = errno
            if code == EINTR { continue }
            if code == ENODEV { throw .disconnected(path: path) }
            throw .systemCall(SystemCallError(name, path: path, code: code))
        }
    }

    /// Like ``ioctl(_:_:_:)`` but returns false on EINVAL (the end of an enumeration).
    private func enumerate<T>(_ request: UInt, _ name: String, _ argument: inout T) throws(CameraError) -> Bool {
        do {
            try ioctl(request, name, &argument)
            return true
        } catch {
            if case .systemCall(let failure) = error, failure.code == EINVAL || failure.code == ENOTTY { return false }
            throw error
        }
    }

    private func queryCapability() throws(CameraError) -> v4l2_capability {
        var capability = v4l2_capability()
        try ioctl(CAMO_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", &capability)
        return capability
    }

    // MARK: Formats

    /// Every format with its frame sizes and, per size, its frame intervals.
    func formats() throws(CameraError) -> [CameraFormat] {
        var result: [CameraFormat] = []
        var index: UInt32 = 0
        while true {
            var description = v4l2_fmtdesc()
            description.index = index
            description.type = bufferType
            guard try enumerate(CAMO_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", &description) else { break }
            index += 1
            let fourcc = FourCC(rawValue: description.pixelformat)
            // Through the single-planar API (also what libv4l2's mplane plugin presents), a format whose planes
            // live in separate buffers (NM12, YM12, ...) cannot be captured: leave it out.
            if !multiplanar && fourcc.bufferCount > 1 { continue }
            let compressed = description.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0
            result.append(CameraFormat(
                fourcc: fourcc, name: Self.string(description.description), isCompressed: compressed,
                sizes: try frameSizes(fourcc)))
            if index > 512 { break }
        }
        return result
    }

    private func frameSizes(_ fourcc: FourCC) throws(CameraError) -> [CameraFrameSize] {
        var sizes: [CameraFrameSize] = []
        var index: UInt32 = 0
        while index < 256 {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourcc.rawValue
            guard try enumerate(CAMO_VIDIOC_ENUM_FRAMESIZES, "VIDIOC_ENUM_FRAMESIZES", &size) else { break }
            index += 1
            switch size.type {
            case V4L2_FRMSIZE_TYPE_DISCRETE.rawValue:
                let w = Int(size.discrete.width), h = Int(size.discrete.height)
                sizes.append(.discrete(width: w, height: h, intervals: try frameIntervals(fourcc, w, h)))
            default:
                let s = size.stepwise
                let range = CameraFrameSize.Stepwise(
                    minWidth: Int(s.min_width), maxWidth: Int(s.max_width), stepWidth: max(1, Int(s.step_width)),
                    minHeight: Int(s.min_height), maxHeight: Int(s.max_height), stepHeight: max(1, Int(s.step_height)))
                sizes.append(.stepwise(range))
                return sizes
            }
        }
        return sizes
    }

    /// The intervals for one discrete size; empty when the driver does not enumerate them.
    func frameIntervals(_ fourcc: FourCC, _ width: Int, _ height: Int) throws(CameraError) -> [CameraFrameInterval] {
        var intervals: [CameraFrameInterval] = []
        var index: UInt32 = 0
        while index < 256 {
            var interval = v4l2_frmivalenum()
            interval.index = index
            interval.pixel_format = fourcc.rawValue
            interval.width = UInt32(width)
            interval.height = UInt32(height)
            guard try enumerate(CAMO_VIDIOC_ENUM_FRAMEINTERVALS, "VIDIOC_ENUM_FRAMEINTERVALS", &interval) else { break }
            index += 1
            switch interval.type {
            case V4L2_FRMIVAL_TYPE_DISCRETE.rawValue:
                let d = interval.discrete
                if d.numerator > 0 && d.denominator > 0 {
                    intervals.append(.discrete(Fraction(Int(d.numerator), Int(d.denominator))))
                }
            default:
                let s = interval.stepwise
                intervals.append(.range(
                    min: Fraction(Int(s.min.numerator), Int(max(1, s.min.denominator))),
                    max: Fraction(Int(s.max.numerator), Int(max(1, s.max.denominator)))))
                return intervals
            }
        }
        return intervals
    }

    /// The frame interval the driver uses now (G_PARM), nil when it does not say.
    func currentInterval() -> Fraction? {
        var parm = v4l2_streamparm()
        parm.type = bufferType
        guard (try? ioctl(CAMO_VIDIOC_G_PARM, "VIDIOC_G_PARM", &parm)) != nil else { return nil }
        let t = parm.parm.capture.timeperframe
        guard t.numerator > 0, t.denominator > 0 else { return nil }
        return Fraction(Int(t.numerator), Int(t.denominator))
    }

    /// Asks for `interval` with S_PARM and returns what the driver chose (nil when it cannot say).
    func setInterval(_ interval: Fraction) throws(CameraError) -> Fraction? {
        var parm = v4l2_streamparm()
        parm.type = bufferType
        parm.parm.capture.timeperframe.numerator = UInt32(interval.numerator)
        parm.parm.capture.timeperframe.denominator = UInt32(interval.denominator)
        do {
            try ioctl(CAMO_VIDIOC_S_PARM, "VIDIOC_S_PARM", &parm)
        } catch {
            if case .systemCall(let failure) = error, failure.code == ENOTTY || failure.code == EINVAL { return currentInterval() }
            throw error
        }
        let t = parm.parm.capture.timeperframe
        guard t.numerator > 0, t.denominator > 0 else { return currentInterval() }
        return Fraction(Int(t.numerator), Int(t.denominator))
    }

    /// Sets the format (S_FMT) and returns what the driver applied, with the colorimetry it reports.
    func setFormat(_ fourcc: FourCC, width: Int, height: Int) throws(CameraError) -> CaptureLayout {
        var format = v4l2_format()
        format.type = bufferType
        if multiplanar {
            format.fmt.pix_mp.width = UInt32(width)
            format.fmt.pix_mp.height = UInt32(height)
            format.fmt.pix_mp.pixelformat = fourcc.rawValue
            format.fmt.pix_mp.field = V4L2_FIELD_NONE.rawValue
        } else {
            format.fmt.pix.width = UInt32(width)
            format.fmt.pix.height = UInt32(height)
            format.fmt.pix.pixelformat = fourcc.rawValue
            format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        }
        try ioctl(CAMO_VIDIOC_S_FMT, "VIDIOC_S_FMT", &format)
        return layout(of: format)
    }

    /// The current format (G_FMT).
    func getFormat() throws(CameraError) -> CaptureLayout {
        var format = v4l2_format()
        format.type = bufferType
        try ioctl(CAMO_VIDIOC_G_FMT, "VIDIOC_G_FMT", &format)
        return layout(of: format)
    }

    private func layout(of format: v4l2_format) -> CaptureLayout {
        if multiplanar {
            let mp = format.fmt.pix_mp
            let count = Int(min(mp.num_planes, 8))
            let planes = withUnsafeBytes(of: mp.plane_fmt) { raw in
                let typed = raw.bindMemory(to: v4l2_plane_pix_format.self)
                return (0..<count).map { PlaneLayout(bytesPerLine: Int(typed[$0].bytesperline), sizeImage: Int(typed[$0].sizeimage)) }
            }
            let fourcc = FourCC(rawValue: mp.pixelformat)
            return CaptureLayout(
                format: fourcc, width: Int(mp.width), height: Int(mp.height), planes: planes,
                colorimetry: Colorimetry(
                    v4l2Colorspace: mp.colorspace, ycbcrEnc: UInt32(mp.ycbcr_enc), quantization: UInt32(mp.quantization),
                    isYUV: fourcc.isYUV))
        }
        let pix = format.fmt.pix
        let fourcc = FourCC(rawValue: pix.pixelformat)
        return CaptureLayout(
            format: fourcc, width: Int(pix.width), height: Int(pix.height),
            planes: [PlaneLayout(bytesPerLine: Int(pix.bytesperline), sizeImage: Int(pix.sizeimage))],
            colorimetry: Colorimetry(
                v4l2Colorspace: pix.colorspace, ycbcrEnc: pix.ycbcr_enc, quantization: pix.quantization, isYUV: fourcc.isYUV))
    }

    // MARK: Streaming

    /// Requests `count` mmap buffers, maps them, queues them all and starts streaming. Returns the ring size.
    func startStreaming(bufferCount count: Int) throws(CameraError) -> Int {
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = bufferType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(CAMO_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &request)
        guard request.count >= 2 else {
            throw .systemCall(SystemCallError("VIDIOC_REQBUFS (got \(request.count) buffers)", path: path, code: ENOMEM))
        }
        for index in 0..<Int(request.count) {
            var planes = [v4l2_plane](repeating: v4l2_plane(), count: Int(VIDEO_MAX_PLANES))
            var buffer = v4l2_buffer()
            buffer.index = UInt32(index)
            buffer.type = bufferType
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            let ring: [MappedPlane] = try planes.withUnsafeMutableBufferPointer { planePointer throws(CameraError) in
                if multiplanar {
                    buffer.m.planes = planePointer.baseAddress
                    buffer.length = UInt32(VIDEO_MAX_PLANES)
                }
                try ioctl(CAMO_VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buffer)
                var mappedPlanes: [MappedPlane] = []
                if multiplanar {
                    for plane in 0..<Int(buffer.length) {
                        let p = planePointer[plane]
                        mappedPlanes.append(try map(length: Int(p.length), offset: Int64(p.m.mem_offset)))
                    }
                } else {
                    mappedPlanes.append(try map(length: Int(buffer.length), offset: Int64(buffer.m.offset)))
                }
                return mappedPlanes
            }
            mapped.append(ring)
            try queue(index: index, scratch: &planes)
        }
        var type = bufferType
        try ioctl(CAMO_VIDIOC_STREAMON, "VIDIOC_STREAMON", &type)
        streaming = true
        return mapped.count
    }

    private func map(length: Int, offset: Int64) throws(CameraError) -> MappedPlane {
        guard let address = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset),
              address != MAP_FAILED
        else {
            throw .systemCall(SystemCallError("mmap", path: path, code: errno))
        }
        return MappedPlane(address: address, length: length)
    }

    /// Stops streaming and frees the buffers (so the format can change).
    func stopStreaming() {
        guard fd >= 0 else { return }
        if streaming {
            var type = bufferType
            _ = camo_v4l2_ioctl(fd, CAMO_VIDIOC_STREAMOFF, &type)
            streaming = false
        }
        unmapAll()
        var request = v4l2_requestbuffers()
        request.count = 0
        request.type = bufferType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        _ = camo_v4l2_ioctl(fd, CAMO_VIDIOC_REQBUFS, &request)
    }

    private func unmapAll() {
        for ring in mapped {
            for plane in ring { v4l2_munmap(plane.address, plane.length) }
        }
        mapped.removeAll()
    }

    /// Gives buffer `index` back to the driver. `planes` is the caller's scratch (no allocation per frame).
    func queue(index: Int, scratch planes: inout [v4l2_plane]) throws(CameraError) {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = bufferType
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        try planes.withUnsafeMutableBufferPointer { planePointer throws(CameraError) in
            if multiplanar {
                buffer.m.planes = planePointer.baseAddress
                buffer.length = UInt32(mapped.isEmpty ? 1 : max(1, mapped[min(index, mapped.count - 1)].count))
            }
            try ioctl(CAMO_VIDIOC_QBUF, "VIDIOC_QBUF", &buffer)
        }
    }

    /// Waits up to `timeoutMilliseconds` for a frame. nil on timeout; throws `.disconnected` on POLLERR/POLLHUP.
    func waitForFrame(timeoutMilliseconds: Int32) throws(CameraError) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN | POLLPRI), revents: 0)
        while true {
            let result = poll(&descriptor, 1, timeoutMilliseconds)
            if result < 0 {
                if errno == EINTR { continue }
                throw .systemCall(SystemCallError("poll", path: path, code: errno))
            }
            if result == 0 { return false }
            if descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                throw .disconnected(path: path)
            }
            return descriptor.revents & Int16(POLLIN) != 0
        }
    }

    /// Dequeues one filled buffer; nil when none is ready (EAGAIN).
    func dequeue(scratch planes: inout [v4l2_plane]) throws(CameraError) -> DequeuedBuffer? {
        var buffer = v4l2_buffer()
        buffer.type = bufferType
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        let outcome: Int32 = planes.withUnsafeMutableBufferPointer { planePointer in
            if multiplanar {
                buffer.m.planes = planePointer.baseAddress
                buffer.length = UInt32(planePointer.count)
            }
            while true {
                if camo_v4l2_ioctl(fd, CAMO_VIDIOC_DQBUF, &buffer) >= 0 { return 0 }
                if errno != EINTR { return errno }
            }
        }
        switch outcome {
        case 0: break
        case EAGAIN: return nil
        case ENODEV, EINVAL, EIO:
            // A blocked DQBUF on an unplugged vivid returns EINVAL; a USB camera gives ENODEV or EIO.
            throw .disconnected(path: path)
        default:
            throw .systemCall(SystemCallError("VIDIOC_DQBUF", path: path, code: outcome))
        }
        var used = PlaneFigures()
        var offsets = PlaneFigures()
        if multiplanar {
            for plane in 0..<min(Int(buffer.length), PlaneFigures.capacity) {
                used.append(Int(planes[plane].bytesused))
                offsets.append(Int(planes[plane].data_offset))
            }
        } else {
            used.append(Int(buffer.bytesused))
            offsets.append(0)
        }
        let monotonic = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        let stamp = UInt64(buffer.timestamp.tv_sec) * 1_000_000_000 + UInt64(buffer.timestamp.tv_usec) * 1_000
        return DequeuedBuffer(
            index: Int(buffer.index), bytesUsed: used, dataOffset: offsets, sequence: buffer.sequence,
            timestamp: monotonic && stamp > 0 ? stamp : Self.monotonicNow(),
            isError: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
    }

    /// Runs `body` with the payload of a dequeued buffer, one read-only buffer per plane.
    func withPlanes<R>(_ dequeued: DequeuedBuffer, _ body: ([UnsafeRawBufferPointer]) throws -> R) rethrows -> R {
        let ring = mapped[dequeued.index]
        // One array kept across frames: emptied, refilled and lent to `body`, so a frame allocates nothing.
        planeViews.removeAll(keepingCapacity: true)
        for (index, plane) in ring.enumerated() {
            let offset = min(dequeued.dataOffset[safe: index] ?? 0, plane.length)
            let used = min(dequeued.bytesUsed[safe: index] ?? plane.length, plane.length)
            let start = min(offset, used)
            planeViews.append(UnsafeRawBufferPointer(start: plane.address + start, count: used - start))
        }
        return try body(planeViews)
    }

    // MARK: Controls

    /// Every user-visible control (skipping disabled ones, class headings, arrays and compound controls), with its
    /// menu entries, from `VIDIOC_QUERY_EXT_CTRL` (`VIDIOC_QUERYCTRL` for a driver without it).
    func controls() throws(CameraError) -> [CameraControl] {
        var result: [CameraControl] = []
        var query = v4l2_query_ext_ctrl()
        query.id = UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
        var extended = true
        while result.count < 512 {
            guard try enumerate(CAMO_VIDIOC_QUERY_EXT_CTRL, "VIDIOC_QUERY_EXT_CTRL", &query) else {
                if result.isEmpty, query.id == UInt32(V4L2_CTRL_FLAG_NEXT_CTRL) { extended = false }
                break
            }
            defer { query.id |= UInt32(V4L2_CTRL_FLAG_NEXT_CTRL) }
            if query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 || query.nr_of_dims > 0 { continue }
            guard let kind = CameraControl.Kind(v4l2Type: query.type) else { continue }
            result.append(control(id: query.id, name: Self.string(query.name), kind: kind, minimum: Int(query.minimum),
                                  maximum: Int(query.maximum), step: Int(clamping: query.step), defaultValue: Int(query.default_value),
                                  flags: query.flags))
        }
        if extended { return result }
        var old = v4l2_queryctrl()
        old.id = UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
        while result.count < 512 {
            guard try enumerate(CAMO_VIDIOC_QUERYCTRL, "VIDIOC_QUERYCTRL", &old) else { break }
            defer { old.id |= UInt32(V4L2_CTRL_FLAG_NEXT_CTRL) }
            if old.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 { continue }
            guard let kind = CameraControl.Kind(v4l2Type: old.type) else { continue }
            result.append(control(id: old.id, name: Self.string(old.name), kind: kind, minimum: Int(old.minimum),
                                  maximum: Int(old.maximum), step: Int(old.step), defaultValue: Int(old.default_value), flags: old.flags))
        }
        return result
    }

    /// One control's description with its current value and menu.
    private func control(id: UInt32, name: String, kind: CameraControl.Kind, minimum: Int, maximum: Int, step: Int,
                         defaultValue: Int, flags: UInt32) -> CameraControl {
        var menu: [CameraControl.MenuItem] = []
        if kind == .menu || kind == .integerMenu {
            menu = menuItems(id: id, kind: kind, minimum: minimum, maximum: maximum)
        }
        var value: Int?
        if kind != .button, flags & UInt32(V4L2_CTRL_FLAG_WRITE_ONLY) == 0 {
            var control = v4l2_control(id: id, value: 0)
            if (try? ioctl(CAMO_VIDIOC_G_CTRL, "VIDIOC_G_CTRL", &control)) != nil { value = Int(control.value) }
        }
        return CameraControl(
            id: id, name: CameraControl.normalizedName(name), label: name, kind: kind, minimum: minimum, maximum: maximum,
            step: step, defaultValue: defaultValue, value: value,
            isReadOnly: flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0, isInactive: flags & UInt32(V4L2_CTRL_FLAG_INACTIVE) != 0,
            menu: menu)
    }

    private func menuItems(id: UInt32, kind: CameraControl.Kind, minimum: Int, maximum: Int) -> [CameraControl.MenuItem] {
        guard minimum >= 0, maximum >= minimum, maximum - minimum < 256 else { return [] }
        var items: [CameraControl.MenuItem] = []
        for index in minimum...maximum {
            var item = v4l2_querymenu()
            item.id = id
            item.index = UInt32(index)
            guard (try? ioctl(CAMO_VIDIOC_QUERYMENU, "VIDIOC_QUERYMENU", &item)) != nil else { continue }
            let name = kind == .integerMenu ? String(item.value) : Self.string(item.name)
            items.append(CameraControl.MenuItem(value: index, name: name))
        }
        return items
    }

    /// Sets control `id` and returns the value the driver reports afterwards.
    func setControl(id: UInt32, value: Int) throws(CameraError) -> Int {
        var control = v4l2_control(id: id, value: Int32(clamping: value))
        try ioctl(CAMO_VIDIOC_S_CTRL, "VIDIOC_S_CTRL", &control)
        var readBack = v4l2_control(id: id, value: 0)
        if (try? ioctl(CAMO_VIDIOC_G_CTRL, "VIDIOC_G_CTRL", &readBack)) != nil { return Int(readBack.value) }
        return Int(control.value)
    }

    // MARK: Helpers

    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

/// The per-plane array DQBUF fills for a multi-planar buffer, kept between frames (no allocation per frame).
struct V4L2PlaneScratch {
    var planes = [v4l2_plane](repeating: v4l2_plane(), count: Int(VIDEO_MAX_PLANES))
}

/// Up to eight per-plane numbers (VIDEO_MAX_PLANES) stored inline, so a dequeued buffer carries them without a heap
/// allocation.
struct PlaneFigures {
    static let capacity = 8
    private var storage = InlineArray<8, Int>(repeating: 0)
    private(set) var count = 0

    mutating func append(_ value: Int) {
        guard count < Self.capacity else { return }
        storage[count] = value
        count += 1
    }

    /// The value for plane `index`, nil beyond the planes recorded.
    subscript(safe index: Int) -> Int? { index >= 0 && index < count ? storage[index] : nil }
}
