import CamoCapture
import Foundation
import Testing

/// USB details come from sysfs; the tree here is laid out as the kernel lays out a UVC camera's
/// (`/sys/class/video4linux/video0/device` links to the USB interface, whose parent holds the descriptors).
@Suite("Camera identity")
struct CameraIdentityTests {
    func makeTree() throws -> String {
        let root = NSTemporaryDirectory() + "camo-sysfs-\(UUID().uuidString)"
        let fm = FileManager.default
        let usbDevice = root + "/devices/pci0000:00/0000:00:14.0/usb1/1-1"
        let interface = usbDevice + "/1-1:1.0"
        try fm.createDirectory(atPath: interface, withIntermediateDirectories: true)
        for (name, value) in [("idVendor", "046d\n"), ("idProduct", "082d\n"), ("serial", "ABC123\n"),
                              ("manufacturer", "Logitech\n"), ("product", "HD Pro Webcam C920\n")] {
            try value.write(toFile: usbDevice + "/" + name, atomically: true, encoding: .utf8)
        }
        try fm.createDirectory(atPath: root + "/class/video4linux/video0", withIntermediateDirectories: true)
        try fm.createSymbolicLink(
            atPath: root + "/class/video4linux/video0/device",
            withDestinationPath: "../../../devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0")
        return root
    }

    @Test("USB vendor, product and serial are read from the device above the interface")
    func usbDetails() throws {
        let root = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let info = VideoDeviceInfo(path: "/dev/video0", card: "HD Pro Webcam C920", busInfo: "usb-0000:00:14.0-1", driver: "uvcvideo")
        let identity = CameraIdentity(info, sysfsRoot: root, byIdDirectory: root + "/none")
        #expect(identity.usbVendorId == "046d")
        #expect(identity.usbProductId == "082d")
        #expect(identity.usbSerial == "ABC123")
        #expect(identity.usbManufacturer == "Logitech")
        #expect(identity.helloName == "HD Pro Webcam C920 [046d:082d]")
        #expect(identity.description.contains("serial ABC123"))
    }

    @Test("a platform device (vivid) has no USB details")
    func platform() {
        let info = VideoDeviceInfo(path: "/dev/video0", card: "vivid", busInfo: "platform:vivid-000", driver: "vivid")
        let identity = CameraIdentity(info, sysfsRoot: "/nonexistent", byIdDirectory: "/nonexistent")
        #expect(identity.usbVendorId == nil)
        #expect(identity.helloName == "vivid")
    }

    @Test("the same camera is found again under another node name, by bus position and card or by USB serial")
    func sameCamera() {
        let before = CameraIdentity(path: "/dev/video0", card: "vivid", busInfo: "platform:vivid-000", driver: "vivid")
        var after = before
        after.path = "/dev/video4"
        #expect(before.isSameCamera(as: after))
        var other = before
        other.busInfo = "platform:vivid-001"
        #expect(!before.isSameCamera(as: other))
        var movedUSB = CameraIdentity(path: "/dev/video2", card: "C920", busInfo: "usb-1", driver: "uvcvideo", usbVendorId: "046d", usbProductId: "082d", usbSerial: "X")
        let original = movedUSB
        movedUSB.busInfo = "usb-2"  // plugged into another port
        #expect(original.isSameCamera(as: movedUSB))
    }

    @Test("a missing device path, and a node that is not a capture device, are clear errors")
    func badPaths() {
        let missing = CameraSource(configuration: .init(path: "/dev/camo-no-such-camera"), logger: .init(label: "test"))
        do {
            _ = try missing.probe(size: .hd720)
            Issue.record("a missing device was accepted")
        } catch {
            #expect(error == .notFound(path: "/dev/camo-no-such-camera"))
            #expect(error.description.contains("camo-agent devices"))
        }
        let notCamera = CameraSource(configuration: .init(path: "/dev/null"), logger: .init(label: "test"))
        do {
            _ = try notCamera.probe(size: .hd720)
            Issue.record("/dev/null was accepted as a camera")
        } catch {
            #expect(error.description.contains("not a video capture device"), "\(error)")
        }
    }
}
