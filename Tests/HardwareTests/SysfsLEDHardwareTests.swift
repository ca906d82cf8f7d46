import CamoCapture
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// SysfsLED against a real LED class device of the guest kernel. Debian's kernel has no uleds (CONFIG_LEDS_USER is
// not set; the uleds test below runs only on a kernel that has it), so the LED comes from hid-led (CONFIG_HID_LED,
// a module): a uhid device with the USB ids of a Greynut Luxafor (04d8:f372) gets 18 LEDs "luxaforN:COLOUR:ledM"
// with max_brightness 255, and every brightness written to one comes back to us as the output report the driver
// sends the device: [0, 1, led + 1, red, green, blue, ...].
@Suite(
    "Sysfs LED on a real kernel LED (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test --filter SysfsLEDHardwareTests"))
struct SysfsLEDHardwareTests {
    /// A vendor-defined collection with one 8-byte output and one 8-byte input report (no report ids): hid-led only
    /// needs a descriptor that parses.
    static let luxaforDescriptor: [UInt8] = [
        0x06, 0x00, 0xFF,  // Usage Page (Vendor Defined 0xFF00)
        0x09, 0x01,  // Usage (1)
        0xA1, 0x01,  // Collection (Application)
        0x15, 0x00, 0x26, 0xFF, 0x00,  //   Logical Minimum (0), Logical Maximum (255)
        0x75, 0x08, 0x95, 0x08,  //   Report Size (8), Report Count (8)
        0x09, 0x01, 0x91, 0x02,  //   Usage (1), Output (Data, Variable, Absolute)
        0x09, 0x01, 0x81, 0x02,  //   Usage (1), Input (Data, Variable, Absolute)
        0xC0,  // End Collection
    ]

    @Test("low, medium, high and off reach the device as 85, 170, 255 and 0; brightness reads them back")
    func levelsReachTheDevice() throws {
        try KernelModule.load("uhid")
        try KernelModule.load("hid-led")
        defer { KernelModule.unload("hid-led") }
        let device = try UHIDDevice(
            name: "camo-test Luxafor", uniq: "camo-test-led", vendor: 0x04D8, product: 0xF372, descriptor: Self.luxaforDescriptor)
        defer { device.destroy() }

        // hid-led registers the LEDs once the kernel added the device (asynchronously).
        var name: String?
        _ = Hardware.wait(seconds: 15) {
            _ = try? device.nextEvent(timeout: 0)  // drain START and the like
            name = SysfsLED.available().first { $0.hasPrefix("luxafor") && $0.hasSuffix(":red:led0") }
            return name != nil
        }
        let ledName = try #require(name, "hid-led made no luxafor LED; LEDs: \(SysfsLED.available()); dmesg: \(dmesgTail())")
        let led = try SysfsLED(name: ledName)
        #expect(led.maxBrightness == 255)
        #expect(led.activeTrigger == nil)

        var seen: [[UInt8]] = []
        let steps: [(level: LEDLevel?, value: Int)] = [(.low, 85), (.medium, 170), (.high, 255), (nil, 0)]
        for (level, value) in steps {
            if let level { try led.set(level: level) } else { try led.setOn(false) }
            // LED 0's report: [report id 0, 1, LED number 1, red, green, blue, 0, 0, 0].
            let report = try device.waitForOutput(timeout: 10, seen: &seen) { $0.count >= 6 && $0[1] == 1 && $0[2] == 1 && Int($0[3]) == value }
            #expect(report != nil, "\(level.map(String.init(describing:)) ?? "off"): no output report with red \(value); seen \(seen)")
            #expect(try led.brightness == value)
        }

        // Out of range is refused before anything reaches the kernel.
        #expect(throws: SysfsLEDError.outOfRange(path: led.path + "/brightness", value: 256, maximum: 255)) {
            try led.set(brightness: 256)
        }
        // Unplugged: the LED is gone, and opening it names what is left.
        device.destroy()
        #expect(Hardware.wait(seconds: 10) { !SysfsLED.available().contains(ledName) }, "\(ledName) outlived its device")
        #expect(throws: SysfsLEDError.self) { try SysfsLED(name: ledName) }
    }

    @Test(
        "uleds: low, medium, high and off reach the LED's owner as 85, 170, 255 and 0",
        .enabled(if: Hardware.isEnabled && KernelModule.exists("uleds"),
                 "needs the uleds module (CONFIG_LEDS_USER), which Debian's kernel does not build"))
    func uledsLevels() throws {
        try KernelModule.load("uleds")
        defer { KernelModule.unload("uleds") }
        let fd = open("/dev/uleds", O_RDWR | O_CLOEXEC | O_NONBLOCK)
        try #require(fd >= 0, "cannot open /dev/uleds: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        // struct uleds_user_dev { char name[64]; int max_brightness; }: the LED lives while the descriptor is open.
        var setup = [UInt8](repeating: 0, count: 68)
        setup.replaceSubrange(0..<17, with: Array("camo-test::status".utf8))
        setup.replaceSubrange(64..<68, with: [255, 0, 0, 0])
        let written = setup.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        try #require(written == 68, "write to /dev/uleds: \(String(cString: strerror(errno)))")

        let led = try SysfsLED(name: "camo-test::status")
        #expect(led.maxBrightness == 255)
        let steps: [(level: LEDLevel?, value: Int32)] = [(.low, 85), (.medium, 170), (.high, 255), (nil, 0)]
        for (level, value) in steps {
            if let level { try led.set(level: level) } else { try led.setOn(false) }
            // Each change is one int on the descriptor.
            var got: Int32?
            _ = Hardware.wait(seconds: 5, every: 0.02) {
                var brightness: Int32 = -1
                if read(fd, &brightness, 4) == 4 { got = brightness }
                return got == value
            }
            #expect(got == value, "\(level.map(String.init(describing:)) ?? "off"): uleds read \(got.map(String.init) ?? "nothing")")
        }
    }

    /// The last kernel messages, for a failure message.
    func dmesgTail() -> String {
        (try? shell("dmesg | tail -n 20"))?.stdout ?? "(no dmesg)"
    }
}
