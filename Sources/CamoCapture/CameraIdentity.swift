import Foundation

/// Who a camera is: what V4L2 says, plus the USB descriptors from sysfs when it is a USB camera.
/// Used to find the same camera again after it was unplugged (its node name may change).
public struct CameraIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Device node, e.g. `/dev/video0`.
    public var path: String
    /// The card name, e.g. `HD Pro Webcam C920`.
    public var card: String
    /// Where it is attached, e.g. `usb-0000:00:14.0-1` or `platform:vivid-000`.
    public var busInfo: String
    /// The driver, e.g. `uvcvideo`.
    public var driver: String
    /// The stable `/dev/v4l/by-id/...` link to this node, when udev made one.
    public var byIdLink: String?
    /// USB vendor id (4 hex digits), when on USB.
    public var usbVendorId: String?
    /// USB product id (4 hex digits), when on USB.
    public var usbProductId: String?
    /// USB serial number, when the camera has one.
    public var usbSerial: String?
    /// USB manufacturer string.
    public var usbManufacturer: String?
    /// USB product string.
    public var usbProduct: String?

    /// Creates an identity from its parts.
    public init(
        path: String, card: String, busInfo: String, driver: String, byIdLink: String? = nil, usbVendorId: String? = nil,
        usbProductId: String? = nil, usbSerial: String? = nil, usbManufacturer: String? = nil, usbProduct: String? = nil
    ) {
        self.path = path
        self.card = card
        self.busInfo = busInfo
        self.driver = driver
        self.byIdLink = byIdLink
        self.usbVendorId = usbVendorId
        self.usbProductId = usbProductId
        self.usbSerial = usbSerial
        self.usbManufacturer = usbManufacturer
        self.usbProduct = usbProduct
    }

    /// The identity of a probed device, with the sysfs USB details and by-id link filled in.
    public init(_ info: VideoDeviceInfo, sysfsRoot: String = "/sys", byIdDirectory: String = "/dev/v4l/by-id") {
        self.init(path: info.path, card: info.card, busInfo: info.busInfo, driver: info.driver)
        byIdLink = Self.byIdLink(for: info.path, in: byIdDirectory)
        let node = (info.path as NSString).lastPathComponent
        let usb = Self.usbDeviceDirectory(node: node, sysfsRoot: sysfsRoot)
        if let usb {
            usbVendorId = Self.read(usb + "/idVendor")
            usbProductId = Self.read(usb + "/idProduct")
            usbSerial = Self.read(usb + "/serial")
            usbManufacturer = Self.read(usb + "/manufacturer")
            usbProduct = Self.read(usb + "/product")
        }
    }

    /// Whether `other` is the same physical camera: same bus position and card, or the same USB serial.
    public func isSameCamera(as other: CameraIdentity) -> Bool {
        if let serial = usbSerial, !serial.isEmpty, serial == other.usbSerial,
           usbVendorId == other.usbVendorId, usbProductId == other.usbProductId {
            return true
        }
        return busInfo == other.busInfo && card == other.card
    }

    /// `card (path)`, with the USB ids when known, e.g. `HD Pro Webcam C920 [046d:082d serial 1234] (/dev/video0)`.
    public var description: String {
        var text = card
        if let vendor = usbVendorId, let product = usbProductId {
            text += " [\(vendor):\(product)" + (usbSerial.map { " serial \($0)" } ?? "") + "]"
        }
        return text + " (\(path))"
    }

    /// What the studio's hello shows as the camera: the card, with the USB ids when known.
    public var helloName: String {
        var text = card.isEmpty ? path : card
        if let vendor = usbVendorId, let product = usbProductId { text += " [\(vendor):\(product)]" }
        return text
    }

    // MARK: sysfs

    /// The USB device directory (the one holding idVendor) above `/sys/class/video4linux/<node>/device`.
    static func usbDeviceDirectory(node: String, sysfsRoot: String) -> String? {
        let link = sysfsRoot + "/class/video4linux/" + node + "/device"
        guard var directory = try? FileManager.default.destinationOfSymbolicLink(atPath: link) else { return nil }
        if !directory.hasPrefix("/") {
            directory = ((sysfsRoot + "/class/video4linux/" + node) as NSString).appendingPathComponent(directory)
        }
        directory = (directory as NSString).standardizingPath
        // The link names the USB interface (…/1-1:1.0); idVendor lives in its parent, the device.
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: directory + "/idVendor") { return directory }
            directory = (directory as NSString).deletingLastPathComponent
            if directory.count <= 1 { break }
        }
        return nil
    }

    static func byIdLink(for path: String, in directory: String) -> String? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        let resolvedPath = (path as NSString).resolvingSymlinksInPath
        for name in names.sorted() {
            let link = directory + "/" + name
            if (link as NSString).resolvingSymlinksInPath == resolvedPath { return link }
        }
        return nil
    }

    static func read(_ path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
