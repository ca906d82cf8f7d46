import CamoCapture
import Foundation
import Testing

/// Fake `/sys/class/power_supply` trees, laid out as the kernel lays them out: one directory per supply (the kernel's
/// are links to the device; plain directories read the same), one file per attribute, each value ending in a newline.
@Suite("Power source from sysfs")
struct PowerSourceTests {
    /// A temporary power-supply directory; `supplies` maps a supply's name to its attributes.
    func makeTree(_ supplies: [String: [String: String]]) throws -> String {
        let root = NSTemporaryDirectory() + "camo-power-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (name, attributes) in supplies {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            for (attribute, value) in attributes {
                try (value + "\n").write(toFile: root + "/" + name + "/" + attribute, atomically: true, encoding: .utf8)
            }
        }
        return root
    }

    func read(_ supplies: [String: [String: String]]) throws -> PowerSource {
        let root = try makeTree(supplies)
        defer { try? FileManager.default.removeItem(atPath: root) }
        return PowerSource.read(root: root)
    }

    static let laptopBattery = [
        "type": "Battery", "present": "1", "status": "Discharging", "capacity": "15", "scope": "System",
        "technology": "Li-ion",
    ]

    @Test("a laptop on battery: mains offline, the battery at 15 % discharging is a warning")
    func laptopOnBattery() throws {
        let power = try read(["AC": ["type": "Mains", "online": "0"], "BAT0": Self.laptopBattery])
        #expect(power == PowerSource(
            wiredPresent: false, batteryPresent: true, batteryChargeLevel: .warning, batteryPercent: 15,
            chargingState: .discharging, batteries: ["BAT0"]))
        #expect(power.source == .battery)
    }

    @Test("a laptop plugged in: mains online and the battery charging")
    func laptopPluggedIn() throws {
        var battery = Self.laptopBattery
        battery["status"] = "Charging"
        battery["capacity"] = "80"
        let power = try read(["ADP1": ["type": "Mains", "online": "1"], "BAT1": battery])
        #expect(power.wiredPresent && !power.wiredAssumed && power.batteryPresent)
        #expect(power.source == .wired)
        #expect(power.chargingState == .charging)
        #expect(power.batteryChargeLevel == .ok)
        #expect(power.batteryPercent == 80)
    }

    @Test("a USB-C charger counts as wired power (online 1 or 2)")
    func usbCharger() throws {
        var battery = Self.laptopBattery
        battery["status"] = "Not charging"
        let power = try read(["ucsi-source-psy-USBC000:001": ["type": "USB", "online": "2", "usb_type": "C [PD] PD_PPS"], "BAT0": battery])
        #expect(power.wiredPresent)
        #expect(power.chargingState == .notCharging)
    }

    @Test("the level is the worse of capacity_level and the percentage (ACPI and test_power say Normal at 15 %)")
    func capacityLevel() throws {
        for (level, expected) in [("Critical", PowerSource.ChargeLevel.critical), ("Low", .warning), ("Normal", .ok),
                                  ("High", .ok), ("Full", .ok)] {
            var battery = Self.laptopBattery
            battery["capacity_level"] = level
            battery["capacity"] = "50"
            #expect(try read(["BAT0": battery]).batteryChargeLevel == expected, "capacity_level \(level) at 50 %")
        }
        for (percent, expected) in [("15", PowerSource.ChargeLevel.warning), ("3", .critical), ("80", .ok)] {
            var battery = Self.laptopBattery
            battery["capacity_level"] = "Normal"
            battery["capacity"] = percent
            #expect(try read(["BAT0": battery]).batteryChargeLevel == expected, "Normal at \(percent) %")
        }
        // Either alone decides when the other is unknown.
        var noPercent = Self.laptopBattery
        noPercent["capacity"] = nil
        noPercent["capacity_level"] = "Low"
        let lowOnly = try read(["BAT0": noPercent])
        #expect(lowOnly.batteryChargeLevel == .warning && lowOnly.batteryPercent == nil)
    }

    @Test("without capacity_level (or with Unknown), the percentage decides: ≤ 5 critical, ≤ 20 warning, else ok")
    func percentLevels() throws {
        for (percent, expected) in [(0, PowerSource.ChargeLevel.critical), (5, .critical), (6, .warning), (20, .warning),
                                    (21, .ok), (100, .ok)] {
            var battery = Self.laptopBattery
            battery["capacity"] = String(percent)
            battery["capacity_level"] = "Unknown"
            #expect(try read(["BAT0": battery]).batteryChargeLevel == expected, "capacity \(percent)")
            #expect(PowerSource.chargeLevel(percent: percent) == expected)
        }
    }

    @Test("status maps to the charging state; anything else is unknown")
    func statuses() throws {
        for (status, expected) in [("Charging", PowerSource.ChargingState.charging), ("Discharging", .discharging),
                                   ("Full", .full), ("Not charging", .notCharging), ("Unknown", .unknown), ("weird", .unknown)] {
            var battery = Self.laptopBattery
            battery["status"] = status
            #expect(try read(["BAT0": battery]).chargingState == expected, "status \(status)")
        }
    }

    @Test("a peripheral's battery (scope Device) is not the host's: a desktop with a wireless mouse is wired, no battery")
    func peripheralBattery() throws {
        let mouse = ["type": "Battery", "scope": "Device", "present": "1", "capacity": "3", "status": "Discharging",
                     "model_name": "Wireless Mouse"]
        let power = try read(["hidpp_battery_0": mouse, "hid-00:11:22:33:44:55-battery": ["type": "Battery", "scope": "Device"]])
        #expect(power == PowerSource(wiredPresent: true, wiredAssumed: true, batteryPresent: false))
        // Next to a real laptop battery, the mouse's does not count either.
        let laptop = try read(["hidpp_battery_0": mouse, "BAT0": Self.laptopBattery, "AC": ["type": "Mains", "online": "0"]])
        #expect(laptop.batteries == ["BAT0"])
        #expect(laptop.batteryPercent == 15)
    }

    @Test("a battery with present 0 (an empty bay) and a UPS are ignored")
    func absentBatteryAndUPS() throws {
        let power = try read([
            "BAT1": ["type": "Battery", "present": "0"],
            "ups": ["type": "UPS", "online": "0", "capacity": "50", "status": "Discharging"],
        ])
        #expect(power == PowerSource(wiredPresent: true, wiredAssumed: true, batteryPresent: false))
    }

    @Test("no power-supply entries at all (a desktop, a VM), or no directory: wired, assumed, no battery")
    func noEntries() throws {
        let empty = try read([:])
        #expect(empty == PowerSource(wiredPresent: true, wiredAssumed: true, batteryPresent: false))
        #expect(empty.source == .wired)
        #expect(empty.batteryChargeLevel == nil && empty.chargingState == nil && empty.batteryPercent == nil)
        #expect(PowerSource.read(root: "/nonexistent/power_supply") == empty)
        // A mains supply that says it is online is not an assumption.
        let desktop = try read(["ACAD": ["type": "Mains", "online": "1"]])
        #expect(desktop.wiredPresent && !desktop.wiredAssumed)
    }

    @Test("garbage and missing attributes read as unknown, never as a crash")
    func garbage() throws {
        let root = try makeTree([
            "BAT0": ["type": "Battery", "capacity": "lots", "status": "", "capacity_level": "???"],
            "AC": ["type": "Mains", "online": "yes"],
            "notype": ["online": "1"],
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Invalid UTF-8 in an attribute, and a stray file that is not a directory.
        try Data([0xFF, 0xFE, 0x00, 0x31]).write(to: URL(fileURLWithPath: root + "/BAT0/present"))
        try "x".write(toFile: root + "/stray", atomically: true, encoding: .utf8)
        let power = PowerSource.read(root: root)
        #expect(power == PowerSource(
            wiredPresent: false, batteryPresent: true, batteryChargeLevel: nil, batteryPercent: nil, chargingState: .unknown,
            batteries: ["BAT0"]))
    }

    @Test("a charging battery means wired power even when no supply says so")
    func chargingImpliesWired() throws {
        var battery = Self.laptopBattery
        battery["status"] = "Charging"
        let power = try read(["BAT0": battery])
        #expect(power.wiredPresent && !power.wiredAssumed)
    }

    @Test("several batteries: combined by energy when all report it, else percentages averaged; the state of the busiest")
    func severalBatteries() throws {
        let builtIn = ["type": "Battery", "status": "Unknown", "capacity": "100", "energy_now": "20000000", "energy_full": "20000000"]
        let external = ["type": "Battery", "status": "Discharging", "capacity": "10", "capacity_level": "Low",
                        "energy_now": "6000000", "energy_full": "60000000"]
        let byEnergy = try read(["BAT0": builtIn, "BAT1": external])
        #expect(byEnergy.batteries == ["BAT0", "BAT1"])
        #expect(byEnergy.batteryPercent == 33)  // 26 of 80 Wh
        #expect(byEnergy.batteryChargeLevel == .ok)
        #expect(byEnergy.chargingState == .discharging)
        var noEnergy = external
        noEnergy["energy_now"] = nil
        let averaged = try read(["BAT0": builtIn, "BAT1": noEnergy])
        #expect(averaged.batteryPercent == 55)
    }

    @Test("the reading round-trips through JSON")
    func codable() throws {
        let power = PowerSource(
            wiredPresent: false, batteryPresent: true, batteryChargeLevel: .critical, batteryPercent: 3,
            chargingState: .notCharging, batteries: ["BAT0"])
        let data = try JSONEncoder().encode(power)
        #expect(try JSONDecoder().decode(PowerSource.self, from: data) == power)
        #expect(String(decoding: data, as: UTF8.self).contains("\"notCharging\""))
    }
}
