import CamoCapture
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fake `/sys/class/leds`: one directory per LED with `brightness`, `max_brightness` and `trigger` files. Plain
/// files keep what is written, so a write reads back as written (the kernel's read back the value it took).
@Suite("Sysfs LED")
struct SysfsLEDTests {
    /// A temporary LED directory with `leds` (name → max_brightness text).
    func makeTree(_ leds: [String: String], trigger: String = "[none] timer heartbeat") throws -> String {
        let root = NSTemporaryDirectory() + "camo-leds-\(UUID().uuidString)"
        for (name, maximum) in leds {
            let directory = root + "/" + name
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try (maximum + "\n").write(toFile: directory + "/max_brightness", atomically: true, encoding: .utf8)
            try "0\n".write(toFile: directory + "/brightness", atomically: true, encoding: .utf8)
            try (trigger + "\n").write(toFile: directory + "/trigger", atomically: true, encoding: .utf8)
        }
        if leds.isEmpty { try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
        return root
    }

    func written(_ root: String, _ name: String, _ file: String = "brightness") -> String? {
        try? String(contentsOfFile: root + "/" + name + "/" + file, encoding: .utf8)
    }

    @Test("opens an LED: its maximum, its brightness, and the list of LEDs")
    func open() throws {
        let root = try makeTree(["camo::status": "255", "input3::capslock": "1"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let led = try SysfsLED(name: "camo::status", root: root)
        #expect(led.maxBrightness == 255)
        #expect(led.path == root + "/camo::status")
        #expect(try led.brightness == 0)
        #expect(SysfsLED.available(root: root) == ["camo::status", "input3::capslock"])
        #expect(SysfsLED.available(root: "/nonexistent/leds") == [])
    }

    @Test("a missing LED is an error naming the path and the LEDs that exist")
    func missing() throws {
        let root = try makeTree(["a::status": "1", "b::power": "1"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            _ = try SysfsLED(name: "x", root: root)
            Issue.record("a missing LED was opened")
        } catch {
            #expect(error == .notFound(path: root + "/x", available: ["a::status", "b::power"]))
            #expect(error.description == "no LED at \(root)/x; there are: a::status, b::power")
        }
        let empty = try makeTree([:])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(throws: SysfsLEDError.notFound(path: empty + "/x", available: [])) { try SysfsLED(name: "x", root: empty) }
        #expect(throws: SysfsLEDError.self) { try SysfsLED(name: "../x", root: empty) }
    }

    @Test("a max_brightness that is missing, garbage or 0 is refused")
    func badMaximum() throws {
        let root = try makeTree(["garbage": "bright", "zero": "0", "nofile": "1"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.removeItem(atPath: root + "/nofile/max_brightness")
        for name in ["garbage", "zero", "nofile"] {
            do {
                _ = try SysfsLED(name: name, root: root)
                Issue.record("\(name) was opened")
            } catch {
                guard case .unreadable(let path, _) = error else { Issue.record("\(name): \(error)"); continue }
                #expect(path == root + "/\(name)/max_brightness")
            }
        }
    }

    @Test("set(brightness:) writes the number; out of range is refused with 0...max and nothing is written")
    func setBrightness() throws {
        let root = try makeTree(["led": "255"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let led = try SysfsLED(name: "led", root: root)
        try led.set(brightness: 200)
        #expect(written(root, "led") == "200")
        #expect(try led.brightness == 200)
        for value in [256, -1] {
            do {
                try led.set(brightness: value)
                Issue.record("\(value) was accepted")
            } catch {
                #expect(error == .outOfRange(path: root + "/led/brightness", value: value, maximum: 255))
                #expect(error.description.contains("0...255"), "\(error)")
            }
        }
        #expect(written(root, "led") == "200")
        try led.setOn(false)
        #expect(written(root, "led") == "0")
        try led.setOn(true)
        #expect(written(root, "led") == "255")
    }

    @Test("levels are a third, two thirds and all of max_brightness, at least 1")
    func levels() throws {
        for (maximum, expected) in [(255, [85, 170, 255]), (100, [33, 67, 100]), (3, [1, 2, 3]), (2, [1, 1, 2]), (1, [1, 1, 1])] {
            #expect(LEDLevel.allCases.map { SysfsLED.brightness(for: $0, maxBrightness: maximum) } == expected, "max \(maximum)")
        }
        let root = try makeTree(["led": "255"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let led = try SysfsLED(name: "led", root: root)
        for (level, value) in [(LEDLevel.low, "85"), (.medium, "170"), (.high, "255")] {
            try led.set(level: level)
            #expect(written(root, "led") == value, "\(level)")
        }
    }

    @Test("the active trigger is the bracketed one; disableTrigger writes none only when one runs")
    func trigger() throws {
        let root = try makeTree(["act": "1"], trigger: "none timer [heartbeat] mmc0")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let led = try SysfsLED(name: "act", root: root)
        #expect(led.activeTrigger == "heartbeat")
        try led.disableTrigger()
        #expect(written(root, "act", "trigger") == "none")
        try "[none] timer heartbeat\n".write(toFile: root + "/act/trigger", atomically: true, encoding: .utf8)
        #expect(led.activeTrigger == nil)
        try FileManager.default.removeItem(atPath: root + "/act/trigger")
        try led.disableTrigger()  // nothing to stop, nothing written
        #expect(!FileManager.default.fileExists(atPath: root + "/act/trigger"))
    }

    @Test("a refused write names the file and says how to allow it")
    func permissionDenied() throws {
        let root = try makeTree(["camo::status": "3"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let led = try SysfsLED(name: "camo::status", root: root)
        // Root may write a read-only file, so the refusal is built as the kernel's would be.
        let denied = SysfsLEDError.writeFailed(.init("open", path: led.path + "/brightness", code: EACCES))
        #expect(denied.description.hasPrefix("cannot write \(led.path)/brightness: Permission denied; "), "\(denied)")
        #expect(denied.description.contains("KERNEL==\"camo::status\""), "\(denied)")
        #expect(denied.description.contains("chgrp camo-agent") && denied.description.contains("or run the agent as root"))
        // A file that cannot be opened at all (the LED went away) is a write failure with the system's reason.
        try FileManager.default.removeItem(atPath: root + "/camo::status")
        do {
            try led.set(level: .high)
            Issue.record("a write to a removed LED succeeded")
        } catch {
            guard case .writeFailed(let failure) = error else { Issue.record("\(error)"); return }
            #expect(failure.code == ENOENT)
            #expect(error.description == "cannot write \(led.path)/brightness: No such file or directory", "\(error)")
        }
    }
}
