import CamoCapture
import Foundation
import Testing

// PowerSource against the guest kernel's power-supply class.
//
// Debian's kernel does not build test_power (CONFIG_TEST_POWER is not set), the driver that fakes a laptop's AC and
// battery, so the laptop scenario below is skipped there (it runs on a kernel that has the module). What Debian's
// kernel can show for real is a peripheral's battery: a HID device whose report descriptor has Battery Strength
// (hid-generic, hid-input with CONFIG_HID_BATTERY_STRENGTH=y) gets a power supply "hid-UNIQ-battery" of type Battery
// and scope Device, which is a wireless mouse's battery and not the host's.
@Suite(
    "Power source on the guest kernel (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test --filter PowerSourceHardwareTests"))
struct PowerSourceHardwareTests {
    /// A mouse (three buttons, relative X and Y) with an 8-bit Battery Strength input, 0...100.
    static let mouseWithBattery: [UInt8] = [
        0x05, 0x01, 0x09, 0x02, 0xA1, 0x01,  // Generic Desktop, Mouse, Collection (Application)
        0x09, 0x01, 0xA1, 0x00,  //   Pointer, Collection (Physical)
        0x05, 0x09, 0x19, 0x01, 0x29, 0x03,  //     Buttons 1 to 3
        0x15, 0x00, 0x25, 0x01, 0x95, 0x03, 0x75, 0x01, 0x81, 0x02,  //     3 one-bit inputs
        0x95, 0x01, 0x75, 0x05, 0x81, 0x01,  //     5 bits of padding
        0x05, 0x01, 0x09, 0x30, 0x09, 0x31,  //     X, Y
        0x15, 0x81, 0x25, 0x7F, 0x75, 0x08, 0x95, 0x02, 0x81, 0x06,  //     two relative bytes
        0xC0,  //   End Collection
        0x05, 0x06, 0x09, 0x20,  //   Generic Device Controls, Battery Strength
        0x15, 0x00, 0x26, 0x64, 0x00, 0x75, 0x08, 0x95, 0x01, 0x81, 0x02,  //   one byte, 0 to 100
        0xC0,  // End Collection
    ]

    @Test("a wireless mouse's battery (a real HID power supply, scope Device) changes nothing, and is never queried")
    func peripheralBatteryIsIgnored() throws {
        let before = PowerSource.read()
        print("HW power source of the guest before: \(before)")
        try KernelModule.load("uhid")
        try KernelModule.load("hid-generic")
        let device = try UHIDDevice(
            name: "camo-test wireless mouse", uniq: "camo-test-mouse", vendor: 0x1209, product: 0xCA40,
            descriptor: Self.mouseWithBattery)
        defer { device.destroy() }

        // hid-input registers the battery while the kernel adds the device; the uevent reads its properties, which
        // asks the device (GET_REPORT): nextEvent answers those at once.
        var supply: String?
        _ = Hardware.wait(seconds: 15) {
            _ = try? device.nextEvent(timeout: 0)
            supply = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/power_supply"))?
                .first { $0.hasPrefix("hid-camo-test-mouse-battery") }
            return supply != nil
        }
        let name = try #require(supply, "no hid-camo-test-mouse-battery power supply appeared; dmesg: \(dmesgTail())")
        // The sysfs entry comes before the uevent: answer its queries until the device has been quiet for a second.
        while try device.nextEvent(timeout: 1) != nil {}
        let directory = "/sys/class/power_supply/" + name
        #expect(Self.attribute(directory, "type") == "Battery")
        #expect(Self.attribute(directory, "scope") == "Device")

        // Nothing reads the mouse now, so if PowerSource read its capacity or status the kernel would ask the device
        // and wait for our answer, up to 5 s: a quick read shows that it stopped at type and scope.
        let start = Date()
        let during = PowerSource.read()
        let took = Date().timeIntervalSince(start)
        #expect(took < 2, "PowerSource.read() took \(took) s: did it read the peripheral's capacity?")
        #expect(!during.batteries.contains(name))
        #expect(during == before, "with the mouse: \(during); before: \(before)")
    }

    @Test(
        "test_power's laptop: on battery at 15 % is a warning, at 3 % critical; AC and charging is wired",
        .enabled(if: Hardware.isEnabled && KernelModule.exists("test_power"),
                 "needs the test_power module (CONFIG_TEST_POWER), which Debian's kernel does not build"))
    func testPowerLaptop() throws {
        try KernelModule.load("test_power")
        // Unloading takes 10 s: test_power's exit announces a change and sleeps before it unregisters.
        defer { KernelModule.unload("test_power") }
        func set(_ parameter: String, _ value: String) throws {
            try value.write(toFile: "/sys/module/test_power/parameters/" + parameter, atomically: false, encoding: .utf8)
        }
        // test_usb is online by default, so both supplies go off. test_battery says capacity_level Normal whatever
        // its capacity: the level must come from the percentage.
        try set("usb_online", "off")
        try set("ac_online", "off")
        try set("battery_status", "discharging")
        try set("battery_capacity", "15")
        var power = PowerSource.read()
        #expect(power.batteries == ["test_battery"], "\(power)")
        #expect(power.source == .battery && !power.wiredPresent, "\(power)")
        #expect(power.batteryChargeLevel == .warning && power.batteryPercent == 15, "\(power)")
        #expect(power.chargingState == .discharging, "\(power)")

        try set("battery_capacity", "3")
        power = PowerSource.read()
        #expect(power.batteryChargeLevel == .critical && power.batteryPercent == 3, "\(power)")

        try set("ac_online", "on")
        try set("battery_status", "charging")
        power = PowerSource.read()
        #expect(power.source == .wired && power.wiredPresent && !power.wiredAssumed, "\(power)")
        #expect(power.chargingState == .charging, "\(power)")
    }

    static func attribute(_ directory: String, _ name: String) -> String? {
        (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func dmesgTail() -> String {
        (try? shell("dmesg | tail -n 20"))?.stdout ?? "(no dmesg)"
    }
}
